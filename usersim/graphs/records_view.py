"""A run's records without holding them: a lazy, read-only sequence over the run folder's results.jsonl.

`usersim run` of 10,000 conversations must not keep 10,000 transcripts in memory to print a line per
conversation and decide the exit code. `StoredRecords` knows each record's id, case and status (read
from the store's columns, no record parsed); iterating it parses results.jsonl one line at a time;
indexing or slicing it reads the whole file once and keeps that list (what a caller asking for
`records[3]` wants anyway). A run whose records are in hand when its outputs are written hands
them over: one the runner kept as it stored them (at most graphs.outputs.HOLD_RECORDS), or one small
enough for its report to embed every transcript (reports.html.TRANSCRIPT_LIMIT): they are not
parsed a second time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

from usersim.core.gate import Gate, IdStatus, Tally, decide
from usersim.core.record import RunRecord

Brief = tuple[str, str, str]  # (id, case_id, status)


class StoredRecords(Sequence[RunRecord]):
    """The records of a run folder in plan order, read from RESULTS (results.jsonl) when asked."""

    def __init__(self, results: Path, briefs: list[Brief], parsed: list[RunRecord] | None = None):
        """`parsed`: the records of RESULTS in plan order, already parsed from it (or None)."""
        self.path = Path(results)
        self.briefs = briefs
        self._all: list[RunRecord] | None = parsed

    def __len__(self) -> int:
        return len(self.briefs)

    def __iter__(self) -> Iterator[RunRecord]:
        if self._all is not None:
            yield from self._all
            return
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield RunRecord.model_validate_json(line)

    @overload
    def __getitem__(self, index: int) -> RunRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[RunRecord]: ...

    def __getitem__(self, index: int | slice) -> RunRecord | list[RunRecord]:
        if self._all is None:
            self._all = list(self)
        return self._all[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a view of a file that may change is not hashable

    def __repr__(self) -> str:
        return f"StoredRecords({len(self)} records in {self.path})"

    def statuses(self) -> list[str]:
        """Each record's status, in plan order."""
        return [status for _, _, status in self.briefs]

    def tally(self) -> Tally:
        """How many conversations have each status."""
        return Tally.of(self.statuses())

    def ids_with(self, status: str) -> list[str]:
        """Ids of the records with `status`, in plan order."""
        return [rid for rid, _, s in self.briefs if s == status]

    def gate(
        self, *, strict: bool = False, fail_under: float | None = None, allow_unjudged: bool = False
    ) -> Gate:
        """`core.gate.decide` over the records, from their ids and statuses alone (the only fields the
        gate reads), so no record is parsed."""
        briefs = (IdStatus(rid, s) for rid, _, s in self.briefs)
        return decide(briefs, strict=strict, fail_under=fail_under, allow_unjudged=allow_unjudged)


def gate_of(
    records: Sequence[RunRecord],
    *,
    strict: bool = False,
    fail_under: float | None = None,
    allow_unjudged: bool = False,
) -> Gate:
    """The gate over a run's records: from the briefs of a StoredRecords, else over the records."""
    if isinstance(records, StoredRecords):
        return records.gate(strict=strict, fail_under=fail_under, allow_unjudged=allow_unjudged)
    return decide(records, strict=strict, fail_under=fail_under, allow_unjudged=allow_unjudged)
