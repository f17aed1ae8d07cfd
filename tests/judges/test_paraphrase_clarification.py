"""asked_clarification over its paraphrase corpus (tests/judges/paraphrase/asked_clarification.yaml):
every rewording is decided as its original, or unjudged "uncertain: ...", never the opposite; and
nearly all are decided (an unsure reading is the exception, not the way out)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, case, state, user
from usersim.cases.loader import load_case
from usersim.judges.checks import run_check

CORPUS = Path(__file__).parent / "paraphrase" / "asked_clarification.yaml"
GROUPS = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["groups"]
CASES = Path(__file__).resolve().parents[2] / "usersim" / "cases"
OPPOSITE = {"pass": "fail", "fail": "pass"}


def _decide(group: dict, reply: str) -> list:
    """The verdicts of the group's asked_clarification checks on one reply."""
    if "case" in group:
        path = next(CASES.rglob(f"{group['case']}.yaml"))
        c = load_case(path)
        specs = [s for s in c.judging.checks if "asked_clarification" in s]
        history = list(c.input.history)
        transcript = [*history, user(c.input.message), bot(reply)]
        st = state(transcript, history_len=len(history))
    else:
        specs = [group["check"]]
        c = case(checks=specs)
        transcript = [user(group["user"]), bot(reply)]
        st = state(transcript)
    assert specs, group["name"]
    return [asyncio.run(run_check(s, transcript=transcript, case=c, state=st)) for s in specs]


def _verdict(verdicts: list) -> str:
    kinds = {v.verdict for v in verdicts}
    return "fail" if "fail" in kinds else "unjudged" if "unjudged" in kinds else "pass"


@pytest.mark.parametrize("group", GROUPS, ids=[g["name"] for g in GROUPS])
def test_rewordings_are_decided_as_their_original(group):
    original = group["original"]
    got = _decide(group, original["reply"])
    assert _verdict(got) == original["verdict"], [v.reason for v in got]
    for reply in group["rewordings"]:
        verdicts = _decide(group, reply)
        verdict = _verdict(verdicts)
        reasons = [v.reason for v in verdicts]
        assert verdict != OPPOSITE[original["verdict"]], (reply, reasons)
        assert verdict in (original["verdict"], "unjudged"), (reply, reasons)
        if verdict == "unjudged":
            assert all(v.reason.startswith("uncertain: ") for v in verdicts if v.verdict == "unjudged")
        if verdict == "fail":  # a confident fail names the cue or the missing topic
            assert any("did not ask" in r or "must not ask" in r or "needed" in r for r in reasons), reasons


def test_corpus_is_large_and_mostly_decided():
    by_lang: dict[str, list[str]] = {}
    for group in GROUPS:
        lang = group.get("lang", "zh")
        for reply in group["rewordings"]:
            by_lang.setdefault(lang, []).append(_verdict(_decide(group, reply)))
    for lang, verdicts in by_lang.items():
        assert len(verdicts) >= 30, (lang, len(verdicts))
        decided = sum(v != "unjudged" for v in verdicts) / len(verdicts)
        assert decided >= 0.9, (lang, decided)
