"""Counting how many records a piece of code parses (RunRecord.model_validate_json calls)."""

from __future__ import annotations

from usersim.core.record import RunRecord


def count_parses(monkeypatch) -> list[int]:
    """Patch RunRecord.model_validate_json to count its calls; the count is `seen[0]`."""
    seen = [0]
    real = RunRecord.model_validate_json.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):
        seen[0] += 1
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(RunRecord, "model_validate_json", classmethod(counting))
    return seen
