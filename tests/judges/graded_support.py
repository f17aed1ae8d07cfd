"""Case files built from the graded-score YAML data (tests/judges/data/graded/) and one CLI run
of them with the scripted agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.support.cli import usersim

DATA = Path(__file__).parent / "data" / "graded"


def load(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
    return doc["scenarios"], doc["replies"]


def write_cases(
    files: list[str], folder: Path, only: str | None = None
) -> tuple[dict[str, dict[str, Any]], Path]:
    """One case per reply entry; returns {case id: entry} and the replies file for the agent."""
    folder.mkdir(parents=True, exist_ok=True)
    table, entries = {}, {}
    n = 0
    for name in files:
        scenarios, replies = load(name)
        for entry in replies:
            if only is not None and entry["level"] != only:
                continue
            n += 1
            key = f"g{n}"
            sc = scenarios[entry["scenario"]]
            history = [dict(m) for m in sc.get("history", [])]
            message = sc["message"]
            if history:  # the tag tells the scripted agent which replies are this case's
                history[0]["content"] = f"#{key} " + history[0]["content"]
            else:
                message = f"#{key} {message}"
            grading = {
                "scale": sc["scale"],
                **({"scenario": sc["grading_scenario"]} if "grading_scenario" in sc else {}),
            }
            check = {"turn": 1, **sc["graded"]}
            case = {
                "id": f"GRADED-{n:03d}",
                "dimension": sc.get("dimension", "MT"),
                "category": "CONF" if "conflict" in sc["scale"] else sc["scale"].upper(),
                "title": f"{name} {entry['scenario']} {entry['level']}",
                "mode": "static",
                "input": {"history": history, "message": message, "script": entry.get("user", [])},
                "judging": {
                    "scoring": {"methods": ["auto"]},
                    "grading": grading,
                    "checks": [{"graded": check}],
                },
            }
            (folder / f"{case['id']}.yaml").write_text(
                yaml.safe_dump(case, allow_unicode=True), encoding="utf-8"
            )
            table[key] = {"say": entry["say"], "history_users": sum(m["role"] == "user" for m in history)}
            entries[case["id"]] = entry
    replies = folder.parent / "replies.json"
    replies.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    return entries, replies


def run(
    files: list[str], tmp: Path, *extra: str, only: str | None = None
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Run the cases of FILES (those of level ONLY) through `usersim run` with EXTRA options;
    (entries by case id, records, summary)."""
    entries, replies = write_cases(files, tmp / "cases", only)
    out = tmp / "out"
    res = usersim(
        "run",
        str(tmp / "cases"),
        "--agent",
        "python:tests.judges.graded_agent:respond",
        "--out",
        str(out),
        "--no-progress",
        *extra,
        env={"USERSIM_GRADED_REPLIES": str(replies)},
        check=False,
    )
    if res.returncode not in (0, 1):
        raise AssertionError(f"usersim run exited {res.returncode}\n{res.stdout}\n{res.stderr}")
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return entries, recs, summary


def graded_verdict(record: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in record["verdicts"] if v["judge"] == "graded")
