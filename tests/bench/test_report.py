"""README's Performance tables from a bench.json (bench/report.py markdown): every figure a median
with its [min–max], each target marked met / not met / not measured."""

from __future__ import annotations

from bench.report import markdown


def test_tables_give_medians_with_their_spread_and_mark_every_target():
    fig = {"median": 2.5, "min": 2.0, "max": 3.25}
    result = {
        "parts": {
            "whole_process": {"usersim": {"cpu_ms_per_call": fig, "calls_per_conversation": fig}},
            "warm": {"usersim": {"cpu_ms_per_call": {"median": 1.0, "min": 0.9, "max": 1.5}}},
            "concurrency_1s": {
                "usersim": {
                    "one_conversation_s": 11.0,
                    "wall_s": fig,
                    "efficiency": fig,
                    "peak_rss_mb": fig,
                    "process_cpu_s": fig,
                }
            },
        },
        "targets": [
            {"issue": 44, "item": "a", "measured": 2.5, "target": "<= 3", "met": True},
            {"issue": 44, "item": "b", "measured": 1.8, "target": "<= 1.5", "met": False},
            {"issue": 27, "item": "c", "measured": None, "target": ">= 1", "met": None},
        ],
    }
    text = markdown(result)
    usersim_row = next(line for line in text.splitlines() if line.startswith("| usersim (`usersim.arun`"))
    assert "| 2.5 [2–3.25] | 1 [0.9–1.5] |" in usersim_row  # whole process beside warm
    assert "| usersim | 11 | 2.5 [2–3.25] |" in text
    assert "| #44 a | 2.5 | <= 3 | met |" in text
    assert "| #44 b | 1.8 | <= 1.5 | **not met** |" in text
    assert "| #27 c | n/a | >= 1 | not measured |" in text
