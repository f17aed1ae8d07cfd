"""`usersim run` exit codes come from the one gate (usersim.core.gate): 0 green, 1 any failed or
errored (--strict: also unjudged; --fail-under relaxes it), 3 the only non-passes are inconclusive,
2 usage errors. The status is the truth: a simulator-suspect failure is a failure."""

from __future__ import annotations

import json

import pytest

import usersim
from tests.reports.factory import record
from tests.support.cli import usersim as cli
from usersim.cli.run import exit_for
from usersim.core.gate import decide


def recs(*statuses: str, suspect: bool = False):
    return [
        record(f"B1-EI-{i:02d}", status=s).model_copy(update={"simulator_suspect": suspect})
        for i, s in enumerate(statuses)
    ]


@pytest.mark.parametrize(
    ("statuses", "strict", "code"),
    [
        (("passed", "passed"), False, 0),
        (("passed", "unjudged"), False, 0),  # unjudged is not a failure by default ...
        (("passed", "unjudged"), True, 1),  # ... and is one with --strict
        (("passed", "failed"), False, 1),
        (("passed", "error"), False, 1),
        (("passed", "inconclusive"), False, 3),
        (("passed", "inconclusive", "unjudged"), False, 3),
        (("passed", "inconclusive", "unjudged"), True, 1),
        (("inconclusive", "failed"), False, 1),  # a failure outranks inconclusive
        ((), False, 1),  # nothing ran is not green
        (("unjudged", "unjudged"), False, 3),  # nothing judged is not a pass ...
        (("unjudged", "unjudged"), True, 1),  # ... and with --strict a failure
        (("unjudged", "inconclusive"), False, 3),
        (("unjudged", "failed"), False, 1),
    ],
)
def test_gate_exit_code_for_each_mix(statuses, strict, code):
    gate = decide(recs(*statuses), strict=strict)
    assert gate.exit_code == code and gate.passed is (code == 0)


def test_nothing_judged_says_so_and_only_an_explicit_allow_makes_it_green():
    gate = decide(recs("unjudged", "unjudged", "unjudged"))
    assert gate.nothing_judged and gate.exit_code == 3
    assert gate.reason == (
        "pass rate 0/0 = — (left out: 3 unjudged); nothing was judged: 3 of 3 conversation(s) unjudged "
        "(a criterion no judge could decide), nothing judged is not a pass (give the run the judge its "
        "criteria need, e.g. --judge-model, or accept it with --allow-unjudged): exit 3"
    )
    allowed = decide(recs("unjudged", "unjudged"), allow_unjudged=True)
    assert allowed.passed and allowed.exit_code == 0
    assert "nothing was judged (2 unjudged), accepted by --allow-unjudged: exit 0" in allowed.reason
    # allowing unjudged does not hide anything else: an inconclusive or failed one still counts
    assert decide(recs("unjudged", "inconclusive"), allow_unjudged=True).exit_code == 3
    assert decide(recs("unjudged", "failed"), allow_unjudged=True).exit_code == 1
    # one judged conversation beside the unjudged ones keeps the old rule
    assert decide(recs("passed", "unjudged")).exit_code == 0
    with pytest.raises(ValueError, match="contradict"):
        decide(recs("unjudged"), strict=True, allow_unjudged=True)
    # --fail-under does not make 0/0 a pass either
    assert decide(recs("unjudged", "unjudged"), fail_under=0.5).exit_code == 3


def test_a_simulator_suspect_failure_is_a_failure(capsys):
    # simulator_suspect is a display field: the gate reads the status only
    with pytest.raises(SystemExit) as exc:
        exit_for(recs("passed", "failed", suspect=True), None)
    assert exc.value.code == 1
    assert (
        "1 of 2 conversation(s) failed or errored; pass rate 1/2 = 50.0%: exit 1" in capsys.readouterr().err
    )


