"""Paraphrase corpora (tests/judges/paraphrase/*.yaml): each rewording of a reply is decided as its
original, or unjudged "uncertain" — never the opposite verdict — and at least 98% are decided."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, case, state, user
from usersim.judges.checks import run_check

CORPUS = Path(__file__).parent / "paraphrase"
KINDS = ("keywords", "count", "constraint")
OPPOSITE = {"pass": "fail", "fail": "pass"}


def _groups(kind: str) -> list[dict]:
    return yaml.safe_load((CORPUS / f"{kind}.yaml").read_text(encoding="utf-8"))["groups"]


def _cases() -> list[tuple[str, str, dict, str, str]]:
    out = []
    for kind in KINDS:
        for g in _groups(kind):
            for i, reply in enumerate(g["rewordings"]):
                out.append((kind, f"{g['name']}#{i}", g, reply, g["original"]["verdict"]))
    return out


async def _verdict(spec: dict, user_text: str, reply: str):
    t = [user(user_text), bot(reply)]
    return await run_check(spec, transcript=t, case=case(checks=[spec]), state=state(t))


@pytest.mark.parametrize("kind", KINDS)
def test_corpus_is_large_enough_and_well_formed(kind):
    groups = _groups(kind)
    by_verdict = {"pass": 0, "fail": 0}
    for g in groups:
        assert next(iter(g["check"])) == kind, g["name"]
        by_verdict[g["original"]["verdict"]] += len(g["rewordings"])
    assert by_verdict["pass"] >= 30 and by_verdict["fail"] >= 30, by_verdict


@pytest.mark.parametrize("kind", KINDS)
async def test_originals_are_decided_as_stated(kind):
    for g in _groups(kind):
        v = await _verdict(g["check"], g["user"], g["original"]["reply"])
        assert v.verdict == g["original"]["verdict"], (g["name"], v.reason)


@pytest.mark.parametrize(
    ("kind", "name", "group", "reply", "expected"), _cases(), ids=[c[1] for c in _cases()]
)
async def test_rewording_is_never_decided_the_opposite_way(kind, name, group, reply, expected):
    v = await _verdict(group["check"], group["user"], reply)
    assert v.verdict != OPPOSITE[expected], f"{name}: {v.verdict}: {v.reason}\n{reply}"
    assert v.verdict in (expected, "unjudged"), f"{name}: {v.verdict}: {v.reason}"
    if v.verdict == "unjudged":
        assert v.reason.startswith("uncertain: ") and "[cues: " in v.reason, v.reason


async def test_at_least_98_percent_are_decided_as_the_original():
    cases = _cases()
    decided = 0
    undecided = []
    for _kind, name, group, reply, expected in cases:
        v = await _verdict(group["check"], group["user"], reply)
        if v.verdict == expected:
            decided += 1
        else:
            undecided.append(f"{name}: {v.reason}")
    assert decided / len(cases) >= 0.98, "\n".join(undecided)
