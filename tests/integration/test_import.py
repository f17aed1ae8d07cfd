"""`usersim import` through the CLI: recorded conversations (OpenAI chat JSONL, a LangSmith export,
an OTLP GenAI trace; English bank and Chinese travel conversations with tool calls) become valid
cases that replay against the bank agents and the reference agent; personas drafted from the
user's side run with the rule simulator; --redact-pii masks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

DATA = REPO / "tests/data/import"
CORRECT, FLAWED = "python:examples.bank.agent:correct", "python:examples.bank.agent:flawed"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
FILES = {
    "openai-jsonl": "openai_chats.jsonl",
    "langsmith": "langsmith_export.json",
    "otel": "otel_traces.json",
}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def cases_in(folder: Path) -> dict[str, dict]:
    return {p.name: load(p) for p in sorted(folder.glob("*.yaml"))}


def run(target: Path | list[Path], agent: str, out: Path, *extra: str) -> dict[str, dict]:
    paths = [str(p) for p in (target if isinstance(target, list) else [target])]
    usersim("run", *paths, "--agent", agent, "--out", str(out), "--no-progress", *extra, check=False)
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


def split(folder: Path) -> tuple[list[Path], list[Path]]:
    """(bank cases, Chinese travel cases) of an import folder."""
    en, zh = [], []
    for p in sorted(folder.glob("*.yaml")):
        (zh if load(p).get("language") == "zh" else en).append(p)
    return en, zh


@pytest.mark.parametrize("fmt", list(FILES))
def test_each_format_imports_to_valid_cases_that_replay_against_the_agents(fmt, tmp_path):
    out = tmp_path / "imported"
    res = usersim("import", str(DATA / FILES[fmt]), "--to", str(out), "--format", fmt)
    assert "all valid" in res.stdout
    assert usersim("validate", str(out)).returncode == 0
    en, zh = split(out)
    assert en and zh  # every fixture file holds English bank and Chinese travel conversations
    for p in en + zh:
        case = load(p)
        assert case["mode"] == "static" and {"imported", "draft"} <= set(case["tags"])
        # titles in the conversation's language
        assert case["title"].startswith("Imported" if p in en else "导入对话"), case["title"]
        # every recorded call of the live turn is a drafted check with its recorded arguments
        turn = case["reference_transcript"]
        called = [
            {"tool": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
            for m in turn for c in m.get("tool_calls") or []
        ]  # fmt: skip
        assert [c["tool_called"] for c in case["judging"]["checks"] if "tool_called" in c] == called
        # the recorded results answer the same calls again (mock tools), and only the recorded tools exist
        assert case["tools"] == [] and case["mock_tools"]
    bank = run(en, CORRECT, tmp_path / "bank")
    travel = run(zh, "reference", tmp_path / "travel")
    for rec in [*bank.values(), *travel.values()]:
        assert rec["status"] == "passed", (rec["case_id"], rec["verdicts"])
        assert any(v["judge"] == "tool_called" for v in rec["verdicts"])


def test_openai_jsonl_each_turn_with_the_bank_environment_separates_the_flawed_agent(tmp_path):
    out = tmp_path / "imported"
    usersim(
        "import", str(DATA / FILES["openai-jsonl"]), "--to", str(out), "--at", "each", "--environment", SUITE
    )
    en, _ = split(out)
    dispute = load(out / "conv_a90c33-dispute-t5.yaml")
    # the environment's tools are real: no mock for them; the state the recording left is drafted
    assert "mock_tools" not in dispute
    # referenced, relative to the written case: the bank's own files
    state = (out / dispute["environment"]["state"]).resolve()
    assert not Path(dispute["environment"]["state"]).is_absolute() and state == (
        REPO / "examples/bank/state.yaml"
    )
    assert (out / dispute["policy"]).resolve() == REPO / "examples/bank/policy.md"
    (fs,) = [c["final_state"] for c in dispute["judging"]["checks"] if "final_state" in c]
    assert fs["expect"]["disputes"][0] | {} == {
        "dispute_id": "D-1", "transaction_id": "T-4001", "amount": 349.99,
        "reason": "The monitor I ordered never arrived.", "status": "open",
    }  # fmt: skip
    # one case per user turn: 4 + 2 + 5 + 4
    assert len(list(out.glob("*.yaml"))) == 15
    correct = run(en, CORRECT, tmp_path / "c")
    assert all(r["status"] == "passed" for r in correct.values()), {
        k: r["verdicts"] for k, r in correct.items() if r["status"] != "passed"
    }
    flawed = run(en, FLAWED, tmp_path / "f")
    failed = {k for k, r in flawed.items() if r["status"] != "passed"}
    # the flawed agent picks the latest Skyline charge, not the $349.99 one the customer confirmed:
    # it does not open the dispute the recording opened
    assert failed == {"conv_a90c33-dispute-t5"}
    reasons = " ".join(
        v["reason"] for v in flawed["conv_a90c33-dispute-t5"]["verdicts"] if v["verdict"] == "fail"
    )
    assert "disputes D-1 missing" in reasons


def test_a_history_write_before_the_live_turn_is_applied_to_the_imported_environment(tmp_path):
    # a LangSmith thread where the card was blocked in turn 4 and the replacement ordered in turn 5
    out = tmp_path / "imported"
    usersim(
        "import", str(DATA / FILES["langsmith"]), "--to", str(out), "--at", "each", "--environment", SUITE
    )
    last = sorted(out.glob("9d97601d-*-t5.yaml"))[0]
    case = load(last)
    history_calls = [
        c["function"]["name"] for m in case["input"]["history"] for c in m.get("tool_calls") or []
    ]
    live = run(last, CORRECT, tmp_path / "r")
    (rec,) = live.values()
    fs = next(v for v in rec["verdicts"] if v["judge"] == "final_state")
    assert fs["verdict"] == "pass", fs["reason"]
    if "block_card" in history_calls:  # blocked in the history: the state already says so
        assert "cards K-3004 status=blocked" in fs["reason"]


def test_persona_drafts_validate_and_the_rule_simulator_runs_them(tmp_path):
    out = tmp_path / "imported"
    res = usersim(
        "import", str(DATA / FILES["openai-jsonl"]), "--to", str(out), "--persona", "--environment", SUITE
    )
    assert "persona draft" in res.stdout and "all valid" in res.stdout
    personas = {p.stem: load(p) for p in (out / "personas").glob("*.yaml")}
    assert len(personas) == 4
    dispute = personas["conv_a90c33-dispute-user"]
    assert dispute["language"] == "en" and "draft" in dispute["tags"]
    assert dispute["opening_message"].startswith("I was charged $349.99")
    facts = {f["slot"]: f["value"] for f in dispute["known_info"]}
    assert facts["date_of_birth"] == "1978-07-21" and "C-1003" in facts.values()
    # a question answered in words is said again when the agent asks it again
    assert dispute["events"][0]["text"] == "The monitor I ordered never arrived."
    forgot = personas["conv_c02f9e-forgot-id-user"]
    assert any("customer ID" in u for u in forgot["unknown_info"])  # the user said they did not know it
    assert personas["conv_51bb08-hotel-zh-user"]["language"] == "zh"
    assert usersim("validate", str(out / "personas")).returncode == 0
    organic = [
        out / f"{n}-sim.yaml"
        for n in ("conv_a90c33-dispute", "conv_7d1e2a-transfer", "conv_c02f9e-forgot-id")
    ]
    assert load(organic[0])["persona"] == "personas/conv_a90c33-dispute-user.yaml"
    correct = run(organic, CORRECT, tmp_path / "c", "--simulator", "rule")
    assert all(r["status"] == "passed" and r["stop_reason"] == "goal_met" for r in correct.values()), {
        k: r["verdicts"] for k, r in correct.items()
    }
    flawed = run(organic, FLAWED, tmp_path / "f", "--simulator", "rule")
    assert flawed["conv_a90c33-dispute-sim"]["status"] == "failed"


def test_redact_pii_replaces_emails_phones_and_cards_and_secrets_are_always_redacted(tmp_path):
    src = tmp_path / "chats.jsonl"
    rows = [json.loads(x) for x in (DATA / FILES["openai-jsonl"]).read_text().splitlines()]
    rows[0]["messages"][1]["content"] += (
        " Call me on (555) 201-3344 or +44 20 7946 0958; card 4111 1111 1111 1111."
    )
    rows[0]["messages"][2]["content"] += " (internal: api_key=sk-live-abcdef123456)"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plain = tmp_path / "plain"
    usersim("import", str(src), "--to", str(plain), "--persona")
    text = "".join(p.read_text() for p in plain.rglob("*.yaml"))
    assert "marcus.lee@example.com" in text and "(555) 201-3344" in text
    assert "sk-live-abcdef123456" not in text  # secrets: always
    masked = tmp_path / "masked"
    res = usersim("import", str(src), "--to", str(masked), "--persona", "--redact-pii")
    assert "redacted: " in res.stdout and "email value(s)" in res.stdout and "all valid" in res.stdout
    text = "".join(p.read_text() for p in masked.rglob("*.yaml"))
    for raw in (
        "marcus.lee@example.com",
        "priya.nair@example.com",
        "(555) 201-3344",
        "7946 0958",
        "4111 1111",
        "4111111111111111",
    ):
        assert raw not in text, raw
    assert "<EMAIL_1>" in text and "<PHONE_1>" in text and "<CARD_1>" in text
    # ids, amounts and dates are not personal data
    assert "C-1002" in text and "$250" in text and "1990-11-02" in text


@pytest.mark.parametrize(
    "content, fmt, says",
    [
        ('{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": [', "openai-jsonl", ":2: not JSON"),
        (
            '{"messages": [{"role": "tool", "tool_call_id": "x", "content": "{}"}]}\n',
            "openai-jsonl",
            "message 0.tool_call_id",
        ),
        ('{"prompt": "hi"}\n', "openai-jsonl", "must be an object with `messages`"),
        ('{"resourceSpans": []}', "otel", "no trace holds a conversation"),
        (
            '[{"id": "r1", "run_type": "chain", "inputs": {}, "outputs": {}}]',
            "langsmith",
            "no run holds a conversation",
        ),
        ("hello", None, "cannot tell the format"),
    ],
)
def test_an_unreadable_file_is_named_with_where_it_went_wrong(tmp_path, content, fmt, says):
    src = tmp_path / "bad.jsonl"
    src.write_text(content, encoding="utf-8")
    args = ["import", str(src), "--to", str(tmp_path / "o")] + (["--format", fmt] if fmt else [])
    res = usersim(*args, check=False)
    assert res.returncode != 0 and str(src) in res.stderr and says in res.stderr, res.stderr


def test_a_usersim_transcript_as_chat_jsonl_imports_back_to_the_same_conversation(tmp_path):
    # a bank run's transcript, written as OpenAI chat JSONL, imports back to a case whose replay
    # makes the same calls the run made
    out = tmp_path / "run"
    bank = REPO / "examples/bank"
    work = tmp_path / "bank"
    shutil.copytree(bank, work)
    recs = run(work / "cases/bank-07-address-change.yaml", CORRECT, out, "--simulator", "rule")
    (rec,) = recs.values()
    chat = [{k: v for k, v in m.items() if k != "turn"} for m in rec["transcript"]]  # as chat messages
    line = {"id": "roundtrip", "created_at": "2026-04-07", "messages": chat}
    src = tmp_path / "rt.jsonl"
    src.write_text(json.dumps(line) + "\n", encoding="utf-8")
    usersim("import", str(src), "--to", str(tmp_path / "back"), "--environment", SUITE)
    (case_path,) = (tmp_path / "back").glob("*.yaml")
    again = run(case_path, CORRECT, tmp_path / "again")
    (back,) = again.values()
    assert back["status"] == "passed", back["verdicts"]
    recorded = [tc["name"] for m in rec["transcript"][-4:] for tc in m.get("tool_calls") or []]
    replayed = [tc["name"] for m in back["transcript"] for tc in m.get("tool_calls") or []][-len(recorded) :]
    assert replayed == recorded


NO_VALUE_OUTCOMES = [
    {
        "id": "conv_lock-card",
        "messages": [
            {"role": "user", "content": "Please lock my debit card, I think I lost it."},
            {"role": "assistant", "content": "I can help with that. What is your customer ID?"},
            {"role": "user", "content": "It's C-1002."},
            {"role": "assistant", "content": "All set: your card is locked now. Anything else?"},
        ],
    },
    {
        "id": "conv_cancel-hotel-zh",
        "messages": [
            {"role": "user", "content": "帮我把京都塔酒店的预订取消掉，订单号 BK-5003"},
            {"role": "assistant", "content": "好的，已经为您取消了，退款会原路返回。"},
        ],
    },
]


def test_a_drafted_persona_whose_outcome_shows_nothing_is_refused_not_met_on_the_first_reply(tmp_path):
    """The last reply shows the user no value (a code, an amount, a date) to recognise the outcome
    by: the draft has nothing required, and the import refuses it, naming the file and the field,
    rather than writing a persona whose goal is 'met' by any first reply."""
    src = tmp_path / "chats.jsonl"
    src.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in NO_VALUE_OUTCOMES), encoding="utf-8")
    out = tmp_path / "imported"
    res = usersim("import", str(src), "--to", str(out), "--persona", check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    for persona in ("conv_lock-card-user", "conv_cancel-hotel-zh-user"):
        line = next(x for x in res.stderr.splitlines() if f"personas/{persona}.yaml" in x)
        assert ": goal.required: empty, so nothing tells the simulated user its goal is met" in line
        assert "stop_when_goal_met: false" in line
    assert res.stdout.strip().splitlines()[-1].endswith("problem(s)")
    refused = usersim("validate", str(out / "personas"), check=False)
    assert refused.returncode == 2 and "goal.required: empty" in refused.stdout + refused.stderr
