"""The test author's mistakes are charged to the case, never to the agent (issue 22): `usersim
validate` names a wrong table, key field, field or tool parameter at its file:line with did-you-mean;
a bug in a user's tool ends the conversation as a case error (its deliberate refusals still reach
the agent); a crashing plugin check or judge is an `error` verdict with fault `case` and its
traceback, a built-in's crash stays infrastructure. Test data: tests/data/telco, tests/data/crash_plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, usersim
from usersim.core import registry as registries

DATA = Path("tests/data")
TELCO = DATA / "telco"
AGENT = "python:tests.data.telco.agent:respond"


def problems(stdout: str) -> list[tuple[str, int, str, str]]:
    """(file, line, field, message) of each `file:line: field: message` line."""
    out = []
    for row in stdout.splitlines():
        file, line, field, message = row.split(":", 3)
        out.append((file, int(line), field.strip(), message.strip()))
    return out


def line_of(path: Path, text: str) -> int:
    """The 1-based line of `path` that contains `text`."""
    return next(i for i, row in enumerate(path.read_text().splitlines(), 1) if text in row)


def records(out: Path) -> dict[str, dict]:
    rows = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


def test_validate_names_each_wrong_table_key_field_and_parameter_at_its_line():
    case = TELCO / "broken" / "tel-90-wrong-names.yaml"
    res = usersim("validate", str(case), check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    found = {(line, field): message for _, line, field, message in problems(res.stdout)}
    check = "judging.checks.0.final_state"
    expected = {
        (
            line_of(case, "line: ["),
            f"{check}.expect.line",
        ): "no table 'line' in the environment. Did you mean 'lines'?",
        (line_of(case, '{number: "555-0101"'), f"{check}.expect.lines.0"): (
            "record without the key field 'line_id' of 'lines' (environment.keys); it has: number, plan_id"
        ),
        (
            line_of(case, "roamng"),
            f"{check}.expect.lines.1.plan",
        ): "'lines' has no field 'plan'. Did you mean 'plan_id'?",
        (
            line_of(case, "roamng"),
            f"{check}.expect.lines.1.roamng",
        ): "'lines' has no field 'roamng'. Did you mean 'roaming'?",
        (
            line_of(case, "absent:"),
            f"{check}.absent.credit",
        ): "no table 'credit' in the environment. Did you mean 'credits'?",
        (
            line_of(case, "cost: 35"),
            "judging.checks.1.step_completion.steps.0.check.final_state.expect.plans.0.cost",
        ): ("'plans' has no field 'cost'. Fields: name, plan_id, price, roaming"),
        (line_of(case, "tool_called"), "judging.checks.2.tool_called.args.line"): (
            "tool 'change_plan' has no parameter 'line'. Did you mean 'line_id'? Parameters: line_id, plan_id"
        ),
        (line_of(case, "citty"), "mock_tools.0.responses.0.when.citty"): (
            "tool 'check_coverage' has no parameter 'citty'. Did you mean 'city'?"
        ),
    }
    assert set(found) == set(expected), res.stdout
    for where, start in expected.items():
        assert found[where].startswith(start), (where, found[where])
    # the correct cases of the same domain (a table that starts empty, fields a tool writes) are clean
    assert usersim("validate", str(TELCO / "cases")).returncode == 0


def test_validate_reports_a_tools_file_that_does_not_import_lacks_the_function_or_a_wrong_key():
    broken = TELCO / "broken"
    files = ["tel-91-no-import.yaml", "tel-92-no-function.yaml", "tel-93-bad-key.yaml"]
    res = usersim("validate", *(str(broken / f) for f in files), check=False)
    assert res.returncode == 2
    (f1, _, field1, msg1), (f2, _, field2, msg2), (f3, line3, field3, msg3) = problems(res.stdout)
    assert f1.endswith("tel-91-no-import.yaml") and field1 == "environment.tools"
    assert "ModuleNotFoundError: No module named 'telco_helpers_that_do_not_exist'" in msg1
    assert f"({broken / 'broken_tools.py'}:{line_of(broken / 'broken_tools.py', 'import lookup')})" in msg1
    assert f2.endswith("tel-92-no-function.yaml") and field2 == "environment.tools"
    assert "no function 'change_plna'. Did you mean 'change_plan'?" in msg2
    assert (line3, field3) == (line_of(broken / files[2], "keys:"), "environment.keys")
    assert msg3.startswith("lines: no record of 'lines' has the field 'lineid'. Did you mean 'line_id'?")


@pytest.fixture(scope="module")
def telco_run(tmp_path_factory) -> tuple[int, str, dict[str, dict]]:
    out = tmp_path_factory.mktemp("telco")
    res = usersim(
        "run", str(TELCO / "cases"), "--agent", AGENT, "--out", str(out), "--no-progress", check=False
    )
    return res.returncode, res.stdout + res.stderr, records(out)


def seen_by_agent(rec: dict) -> str:
    """Everything the agent was given back: tool results in the transcript and the trace."""
    return " | ".join(
        [m.get("content") or "" for m in rec["transcript"] if m["role"] == "tool"]
        + [e["result"] for e in rec["tool_trace"]]
    )


def test_a_bug_in_a_user_tool_ends_the_conversation_and_its_refusals_reach_the_agent(telco_run):
    _, console, recs = telco_run
    bug = recs["TEL-01"]
    assert bug["stop_reason"] == "case_error", bug
    tools = TELCO / "telco_tools.py"
    assert bug["stop_detail"].startswith(f"{tools}:get_line: KeyError: 'plan'")
    # the traceback starts in the user's tool and points at the line of the bug
    bug_line = line_of(tools, 'line["plan"]')
    assert f'File "{(REPO / tools).resolve()}", line {bug_line}, in get_line' in bug["traceback"]
    assert "Error: 'plan'" not in seen_by_agent(bug) and not bug["tool_trace"]
    assert "error     score=1.00  turns=1   case_error: tests/data/telco/telco_tools.py:" in console
    # deliberate refusals are the agent's business: ValueError, the tools file's own exception
    # class, and a lookup of an ID the agent gave; nothing was written
    assert "Error: no plan P-GOLD; plans: P-BASIC, P-TRAVEL" in seen_by_agent(recs["TEL-02"])
    refusals = seen_by_agent(recs["TEL-03"])
    assert "Error: Refused: credits are at most $20, asked 50.0" in refusals and "Error: 'U-9'" in refusals
    for case_id in ("TEL-02", "TEL-03", "TEL-04", "TEL-05"):
        assert recs[case_id]["stop_reason"] == "replay_complete"
        assert recs[case_id]["status"] == "passed", recs[case_id]["verdicts"]


def test_a_bug_in_a_user_tool_is_an_error_blamed_on_the_case(telco_run):
    code, _, recs = telco_run
    assert (recs["TEL-01"]["status"], recs["TEL-01"]["blame"]) == ("error", "case")
    assert code == 1


def test_final_state_meeting_a_missing_table_at_run_time_is_a_case_error(tmp_path):
    """A case built in code skips the loader's validation: the check itself refuses to blame the agent."""
    import yaml

    import usersim
    from usersim.cases.schema import Case

    data = yaml.safe_load((TELCO / "cases" / "tel-02-refused-write.yaml").read_text())
    data.pop("include")
    suite = yaml.safe_load((TELCO / "cases" / "_suite.yaml").read_text())
    data = {**suite, **data}
    data["judging"] = {
        **suite["judging"],
        "checks": [{"final_state": {"expect": {"line": [{"line_id": "L-1"}]}}}],
    }
    case = Case.model_validate(data, context={"case_dir": TELCO / "cases"})
    result = usersim.run(case, agent=AGENT, out=tmp_path)
    (verdict,) = result.records[0].verdicts
    assert verdict.verdict == "error", verdict
    assert verdict.reason.startswith("case error: ")
    assert "expect.line: no table 'line' in the environment. Did you mean 'lines'?" in verdict.reason
    assert verdict.details["fault"] == "case"


