"""Round trip through the CLI: a usersim run exported as OTLP/JSON traces (`usersim otel export`)
and imported back (`usersim import --format otel`) gives static cases that replay the same
conversation — the recorded history up to the last user turn, that turn as the live message — and
whose drafted checks pass the correct bank agent and fail the flawed one."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.support.cli import usersim

BANK = "examples/bank/cases"


def _records(out: Path) -> dict[str, dict]:
    return {r["case_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}


def test_an_exported_run_imports_back_as_cases_that_replay_the_same_conversation(tmp_path):
    run = tmp_path / "run"
    usersim(
        "run", BANK, "--id", "BANK-06", "--id", "BANK-02", "--agent", "python:examples.bank.agent:correct",
        "--out", str(run), "--no-progress",
    )  # fmt: skip
    traces = tmp_path / "traces.jsonl"
    assert "2 trace(s)" in usersim("otel", "export", str(run), "--to", str(traces)).stdout
    imported = tmp_path / "imported"
    usersim(
        "import", str(traces), "--to", str(imported), "--format", "otel",
        "--environment", f"{BANK}/_suite.yaml",
    )  # fmt: skip
    original = _records(run)
    files = sorted(imported.glob("*.yaml"))
    assert len(files) == 2
    for f in files:
        case = yaml.safe_load(f.read_text(encoding="utf-8"))
        source = next(r for cid, r in original.items() if cid in case["id"])
        transcript = source["transcript"]
        last_user = max(i for i, m in enumerate(transcript) if m["role"] == "user")
        history = case["input"]["history"]
        assert [(m["role"], m.get("content") or "") for m in history] == [
            (m["role"], m["content"]) for m in transcript[:last_user]
        ]
        assert case["input"]["message"] == transcript[last_user]["content"]
    verdicts = {}
    for agent in ("correct", "flawed"):
        out = tmp_path / f"replay-{agent}"
        usersim(
            "run", str(imported), "--agent", f"python:examples.bank.agent:{agent}", "--out", str(out),
            "--no-progress", check=False,
        )  # fmt: skip
        verdicts[agent] = {r["case_id"]: r["status"] for r in _records(out).values()}
    assert set(verdicts["correct"].values()) == {"passed"}
    assert set(verdicts["flawed"].values()) == {"failed"}
