"""Human review: 人工 criteria are queued (`unjudged`, "queued for human review"); review items
are exported from a results.jsonl as JSONL/CSV; labels come back and are applied to the records.

    items = review_items(records)                 # queued 人工 criteria + 20% calibration sample
    write_items(items, "review.csv")
    labels = read_labels("labels.csv")            # record_id, criterion, label (pass/fail/...)
    report = apply_labels(records, labels)        # records updated in place, status re-combined
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.registry import did_you_mean
from usersim.core.verdict import Verdict, combine_score, combine_status
from usersim.core.yamlfile import read_text_file
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.calibration import sample_ids

QUEUED = "queued for human review"
_LABEL_ALIASES = {
    "pass": "pass",
    "passed": "pass",
    "通过": "pass",
    "yes": "pass",
    "1": "pass",
    "true": "pass",
    "p": "pass",
    "fail": "fail",
    "failed": "fail",
    "不通过": "fail",
    "no": "fail",
    "0": "fail",
    "false": "fail",
    "f": "fail",
    "inconclusive": "inconclusive",
    "unsure": "inconclusive",
    "不确定": "inconclusive",
}


def human_criteria(case: Case) -> list[str]:
    """Criteria left to people: judging.human_review, or the whole case when scoring is 人工 only."""
    if case.judging.human_review:
        return list(case.judging.human_review)
    if "human" in case.judging.scoring.methods:
        return [case.judging.scoring.note or f"{case.id}: overall human review"]
    return []


class HumanJudge:
    """Queues 人工 criteria: one `unjudged` verdict each, until a label is imported."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "human"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        return [
            Verdict(judge=self.name, verdict="unjudged", reason=QUEUED, criterion=c)
            for c in human_criteria(case)
        ]


@judge_registry.register("human")
def make_human(config: JudgeConfig) -> HumanJudge:
    """人工 criteria queued for human review (unjudged until labels are imported)."""
    return HumanJudge()


class ReviewItem(BaseModel):
    """One row of a review export; fill `label` (pass / fail / inconclusive) and send it back."""

    model_config = ConfigDict(extra="forbid")

    record_id: str = Field(description="results.jsonl record id.")
    case_id: str = Field(description="Case id.")
    judge: str = Field(description="Judge whose verdict is reviewed (human = queued criterion).")
    criterion: str = Field(description="The criterion to label.")
    verdict: str = Field(description="The current verdict (unjudged for queued items).")
    reason: str = Field(description="The judge's reason.")
    source: Literal["queued", "calibration_sample"] = Field(description="Why the item is in the export.")
    user_message: str = Field(default="", description="Last user message, for context.")
    final_reply: str = Field(default="", description="Last assistant reply, for context.")
    label: str = Field(default="", description="Your label: pass | fail | inconclusive.")
    note: str = Field(default="", description="Optional reviewer note.")


class Label(BaseModel):
    """A human label for one criterion of one record."""

    model_config = ConfigDict(extra="ignore")  # exports carry context columns; only these matter

    record_id: str = Field(description="results.jsonl record id.")
    criterion: str = Field(description="Criterion text, as exported.")
    label: Literal["pass", "fail", "inconclusive"] = Field(description="The human decision.")
    note: str = Field(default="", description="Reviewer note.")

    @field_validator("label", mode="before")
    @classmethod
    def _alias(cls, v: Any) -> Any:
        key = str(v).strip().lower()
        if key not in _LABEL_ALIASES:
            raise ValueError(f"label '{v}' is not pass / fail / inconclusive")
        return _LABEL_ALIASES[key]


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """results.jsonl -> list of record dicts (a RUN_DIR may be given)."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no results.jsonl here (give a run directory or its results.jsonl)")
    records = []
    for n, line in enumerate(read_text_file(p, max_bytes=1 << 36).splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{n}: not valid JSON ({exc.msg})") from None
    return records


def _last(record: dict[str, Any], role: str) -> str:
    msgs = [m for m in record.get("transcript", []) if m.get("role") == role and m.get("content")]
    return msgs[-1]["content"] if msgs else ""


def review_items(
    records: list[dict[str, Any]], *, sample_rate: float = 0.2, salt: str = "review"
) -> list[ReviewItem]:
    """Queued 人工 criteria of every record, plus a deterministic `sample_rate` share of the
    records' LLM-judge verdicts for calibration (seeds 003/004: 20% human re-check)."""
    items: list[ReviewItem] = []
    sampled = set(sample_ids([r["id"] for r in records if _llm_verdicts(r)], rate=sample_rate, salt=salt))
    for r in records:
        ctx = {"user_message": _last(r, "user"), "final_reply": _last(r, "assistant")}
        for v in r.get("verdicts", []):
            queued = v.get("judge") == "human" and v.get("verdict") == "unjudged"
            sample = r["id"] in sampled and v in _llm_verdicts(r)
            if queued or sample:
                items.append(
                    ReviewItem(
                        record_id=r["id"],
                        case_id=r.get("case_id", ""),
                        judge=v.get("judge", ""),
                        criterion=v.get("criterion") or v.get("judge", ""),
                        verdict=v.get("verdict", ""),
                        reason=v.get("reason", ""),
                        source="queued" if queued else "calibration_sample",
                        **ctx,
                    )
                )
    return items