@pytest.fixture
def crash_plugin(monkeypatch):
    """The crash-plugin distribution (tests/data/crash_plugin) installed: on sys.path with entry points."""
    monkeypatch.syspath_prepend(str((DATA / "crash_plugin").resolve()))
    for reg in (registries.checks, registries.judges):
        monkeypatch.setattr(reg, "_items", dict(reg._items))
        monkeypatch.setattr(reg, "_loaded", False)
    yield
    sys.modules.pop("crash_plugin", None)


def test_a_crashing_plugin_check_or_judge_is_an_error_with_fault_case_and_traceback(
    crash_plugin, tmp_path, monkeypatch
):
    monkeypatch.setenv("CRASH_PLUGIN_API_KEY", "sk-crash-plugin-0123456789")
    case = DATA / "crash_plugin" / "plugin-case.yaml"
    assert usersim("validate", str(case)).returncode == 0
    res = usersim("run", str(case), "--agent", AGENT, "--judge", "tone", "--out", str(tmp_path), check=False)
    assert res.returncode == 1
    verdicts = {v["judge"]: v for v in records(tmp_path)["PLUG-CRASH"]["verdicts"]}
    plugin = (DATA / "crash_plugin" / "crash_plugin.py").resolve()
    expected = {  # judge -> (reason, where, the plugin's line that raised)
        "line_on_plan": ("check crashed: KeyError: 'plan'", "crash_plugin:line_on_plan", 'line["plan"]'),
        "reply_json": (
            "check crashed: JSONDecodeError: Expecting value",
            "crash_plugin:reply_json",
            "json.loads",
        ),
        "tone": ("judge crashed: ZeroDivisionError: division by zero", "crash_plugin:ToneJudge", "polite /"),
    }
    for judge, (reason, where, raised_at) in expected.items():
        v = verdicts[judge]
        assert v["verdict"] == "error" and v["reason"].startswith(reason), v
        assert v["details"]["fault"] == "case" and v["details"]["where"] == where
        tb = v["details"]["traceback"]
        # the user's code first (not usersim's runner), at the line that raised
        first = tb.splitlines()[1]
        assert first.startswith(f'  File "{plugin}", line {line_of(plugin, raised_at)}'), tb
    assert verdicts["turns"]["verdict"] == "pass"  # the other checks still decide
    leak = verdicts["remote_grader"]
    assert (
        leak["details"]["fault"] == "case"
        and "ConnectionError: grader refused key ***" in leak["details"]["traceback"]
    )
    assert "0123456789" not in json.dumps(records(tmp_path))  # no secret in the record