def test_fail_under_keeps_its_meaning_and_inconclusive_still_exits_3(capsys):
    mix = recs("passed", "passed", "failed", "unjudged")
    exit_for(mix, 0.6)  # 2 of (passed + failed + error) = 3 passed; the unjudged is left out
    assert (
        "pass rate 2/3 = 66.7% (left out: 1 unjudged) >= --fail-under 60.0%: exit 0"
        in capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as exc:
        exit_for(mix, 70)
    assert exc.value.code == 1
    with pytest.raises(SystemExit) as exc:  # the error counts as judged and not passed: 2/4 < 60%
        exit_for([*mix, *recs("error")[:1]], 0.6)
    assert exc.value.code == 1
    with pytest.raises(SystemExit) as exc:  # the failure is relaxed, the inconclusive one is not
        exit_for([*mix, record("C2-TD-09", status="inconclusive")], 0.6)
    assert exc.value.code == 3
    assert "1 inconclusive conversation(s): exit 3" in capsys.readouterr().err


def _fake_suite(monkeypatch, records):
    """`usersim run` with the conversations replaced by crafted records (everything else real:
    options, case selection, printing, the gate). Used where no bundled agent produces the status."""

    async def run_suite(cases, cfg, out):
        return records

    monkeypatch.setattr("usersim.graphs.runner.run_suite", run_suite)  # cli.run imports it when a run starts


def test_cli_exit_0_for_a_good_agent(tmp_path):
    res = cli("run", "--id", "B1-EI-01", "--out", str(tmp_path / "r"), "--no-progress", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "passed: 2; pass rate 2/2 = 100.0%" in res.stdout


def test_cli_exit_1_for_a_flawed_agent_and_the_api_agrees(tmp_path):
    args = ["--id", "B1-CL-01", "--agent", "reference:flaw=no-clarify", "--no-progress"]
    res = cli("run", *args, "--out", str(tmp_path / "cli"), check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "conversation(s) failed or errored; pass rate 0/2 = 0.0%: exit 1" in res.stderr
    api = usersim.run("B1-CL-01", agent="reference:flaw=no-clarify", out=tmp_path / "api")
    assert not api.passed and api.gate().exit_code == res.returncode
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text(encoding="utf-8"))
    assert summary["gate"]["default"]["exit_code"] == 1 and summary["gate"]["default"]["passed"] is False


def test_cli_unjudged_exits_0_by_default_and_1_with_strict_and_the_api_agrees(tmp_path):
    base = ["run", "--id", "B1-EI-04", "--id", "B1-EI-01", "--no-progress"]  # EI-04 needs an LLM judge
    res = cli(*base, "--out", str(tmp_path / "a"), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "passed: 2, unjudged: 2; pass rate 2/2 = 100.0% (left out: 2 unjudged)" in res.stdout
    strict = cli(*base, "--strict", "--out", str(tmp_path / "b"), check=False)
    assert strict.returncode == 1
    assert "2 of 4 conversation(s) failed, errored or were unjudged (--strict); pass rate 2/4 = 50.0%" in (
        strict.stderr
    )
    api = usersim.run(["B1-EI-04", "B1-EI-01"], out=tmp_path / "api")
    assert api.passed and api.passed() and not api.passed(strict=True)
    assert (api.gate().exit_code, api.gate(strict=True).exit_code) == (res.returncode, strict.returncode)
    assert not usersim.run(["B1-EI-04"], out=tmp_path / "api2", strict=True).passed
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["pass_rate_text"] == "2/2 = 100.0% (left out: 2 unjudged)"
    assert summary["totals"]["left_out"] == {"unjudged": 2}
    assert (summary["gate"]["default"]["exit_code"], summary["gate"]["strict"]["exit_code"]) == (0, 1)


def test_cli_travel_cases_with_no_judge_for_their_rubric_exit_3_and_the_api_agrees(tmp_path):
    base = ["run", "--id", "C2-PR-01", "--id", "C2-SC-01", "--no-progress"]  # both need an LLM judge
    res = cli(*base, "--out", str(tmp_path / "a"), check=False)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "unjudged: 2; pass rate 0/0 = — (left out: 2 unjudged)" in res.stdout
    last = res.stderr.strip().splitlines()[-1]
    assert "nothing was judged: 2 of 2 conversation(s) unjudged" in last and "--judge-model" in last
    ok = cli(*base, "--allow-unjudged", "--out", str(tmp_path / "b"), check=False)
    assert ok.returncode == 0 and "accepted by --allow-unjudged: exit 0" in ok.stderr
    both = cli(*base, "--allow-unjudged", "--strict", "--out", str(tmp_path / "c"), check=False)
    assert both.returncode == 2 and "contradict" in both.stderr and not (tmp_path / "c").exists()
    api = usersim.run(["C2-PR-01", "C2-SC-01"], out=tmp_path / "api")
    assert not api.passed and api.gate().exit_code == 3
    assert api.passed(allow_unjudged=True)
    assert usersim.run(["C2-PR-01"], out=tmp_path / "api2", allow_unjudged=True).passed
    with pytest.raises(ValueError, match="contradict"):
        usersim.run(["C2-PR-01"], out=tmp_path / "api3", allow_unjudged=True, strict=True)


def test_cli_exit_3_when_only_inconclusive_and_every_one_is_listed(tmp_path, monkeypatch):
    inconclusive = [record(f"C2-PR-{i:02d}", status="inconclusive", blame="simulator") for i in range(7)]
    _fake_suite(monkeypatch, [record("B1-EI-01"), *inconclusive])
    res = cli("run", "--id", "B1-EI-01", "--out", str(tmp_path / "r"), "--no-progress", check=False)
    assert res.returncode == 3, res.stdout + res.stderr
    assert "passed: 1, inconclusive: 7; pass rate 1/1 = 100.0% (left out: 7 inconclusive)" in res.stdout
    listed = res.stdout.split("7 inconclusive conversation(s)")[1].splitlines()[0]
    assert all(r.id in listed for r in inconclusive)  # all seven, not the first five
    assert "7 inconclusive conversation(s) and nothing failed or errored: exit 3" in res.stderr


def test_cli_exit_2_for_usage_errors(tmp_path):
    res = cli("run", "--id", "B1-EI-01", "--agent", "refrence", "--out", str(tmp_path / "r"), check=False)
    assert res.returncode == 2 and "Did you mean 'reference'" in res.stderr
    res = cli("run", "--id", "NO-SUCH-01", "--out", str(tmp_path / "r"), check=False)
    assert res.returncode == 2


def test_help_documents_the_exit_codes_and_the_rate():
    out = cli("run", "--help").stdout
    for line in (
        "0  no conversation failed, errored or is inconclusive",
        "1  some conversation failed or errored (with --strict also: unjudged); with",
        "3  the only non-passes are inconclusive",
        "or nothing was judged (every",
        "--allow-unjudged",
        "2  usage error",
        "Pass rate = passed / (passed + failed + error)",
        "--strict",
    ):
        assert line in out, line