def _llm_verdicts(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        v
        for v in record.get("verdicts", [])
        if v.get("judge") == "llm_rubric"
        and v.get("verdict") in ("pass", "fail", "inconclusive")
        # the informational C1 0-5 score has no pass/fail to label; re-check verdicts do
        and (v.get("counts_toward_status", True) or (v.get("details") or {}).get("recheck"))
    ]


def write_items(items: list[ReviewItem], path: str | Path) -> Path:
    """Write review items as .csv (UTF-8 with BOM so spreadsheets show Chinese) or .jsonl."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() == ".csv":
        with p.open("w", encoding="utf-8-sig", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(ReviewItem.model_fields))
            w.writeheader()
            for it in items:
                w.writerow(it.model_dump())
    else:
        p.write_text(
            "".join(json.dumps(it.model_dump(), ensure_ascii=False) + "\n" for it in items), encoding="utf-8"
        )
    return p


def read_labels(path: str | Path) -> list[Label]:
    """Labels from .csv or .jsonl; rows with an empty label are skipped; errors name file:line."""
    p = Path(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    text = read_text_file(p, max_bytes=1 << 32)  # missing, not UTF-8, unreadable: file:line problems
    if p.suffix.lower() == ".csv":
        rows = [(n, row) for n, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), 2)]
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{p}:{n}: not valid JSON ({exc.msg})") from None
    labels = []
    for n, row in rows:
        if not str(row.get("label") or "").strip():
            continue
        try:
            labels.append(Label.model_validate(row))
        except ValueError as exc:
            first = str(exc).splitlines()
            raise ValueError(f"{p}:{n}: {' '.join(first[1:3]) or first[0]}") from None
    return labels


def apply_labels(records: list[dict[str, Any]], labels: list[Label]) -> dict[str, int]:
    """Apply labels to the records in place: a queued human verdict takes the label as its verdict;
    any other verdict keeps its value and records `details.human_label` (calibration). Status and
    score are re-combined. Raises ValueError for unknown record ids / criteria (did-you-mean)."""
    by_id = {r["id"]: r for r in records}
    counts = {"applied": 0, "calibration": 0}
    for lab in labels:
        rec = by_id.get(lab.record_id)
        if rec is None:
            raise ValueError(
                f"label for unknown record '{lab.record_id}'.{did_you_mean(lab.record_id, set(by_id))}"
            )
        verdicts = rec.get("verdicts", [])
        matches = [v for v in verdicts if (v.get("criterion") or v.get("judge")) == lab.criterion]
        if not matches:
            known = {v.get("criterion") or v.get("judge", "") for v in verdicts}
            raise ValueError(
                f"record '{lab.record_id}' has no verdict for criterion '{lab.criterion}'.{did_you_mean(lab.criterion, known)}"
            )
        target = next((v for v in matches if v.get("judge") == "human"), matches[0])
        if target.get("judge") == "human":
            target["verdict"] = lab.label
            target["reason"] = f"human label: {lab.label}" + (f" — {lab.note}" if lab.note else "")
            counts["applied"] += 1
        else:
            target["details"] = {**(target.get("details") or {}), "human_label": lab.label}
            counts["calibration"] += 1
        parsed = [Verdict.model_validate(v) for v in verdicts]
        rec["status"] = combine_status(parsed)
        rec["score"] = combine_score(parsed)
    return counts