async def test_a_crashing_builtin_check_stays_infrastructure():
    from tests.judges.helpers import bot, case, user
    from usersim.judges.base import JudgeState
    from usersim.judges.checks.registry import run_check

    t = [user("…"), bot("…")]
    broken = JudgeState.model_construct(turns=None, tool_trace=[], stop=None)  # a usersim bug's state
    v = await run_check({"turns": {"max": 3}}, transcript=t, case=case(), state=broken)
    assert v.verdict == "error" and v.reason.startswith("check crashed: TypeError")
    assert (
        v.details["fault"] == "infrastructure" and v.details["where"] == "usersim.judges.checks.state:turns"
    )
    assert 'usersim/judges/checks/registry.py", line' in v.details["traceback"]  # the whole usersim trace


def test_a_tool_that_breaks_after_the_run_makes_rescore_a_case_error_not_a_doubt(tmp_path):
    """final_state replays the stored tool calls on the tools file as it is now: its bug is the
    case's error (with the tool's traceback), not an inconclusive "tools must be deterministic"."""
    import shutil

    domain = tmp_path / "telco"
    shutil.copytree(TELCO, domain, ignore=shutil.ignore_patterns("__pycache__", "broken"))
    run = tmp_path / "run"
    usersim("run", str(domain / "cases" / "tel-04-credit.yaml"), "--agent", AGENT, "--out", str(run))
    tools = domain / "telco_tools.py"
    tools.write_text(tools.read_text().replace("db['credits']", "db['credit']"))  # a typo lands later
    usersim("rescore", str(run), "--out", str(tmp_path / "again"), check=False)
    (verdict,) = records(tmp_path / "again")["TEL-04"]["verdicts"]
    assert verdict["verdict"] == "error", verdict
    assert (
        verdict["reason"].startswith("case error: ")
        and ":add_credit: KeyError: 'credit'" in verdict["reason"]
    )
    assert verdict["details"]["fault"] == "case" and verdict["details"]["where"].endswith(
        "telco_tools.py:add_credit"
    )
    assert "in add_credit" in verdict["details"]["traceback"]
