"""Static history in OpenAI chat format (as users export it), and the writes in it applied to the
environment before the live turn; through the CLI on the bank example."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

MALFORMED = yaml.safe_load((REPO / "tests/data/import/history/malformed.yaml").read_text(encoding="utf-8"))
CORRECT = "python:examples.bank.agent:correct"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "examples/bank", tmp_path / "bank")
    return tmp_path / "bank"


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def write_case(folder: Path, history: list, message: str, checks: list, cid: str = "HIST-1") -> Path:
    path = folder / "cases" / f"{cid.lower()}.yaml"
    data = {"include": "_suite.yaml", "id": cid, "title": "history in OpenAI format", "mode": "static"}
    data |= {"input": {"history": history, "message": message}, "judging": {"checks": checks}}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


VERIFIED = [
    {"role": "user", "content": "My card K-3004 is lost. I'm C-1004, born 1969-01-30."},
    {"role": "assistant", "content": None, "tool_calls": [call("call_v", "verify_customer", customer_id="C-1004", date_of_birth="1969-01-30")]},
    {"role": "tool", "tool_call_id": "call_v", "content": '{"verified": true, "customer_id": "C-1004", "name": "Tom Becker"}'},
    {"role": "assistant", "content": None, "tool_calls": [call("call_b", "block_card", card_id="K-3004")]},
    {"role": "tool", "tool_call_id": "call_b", "content": '{"card_id": "K-3004", "status": "blocked"}'},
    {"role": "assistant", "content": [{"type": "text", "text": "Your card ending in 5500 is blocked."}]},
]  # fmt: skip


def test_a_write_in_the_history_is_in_the_state_the_live_turn_and_final_state_see(bank, tmp_path):
    path = write_case(
        bank,
        VERIFIED,
        "Thanks. Is it still active?",
        [{"final_state": {"expect": {"cards": [{"card_id": "K-3004", "status": "blocked"}]}}}],
    )
    assert usersim("validate", str(path)).returncode == 0
    out = tmp_path / "run"
    usersim("run", str(path), "--agent", CORRECT, "--out", str(out), "--no-progress", check=False)
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    fs = next(v for v in rec["verdicts"] if v["judge"] == "final_state")
    # blocked by the history, nothing else changed since (strict): the write was applied before the turn
    assert fs["verdict"] == "pass", fs["reason"]
    assert "K-3004 status=blocked" in fs["reason"] and "nothing else changed" in fs["reason"]
    # the history is replayed to the agent in usersim's shape: calls, results named after their call
    hist = rec["transcript"][: len(VERIFIED)]
    assert hist[1]["tool_calls"][0]["arguments"] == {"customer_id": "C-1004", "date_of_birth": "1969-01-30"}
    assert hist[4]["role"] == "tool" and hist[4].get("name") == "block_card"
    assert hist[5]["content"] == "Your card ending in 5500 is blocked."


def test_without_the_history_write_the_same_check_fails(bank, tmp_path):
    # the same case with the block recorded as refused: nothing is applied, the card stays active
    refused = [*VERIFIED[:4], {**VERIFIED[4], "content": "Error: card is frozen by fraud team"}, VERIFIED[5]]
    path = write_case(
        bank, refused, "Is it blocked?", [{"final_state": {"expect": {"cards": [{"card_id": "K-3004", "status": "blocked"}]}}}]
    )  # fmt: skip
    out = tmp_path / "run"
    usersim("run", str(path), "--agent", CORRECT, "--out", str(out), "--no-progress", check=False)
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    fs = next(v for v in rec["verdicts"] if v["judge"] == "final_state")
    assert fs["verdict"] == "fail" and "status=active (expected blocked)" in fs["reason"]


@pytest.mark.parametrize("example", MALFORMED, ids=[m["name"] for m in MALFORMED])
def test_a_malformed_history_names_the_file_the_message_and_the_field(bank, example):
    path = write_case(bank, example["history"], "next", [])
    res = usersim("validate", str(path), check=False)
    assert res.returncode == 2
    text = res.stdout + res.stderr
    assert str(path) in text
    for words in example["says"]:
        assert words in text, (words, text)
