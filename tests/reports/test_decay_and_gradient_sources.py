"""The report reads what the long-context and decay engineers' modules produce."""

from __future__ import annotations

import pytest

from usersim.reports.html import render_report
from usersim.reports.long_context import degradation_rate
from usersim.reports.summary import build_summary

from .factory import record


@pytest.mark.parametrize(
    ("scores", "rate"),
    [
        ({"4k": 0.9, "16k": 0.8, "32k": 0.6}, 0.3333),
        ({"4k": 0.0, "32k": 0.5}, None),  # a zero baseline has nothing left to degrade
        ({"4k": 0.5}, None),
        ({"4k": 0.4, "32k": 0.6}, -0.5),  # the long context did better
    ],
)
def test_degradation_rate_is_seed_000s(scores, rate):
    assert degradation_rate(scores) == rate


def test_decay_json_from_the_sweep_renders_curves_breakpoints_and_system(tmp_path):
    from usersim.graphs import decay

    recs = []
    for n, memory, ref in ((3, 1.0, 1.0), (5, 0.4, 1.0), (8, 0.2, 0.0)):
        recs.append(
            record(decay.decay_case_id("memory", n), dimension="MT", score=memory, context_tokens=[100 * n])
        )
        recs.append(record(decay.decay_case_id("reference", n), dimension="MT", score=ref))
    summary = decay.summarize_decay(recs, system={"window_turns": 4, "profile_injection": False})
    (tmp_path / "decay.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")

    out = build_summary([record()], {"run_id": "decay-run"}, run_dir=tmp_path)
    assert out["decay"]["memory_half_life"] == 5 and out["decay"]["reference_fail_point"] == 8
    html = render_report([record()], out)
    assert "Decay: score by conversation length (turns)" in html
    assert "memory: seed 003 expected minimum" in html
    assert "memory half-life (半衰期)" in html and "reference fail point (失效点)" in html
    assert "Decay: agent context tokens by turns" in html
    assert "window_turns" in html and "System configuration measured" in html
    assert '<td>memory_half_life</td><td class="num">5</td>' in html
