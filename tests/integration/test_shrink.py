"""`usersim shrink` through the CLI: planted long failures of the flawed bank agent reduced to their
known minimal cause, the shrunk cases re-run against the flawed and the correct agent, the report's
section, determinism, the budget, `promote --shrink`, and the error paths.

The planted data (tests/integration/data/shrink) says what the minimal cause is: a static
conversation of nine user turns with chatty messages and a full customer profile, and an organic one
whose persona has twelve facts and five events. With the correct agent as --against, only what the
correct agent needs to pass while the flawed one still blocks the wrong card may remain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.integration.test_cli_run import records
from tests.support.cli import REPO, usersim

FLAWED, GOOD = "python:examples.bank.agent:flawed", "python:examples.bank.agent:correct"
DATA = Path(__file__).parent / "data" / "shrink"
STATIC, ORGANIC = "SHRINK-STATIC-01|r0", "SHRINK-ORGANIC-01|r0"


@pytest.fixture(scope="module")
def bank(tmp_path_factory) -> Path:
    """A copy of the bank example with the planted cases and persona added."""
    root = tmp_path_factory.mktemp("shrink") / "bank"
    shutil.copytree(REPO / "examples" / "bank", root)
    for f in DATA.glob("*.yaml"):
        shutil.copy(f, root / "cases" / f.name)
    shutil.copy(DATA / "personas" / "priya-noisy.yaml", root / "personas")
    return root


def _run(bank: Path, agent: str, name: str, *targets: str) -> Path:
    out = bank.parent / name
    ids = [a for t in targets or (STATIC, ORGANIC) for a in ("--id", t.split("|")[0])]
    usersim(
        "run", str(bank / "cases"), *ids, "--agent", agent, "--out", str(out), "--no-progress", check=False
    )
    return out


@pytest.fixture(scope="module")
def flawed_run(bank) -> Path:
    out = _run(bank, FLAWED, "flawed")
    assert {r["id"]: r["status"] for r in records(out)} == {STATIC: "failed", ORGANIC: "failed"}
    return out


def _shrink(run: Path, record: str, to: Path, *more: str, check: bool = True):
    res = usersim(
        "shrink",
        str(run),
        record,
        "--to",
        str(to),
        "--cases",
        str(to.parent / "bank" / "cases"),
        *more,
        check=check,
    )
    if not check:
        return res, None, None
    path = Path(res.stdout.strip())
    return res, path, yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def static_shrunk(flawed_run):
    return _shrink(flawed_run, STATIC, flawed_run.parent / "reg", "--against", GOOD)


@pytest.fixture(scope="module")
def organic_shrunk(flawed_run):
    return _shrink(
        flawed_run, ORGANIC, flawed_run.parent / "reg", "--against", GOOD, "--check", "tool_called"
    )


def _after_run(path: Path, agent: str, name: str) -> dict:
    out = path.parent.parent / f"rerun-{path.stem}-{name}"
    usersim("run", str(path), "--agent", agent, "--out", str(out), "--no-progress", check=False)
    (rec,) = records(out)
    return rec


def _failing(rec: dict) -> set[str]:
    return {v["judge"] for v in rec["verdicts"] if v["counts_toward_status"] and v["verdict"] == "fail"}


def test_a_static_failure_shrinks_to_the_four_turns_and_the_profile_rows_that_matter(static_shrunk):
    res, path, case = static_shrunk
    users = [m["content"] for m in case["input"]["history"] if m["role"] == "user"]
    live = [case["input"]["message"], *case["input"].get("script", [])]
    # kept: the customer-ID turn and the date-of-birth turn (with its tool results), the line naming
    # the card and the yes; gone: the greeting, the opening, two chatty lines and the goodbye
    # the date-of-birth turn stays for the verification and profile after it, but its words do not
    # matter (the history already verified the customer): one of its two sentences is left
    assert users[0] == "My customer ID is C-1003." and len(users) == 2
    assert users[1] in ("Let me check my ID card.", "My date of birth is 1978-07-21.")
    assert live == ["It's the card ending in 7788, the blue one.", "Yes, go ahead."]
    tools = {m["name"]: json.loads(m["content"]) for m in case["input"]["history"] if m["role"] == "tool"}
    # the profile keeps only the two active cards the flaw chooses between; the rest was noise
    assert tools["get_customer"] == {
        "cards": [
            {
                "card_id": "K-3002",
                "customer_id": "C-1003",
                "account_id": "A-2005",
                "last4": "1111",
                "status": "active",
            },
            {
                "card_id": "K-3003",
                "customer_id": "C-1003",
                "account_id": "A-2005",
                "last4": "7788",
                "status": "active",
            },
        ]
    }
    assert tools["verify_customer"] == {}
    shrink = case["promoted_from"]["shrink"]
    assert shrink["sizes"]["turns"] == [9, 4] and shrink["sizes"]["noise"] == [14, 3]
    assert shrink["shrunk"].startswith("9 turns → 4, 14 tool-result fields → 3, 20 state rows → 1, ")
    assert shrink["check"].startswith("final_state ") and shrink["against"] == GOOD
    assert shrink["complete"] is True and shrink["runs_used"] <= shrink["budget"] == 100
    assert case["promoted_from"]["record_id"] == STATIC and "shrunk" in case["tags"]
    assert f"shrunk: {shrink['shrunk']}" in res.stderr
    # the fixture keeps the customer the replayed history reads and the cards the check names, inline;
    # the tools and the policy stay relative references, like promote writes them
    state = case["environment"]["state"]
    assert [c["customer_id"] for c in state["customers"]] == ["C-1003"]
    assert [c["card_id"] for c in state["cards"]] == ["K-3002", "K-3003"]
    assert state["accounts"] == state["transactions"] == []
    assert case["environment"]["tools"][0] == {"python": "../bank/bank_tools.py"}
    assert case["policy"] == "../bank/policy.md"


def test_the_shrunk_static_case_is_valid_fails_the_flawed_agent_and_passes_the_good_one(static_shrunk):
    _, path, _ = static_shrunk
    usersim("validate", str(path))
    bad = _after_run(path, FLAWED, "flawed")
    assert bad["status"] == "failed" and "final_state" in _failing(bad)
    assert any(
        "K-3002: status=blocked" in v["reason"] for v in bad["verdicts"] if v["judge"] == "final_state"
    )
    assert _after_run(path, GOOD, "good")["status"] == "passed"


def test_an_organic_failure_keeps_the_three_facts_the_bank_needs_and_no_event(organic_shrunk):
    res, path, case = organic_shrunk
    over = case["persona_overrides"]
    assert [f["slot"] for f in over["known_info"]] == ["customer_id", "date_of_birth", "card_last4"]
    assert over["events"] == []
    assert over["opening_message"] == "Hi there."  # one of the opening's four sentences is enough
    assert case["persona"] == "../bank/personas/priya-noisy.yaml"
    shrink = case["promoted_from"]["shrink"]
    assert shrink["shrunk"] == "5 events → 0, 12 facts → 3, 20 state rows → 1, 4 sentences → 1"
    assert shrink["check"].startswith("tool_called ")
    assert "12 facts → 3" in res.stderr
    usersim("validate", str(path))
    bad = _after_run(path, FLAWED, "flawed")
    assert bad["status"] == "failed" and "tool_called" in _failing(bad)
    good = _after_run(path, GOOD, "good")
    assert good["status"] == "passed", good["verdicts"]


def test_the_run_report_shows_each_shrunk_case_next_to_its_original(
    flawed_run, static_shrunk, organic_shrunk
):
    report = (flawed_run / "report.html").read_text(encoding="utf-8")
    assert 'id="shrunk"' in report and "Shrunk cases (2)" in report
    section = report.split('id="shrunk"', 1)[1].split("</section>", 1)[0]
    assert '<a href="#r0">SHRINK-STATIC-01|r0</a>' in section or "SHRINK-STATIC-01|r0</a>" in section
    assert '<td>user turns</td><td class="num">9</td><td class="num">4</td>' in section
    assert '<td>persona facts</td><td class="num">12</td><td class="num">3</td>' in section
    assert "I will block your card ending in 1111. Shall I go ahead?" in section  # the shrunk conversation
    entries = json.loads((static_shrunk[1].parent / "shrink.json").read_text(encoding="utf-8"))["shrinks"]
    assert [e["record"] for e in entries] == [STATIC, ORGANIC]
    assert usersim("report", str(flawed_run)).returncode == 0  # a rebuilt report keeps the section
    assert "Shrunk cases (2)" in (flawed_run / "report.html").read_text(encoding="utf-8")


def test_a_tiny_budget_gives_a_partial_valid_case_and_promote_shrink_gives_the_same_one(flawed_run):
    root = flawed_run.parent
    res_a, path_a, case_a = _shrink(flawed_run, STATIC, root / "tiny-a", "--against", GOOD, "--budget", "24")
    res_b = usersim(
        "promote", str(flawed_run), STATIC, "--shrink", "--against", GOOD, "--budget", "24",
        "--to", str(root / "tiny-b"), "--cases", str(root / "bank" / "cases"),
    )  # fmt: skip
    path_b = Path(res_b.stdout.strip())
    assert path_b.name == path_a.name
    assert path_b.read_text(encoding="utf-8") == path_a.read_text(encoding="utf-8")  # deterministic
    shrink = case_a["promoted_from"]["shrink"]
    assert shrink["complete"] is False and shrink["runs_used"] <= 24
    assert "partial: the budget of 24 runs ran out first" in res_a.stderr
    assert 4 < shrink["sizes"]["turns"][1] < 9  # some turns went, not all that could
    usersim("validate", str(path_a))
    assert _after_run(path_a, FLAWED, "flawed")["status"] == "failed"


def test_error_paths_name_the_thing(bank, flawed_run):
    root = flawed_run.parent
    res, _, _ = _shrink(flawed_run, "NOPE|r0", root / "e1", check=False)
    assert res.returncode == 1 and "No record 'NOPE|r0'" in res.stderr and STATIC in res.stderr
    res, _, _ = _shrink(root / "no-such-run", STATIC, root / "e2", check=False)
    assert res.returncode == 2 and "run folder" in res.stderr and "no-such-run" in res.stderr
    good = _run(bank, GOOD, "good", STATIC)
    res, _, _ = _shrink(good, STATIC, root / "e3", check=False)
    assert res.returncode == 1 and f"nothing to shrink: record {STATIC} passed" in res.stderr
    res, _, _ = _shrink(flawed_run, STATIC, root / "e4", "--check", "task_completion", check=False)
    assert res.returncode == 1 and "does not fail check 'task_completion'" in res.stderr
    # a "good" agent that fails the original too cannot be shrunk against
    res, _, _ = _shrink(flawed_run, STATIC, root / "e5", "--against", FLAWED, check=False)
    assert res.returncode == 1 and f"with {FLAWED} it failed" in res.stderr
    res, _, _ = _shrink(flawed_run, STATIC, root / "e6", "--against", GOOD, "--budget", "1", check=False)
    assert res.returncode == 1 and "--budget 1 is too small" in res.stderr
    res = usersim("shrink", str(flawed_run), STATIC, "--to", str(root / "e7"), check=False)
    assert res.returncode == 1 and "Unknown case 'SHRINK-STATIC-01'" in res.stderr and "--cases" in res.stderr
    assert not any((root / f"e{i}").exists() for i in range(1, 8))  # nothing written on an error
