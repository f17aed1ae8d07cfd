"""`usersim play`: a person in the user's seat, driven in a pseudo-terminal on the bank example.

Each test types what a tester would (their own words, commands, Ctrl-C, Ctrl-D) into
`python -m usersim play` on a real terminal and then reads the stored record: the conversation is
judged like any other, `simulator` says who sat in the seat and every user message says who played
its turn (`by`), the fields `usersim realism` reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import usersim
from tests.support.openai_stub import openai_stub, text  # noqa: F401  (fixture)
from tests.support.pty_session import PtySession

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

CASES = "examples/bank/cases"
CORRECT = "python:examples.bank.agent:correct"


def play(out: Path, *extra: str, case: str = "BANK-01", agent: str = CORRECT) -> PtySession:
    return PtySession("play", case, "--cases", CASES, "--agent", agent, "--out", str(out), *extra)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def user_turns(record: dict) -> list[tuple[int, str, str]]:
    return [(m["turn"], m["by"], m["content"]) for m in record["transcript"] if m["role"] == "user"]


def verdict(record: dict, judge: str) -> dict:
    return next(v for v in record["verdicts"] if v["judge"] == judge)


def test_a_person_plays_the_whole_conversation_and_it_is_judged_pass_against_the_correct_agent(tmp_path):
    out = tmp_path / "human"
    s = play(out)
    card = s.type("hello, I lost my debit card on the bus, please block it")
    # the persona card and the goal, before the first word
    assert "You are Dana Whitfield (en)" in card and "Goal: Get the lost debit card blocked." in card
    assert 'required: card_blocked - delivered when the agent says "is now blocked"' in card
    assert "customer ID: C-1001" in card and "date of birth: 1985-03-14" in card
    assert "you play every user turn" in card and "/hand-back" in card
    s.type("sure, it's C-1001")
    s.type("1985-03-14")
    due = s.type("yes please go ahead")
    # a scripted persona event whose trigger the agent just said is put in front of the person
    assert '(scripted event due) when the agent says "shall i go ahead": say: "Yes, please block it' in due
    shown = s.type("/done thanks, that's all")
    # after the agent's turn: the tool it called with its arguments and result, and the row it changed
    assert 'tool block_card(card_id="K-3001")' in shown and '"status": "blocked"' in shown
    assert "state changed:\n    cards K-3001: status active -> blocked" in shown
    assert "agent> Your card ending in 4242 is now blocked." in shown
    assert s.wait() == 0, s.screen
    assert "BANK-01|r0" in s.screen and "passed" in s.screen
    (rec,) = records(out)
    assert rec["status"] == "passed" and rec["simulator"] == "human" and rec["schema_version"] == 4
    assert rec["stop"]["reason"] == "goal_met" and "(/done)" in rec["stop"]["detail"]
    turns = user_turns(rec)
    assert [t[1] for t in turns] == ["human"] * 5
    assert turns[0][2] == "hello, I lost my debit card on the bus, please block it"
    assert turns[-1][2] == "thanks, that's all"  # the words after /done are the last message
    assert verdict(rec, "final_state")["verdict"] == "pass"
    assert verdict(rec, "task_completion")["verdict"] == "pass"
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "played by the person" in html and "person: turns 1-5" in html


def test_the_same_judges_fail_the_flawed_agent_when_a_person_plays(tmp_path):
    out = tmp_path / "flawed"
    s = play(out, case="BANK-02", agent="python:examples.bank.agent:flawed")
    s.type("C-1003, born 1978-07-21")
    shown = s.type("yes")  # a hurried person accepts the agent's wrong card
    assert "agent> I will block your card ending in 1111. Shall I go ahead?" in shown
    shown = s.type("/done")
    assert "cards K-3002: status active -> blocked" in shown
    assert s.wait() == 1, s.screen
    (rec,) = records(out)
    assert rec["status"] == "failed" and rec["blame"] == "agent" and rec["simulator"] == "human"
    assert "cards K-3003: status=active (expected blocked)" in verdict(rec, "final_state")["reason"]


def test_take_over_2_lets_the_rule_simulator_play_turn_1_then_the_person(tmp_path):
    out = tmp_path / "shared"
    s = play(out, "--take-over", "2")
    before = s.type("C-1001")
    assert "rule plays turn 1, you from turn 2" in before
    assert "[turn 1] rule> Hi, I lost my debit card this morning. Can you block it, please?" in before
    assert "agent> Could you please provide your customer ID?" in before
    assert "--- you take the user's seat at turn 2 ---" in before
    s.type("my birthday is 1985-03-14")
    s.type("yes")
    s.type("/done")
    assert s.wait() == 0, s.screen
    (rec,) = records(out)
    assert rec["simulator"] == "human+rule" and rec["status"] == "passed"
    assert [(t, by) for t, by, _ in user_turns(rec)] == [
        (1, "simulator"),
        (2, "human"),
        (3, "human"),
        (4, "human"),
    ]
    seat = [e for e in rec["sim_events"] if e["kind"] == "seat"]
    assert seat == [{"turn": 2, "kind": "seat", "detail": "the person takes the user's seat at turn 2"}]
    # the exported trace says who played each turn too
    usersim("otel", "export", str(out), "--to", str(tmp_path / "trace.jsonl"))
    (request,) = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    spans = [sp for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]
    by_turn = {
        sp["name"]: {a["key"]: a["value"].get("stringValue") for a in sp["attributes"]}.get(
            "usersim.played_by"
        )
        for sp in spans
        if sp["name"].startswith("usersim.turn ")
    }
    assert {k: v for k, v in by_turn.items() if v} == {
        "usersim.turn 1": "simulator",
        "usersim.turn 2": "human",
        "usersim.turn 3": "human",
        "usersim.turn 4": "human",
    }


def test_hand_back_gives_the_rest_to_the_rule_simulator(tmp_path):
    out = tmp_path / "back"
    s = play(out)
    s.type("")  # an empty first line sends the case's opening message
    s.type("C-1001")
    s.type("/hand-back")
    assert s.wait() == 0, s.screen
    assert "--- rule plays from turn 3 on ---" in s.screen
    assert "[turn 3] rule> " in s.screen
    (rec,) = records(out)
    turns = user_turns(rec)
    assert turns[0] == (1, "human", "Hi, I lost my debit card this morning. Can you block it, please?")
    assert [by for _, by, _ in turns[:2]] == ["human", "human"]
    assert {by for _, by, _ in turns[2:]} == {"simulator"} and len(turns) >= 3
    assert rec["simulator"] == "human+rule" and rec["status"] == "passed"  # the rule user finished the job
    assert rec["stop"]["reason"] == "goal_met" and "all required items delivered" in rec["stop"]["detail"]
    assert {"turn": 3, "kind": "seat", "detail": "the person handed the seat back to rule at turn 3"} in rec[
        "sim_events"
    ]


def test_stop_ends_as_user_stopped_and_the_unfinished_goal_fails(tmp_path):
    out = tmp_path / "stop"
    s = play(out)
    s.type("I lost my card")
    s.type("/stop I have to catch my train")
    assert s.wait() == 1, s.screen
    (rec,) = records(out)
    assert rec["stop"] == {
        "reason": "user_stopped",
        "detail": "the person stopped (/stop): I have to catch my train",
        "blame": None,
    }
    assert rec["status"] == "failed" and rec["turns"] == 1 and rec["simulator"] == "human"
    assert verdict(rec, "task_completion")["verdict"] == "fail"
    assert "stopped: user_stopped" in verdict(rec, "task_completion")["reason"]
    # a person's turns cannot be re-played with a pinned seed: shrink says so and what to do instead
    res = usersim(
        "shrink", str(out), "BANK-01|r0", "--to", str(tmp_path / "min"), "--cases", CASES, check=False
    )
    assert res.returncode == 1 and not (tmp_path / "min").exists()
    assert "was played by a person (simulator human): their turns cannot be played again" in res.stderr
    assert "promote it first" in res.stderr


def test_end_of_input_is_stop_and_ctrl_c_keeps_the_turns_that_finished(tmp_path):
    out = tmp_path / "eof"
    s = play(out)
    s.type("I lost my card")
    s.ctrl_d()
    assert s.wait() == 1, s.screen
    s = play(out)  # a second session in the same folder: the case's next repeat
    s.type("I lost my debit card")
    s.type("C-1001")
    s.ctrl_c()
    assert s.wait() == 1, s.screen
    first, second = records(out)
    assert first["id"] == "BANK-01|r0" and second["id"] == "BANK-01|r1"
    assert first["stop"]["detail"] == "end of input (treated as /stop)"
    assert second["stop"]["reason"] == "user_stopped" and second["stop"]["detail"].startswith(
        "interrupted (Ctrl-C)"
    )
    assert [c for _, _, c in user_turns(second)] == ["I lost my debit card", "C-1001"]
    assert second["transcript"][-1]["role"] == "assistant"  # the agent's answer to turn 2 is kept
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["records"] == 2 and summary["totals"]["failed"] == 2
    assert summary["meta"]["simulator"] == "human" and summary["meta"]["play"] == {"sessions": 2}


def test_the_llm_simulator_plays_before_take_over(openai_stub, tmp_path):  # noqa: F811
    said = json.dumps({"message": "Hello, I lost my debit card. Please block it.", "action": "continue"})
    openai_stub.responder = lambda body: text(said)
    out = tmp_path / "llm"
    s = play(out, "--take-over", "2", "--simulator-model", "openai:sim-model")
    s.type("C-1001")
    s.type("1985-03-14")
    s.type("yes")
    s.type("/done")
    assert s.wait() == 0, s.screen
    assert "[turn 1] openai:sim-model> Hello, I lost my debit card. Please block it." in s.screen
    (rec,) = records(out)
    assert rec["simulator"] == "human+openai:sim-model"
    assert [by for _, by, _ in user_turns(rec)] == ["simulator", "human", "human", "human"]
    assert any(r["model"] == "sim-model" for r in openai_stub.requests)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("BANK-99",), "unknown case 'BANK-99' in examples/bank/cases. Did you mean 'BANK-09'?"),
        (("BANK-01", "--take-over", "13"), "13 is beyond case BANK-01's max_turns 12"),
        (
            ("BANK-01", "--simulator-model", "bogus:x"),
            "Unknown simulator 'bogus'. Available: human, openai, rule",
        ),
        (
            ("B1-EI-01", "--cases", "usersim/cases/b1"),
            "case 'B1-EI-01' is static (it replays a fixed history)",
        ),
    ],
)
def test_bad_input_is_a_usage_error_with_a_clear_message(tmp_path, args, message):
    res = usersim(
        "play", *args, "--cases", CASES, "--agent", CORRECT, "--out", str(tmp_path / "x"), check=False
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in " ".join(res.stderr.split())
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_a_folder_of_sessions_holds_one_agent(tmp_path):
    out = tmp_path / "one-agent"
    s = play(out)
    s.type("/stop")
    assert s.wait() == 1
    res = usersim("play", "BANK-01", "--cases", CASES, "--agent", "reference", "--out", str(out), check=False)
    assert res.returncode == 2
    assert f"holds sessions with the agent {CORRECT}, not reference" in " ".join(res.stderr.split())


def test_a_simulated_run_marks_every_user_turn_by_the_simulator(tmp_path):
    out = tmp_path / "run"
    usersim("run", CASES, "--id", "BANK-01", "--agent", CORRECT, "--out", str(out), "--no-progress")
    (rec,) = records(out)
    assert rec["simulator"] == "rule" and rec["schema_version"] == 4
    assert {by for _, by, _ in user_turns(rec)} == {"simulator"}
    assert all(m["by"] is None for m in rec["transcript"] if m["role"] != "user")
    assert "played by" not in (out / "report.html").read_text(encoding="utf-8")  # no person took part


def test_a_failure_a_person_found_is_promoted_to_a_regression_case_replaying_their_turn(tmp_path):
    out = tmp_path / "found"
    s = play(out, "--take-over", "2")
    s.type("Hi, my card is gone, please block it")  # never gives the customer ID the agent asked for
    s.type("/hand-back")
    assert s.wait() == 1, s.screen
    (rec,) = records(out)
    assert rec["status"] == "failed" and rec["simulator"] == "human+rule"
    # the person's seat cannot be played again: the promoted case replays their turn, then the rule user
    res = usersim("promote", str(out), "BANK-01|r0", "--to", str(tmp_path / "reg"), "--cases", CASES)
    (written,) = (tmp_path / "reg").glob("*.yaml")
    assert str(written) in res.stdout and "failing turn 2" in res.stderr
    assert "  - Hi, my card is gone, please block it\n" in written.read_text(encoding="utf-8")


def test_run_cannot_seat_a_person_and_says_where_to_go(tmp_path):
    args = ("run", CASES, "--id", "BANK-01", "--simulator", "human", "--out", str(tmp_path / "r"))
    res = usersim(*args, check=False)
    assert res.returncode == 2
    assert (
        "simulator 'human' is a person in the user's seat: use `usersim play CASE --agent SPEC`" in res.stderr
    )
