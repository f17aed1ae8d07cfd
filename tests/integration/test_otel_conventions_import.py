"""`usersim import` of traces in the three conventions applications are instrumented with: the
OpenTelemetry GenAI conventions (usersim's own export), OpenLLMetry / traceloop
(`gen_ai.prompt.N.*`, tests/data/import/otel_openllmetry.json) and OpenInference / Arize
(`llm.input_messages.N.message.*`, otel_openinference.jsonl, a collector's file export), written by
make_otel_conventions.py from bank runs: one trace per user turn, turns tied by a session
attribute, every LLM span re-sending the history, tool spans. Each imports (format guessed) into
cases that validate; static and organic replays pass the correct bank agent and fail the flawed
one where its flaws bite; all three read as the same conversations; a broken span is an error
naming the file, the span and the attribute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import REPO, usersim
from usersim.cases.importers.formats import read_conversations

DATA = REPO / "tests/data/import"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
FIXTURES = {"openllmetry": "otel_openllmetry.json", "openinference": "otel_openinference.jsonl"}
CASES = ("BANK-02", "BANK-06", "BANK-09")
# the flawed agent: the wrong card blocked (BANK-02), the newest charge disputed (BANK-06);
# BANK-09 asks for express shipping, which the flawed agent's express default happens to give
FLAWED_FAILS = {"sess-bank-02-sim", "sess-bank-02-t5", "sess-bank-06-sim", "sess-bank-06-t5"}


def results(out: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["case_id"]: r for r in rows}


@pytest.mark.parametrize("convention", list(FIXTURES))
def test_each_convention_imports_into_cases_that_pass_correct_and_fail_flawed(convention, tmp_path):
    out = tmp_path / "imported"
    res = usersim(
        "import", str(DATA / FIXTURES[convention]), "--to", str(out), "--persona", "--environment", SUITE
    )
    assert res.stdout.strip().endswith(
        "6 case(s), 3 persona(s) from 3 conversation(s) -> " + str(out) + "; all valid"
    )
    assert usersim("validate", str(out)).returncode == 0
    ran = {}
    for agent in ("correct", "flawed"):
        usersim(
            "run", str(out), "--agent", f"python:examples.bank.agent:{agent}", "--simulator", "rule",
            "--out", str(tmp_path / agent), "--no-progress", check=False,
        )  # fmt: skip
        ran[agent] = results(tmp_path / agent)
    ids = {f"sess-{c.lower()}-{kind}" for c in CASES for kind in ("sim", "t5")}
    assert set(ran["correct"]) == ids
    assert {k: r["status"] for k, r in ran["correct"].items()} == dict.fromkeys(ids, "passed"), {
        k: [v["reason"] for v in r["verdicts"] if v["verdict"] != "pass"] for k, r in ran["correct"].items()
    }
    assert all(r["stop_reason"] == "goal_met" for k, r in ran["correct"].items() if k.endswith("-sim"))
    assert {k for k, r in ran["flawed"].items() if r["status"] == "failed"} == FLAWED_FAILS
    dispute = ran["flawed"]["sess-bank-06-sim"]
    assert any(
        v["judge"] == "tool_called" and "closest call had transaction_id=T-4002" in v["reason"]
        for v in dispute["verdicts"]
    )


def test_the_three_conventions_read_as_the_same_conversations(tmp_path):
    run = tmp_path / "run"
    ids = [x for c in CASES for x in ("--id", c)]
    usersim("run", "examples/bank/cases", *ids, "--agent", "python:examples.bank.agent:correct", "--out", str(run), "--no-progress")  # fmt: skip
    usersim("otel", "export", str(run), "--to", str(tmp_path / "genai.jsonl"))

    def histories(path: Path) -> list[list[tuple]]:
        convs = read_conversations(path, None)
        return [
            [
                (
                    m.role,
                    m.content,
                    [(c.name, c.arguments) for c in m.tool_calls],
                    m.role == "tool" and m.name,
                )
                for m in conv.messages
                if m.role != "system"
            ]
            for conv in convs
        ]

    genai = histories(tmp_path / "genai.jsonl")
    assert len(genai) == 3 and all(len(h) >= 10 for h in genai)
    assert histories(DATA / FIXTURES["openllmetry"]) == genai
    assert histories(DATA / FIXTURES["openinference"]) == genai


def _broken(tmp_path: Path, convention: str, attribute: str, edit) -> tuple[Path, str]:
    """A copy of the fixture with the attributes of the first span carrying `attribute` edited;
    (path, that span's id)."""
    lines = (DATA / FIXTURES[convention]).read_text(encoding="utf-8")
    docs = [json.loads(lines)] if convention == "openllmetry" else [json.loads(x) for x in lines.splitlines()]
    spans = [s for d in docs for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    target = next(s for s in spans if any(a["key"] == attribute for a in s["attributes"]))
    target["attributes"] = edit(target["attributes"])
    path = tmp_path / FIXTURES[convention]
    path.write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    return path, target["spanId"]


def _set(key: str, text: str):
    """An edit of a span's attributes: `key` says `text`."""
    return lambda attrs: [{**a, "value": {"stringValue": text}} if a["key"] == key else a for a in attrs]


@pytest.mark.parametrize(
    "convention, attribute, edit, says",
    [
        (
            "openllmetry",
            "gen_ai.prompt.2.role",
            lambda attrs: [a for a in attrs if a["key"] != "gen_ai.prompt.2.role"],
            "missing (the message has content)",
        ),
        (
            "openinference",
            "llm.input_messages.1.message.role",
            _set("llm.input_messages.1.message.role", "customer"),
            "'customer' is not a chat role",
        ),
        (
            "openllmetry",
            "gen_ai.completion.0.tool_calls.0.arguments",
            _set("gen_ai.completion.0.tool_calls.0.arguments", '{"customer_id": "C-10'),
            "not JSON",
        ),
    ],
)
def test_a_broken_span_is_an_error_naming_file_span_and_attribute(
    convention, attribute, edit, says, tmp_path
):
    path, span_id = _broken(tmp_path, convention, attribute, edit)
    res = usersim("import", str(path), "--to", str(tmp_path / "out"), check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = [x for x in res.stderr.splitlines() if x.startswith("Error:")]
    assert str(path) in line and f"span {span_id}" in line and attribute in line and says in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("*.yaml"))
