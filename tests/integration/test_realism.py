"""`usersim realism`: the bank example's rule-simulated users (50 conversations) against ten human
conversations (tests/data/realism/bank_human_turns.yaml, replayed through the same graph as static
cases with the organic cases' ids, personas and checks). What the report must say: which traits
are outside the human range and by how much, the agent's success inflation, the same simulator
against itself within range everywhere, too few conversations exit 3, bad input exit 2."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

TURNS = yaml.safe_load((REPO / "tests" / "data" / "realism" / "bank_human_turns.yaml").read_text("utf-8"))
AGENT = "python:examples.bank.agent:correct"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("realism")
    bank = root / "bank"
    shutil.copytree(REPO / "examples" / "bank", bank, ignore=shutil.ignore_patterns("__pycache__"))
    human_cases = bank / "human"
    human_cases.mkdir()
    for path in sorted((bank / "cases").glob("bank-*.yaml")):
        case = yaml.safe_load(path.read_text("utf-8"))
        turns = TURNS[case["id"]]
        case.update(
            include="../cases/_suite.yaml", mode="static", input={"message": turns[0], "script": turns[1:]}
        )
        (human_cases / path.name).write_text(
            yaml.safe_dump(case, allow_unicode=True, sort_keys=False), "utf-8"
        )
    out = {"bank": bank, "sim": root / "sim", "sim2": root / "sim2", "human": root / "human"}
    usersim("run", str(bank / "cases"), "--agent", AGENT, "--repeats", "5", "--out", str(out["sim"]))
    usersim(
        "run",
        str(bank / "cases"),
        "--agent",
        AGENT,
        "--repeats",
        "2",
        "--seed",
        "9",
        "--out",
        str(out["sim2"]),
    )
    env = {"USERSIM_INCLUDE_PATH": str(bank / "cases")}
    human = usersim(
        "run", str(human_cases), "--agent", AGENT, "--out", str(out["human"]), env=env, check=False
    )
    assert human.returncode == 1, human.stdout + human.stderr  # the agent fails some human conversations
    return out


def _realism(runs: dict[str, Path], *extra: str, human: str = "human", check: bool = True):
    return usersim(
        "realism",
        str(runs["sim"]),
        "--human",
        str(runs[human]),
        "--cases",
        str(runs["bank"] / "cases"),
        *extra,
        check=check,
    )


def test_the_report_says_which_traits_are_outside_and_the_inflation(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    res = _realism(runs, "--out", str(tmp_path))
    report = json.loads((tmp_path / "realism.json").read_text("utf-8"))
    assert (report["simulated_conversations"], report["human_conversations"]) == (50, 10)
    traits = {t["key"]: t for t in report["traits"]}
    # the people volunteered their customer id up front; the rule simulator waits to be asked
    facts = traits["facts_unasked"]
    assert facts["status"] == "outside" and facts["human"]["mean"] >= 1.0 and facts["simulated"]["mean"] == 0
    assert facts["interval"][1] < 0
    # the simulated users say please / thank you; the people wrote "ok", "yeah", "ugh"
    assert traits["polite_share"]["status"] == "outside" and traits["polite_share"]["difference"] > 0
    assert traits["casual_share"]["status"] == "outside" and traits["casual_share"]["difference"] < 0
    assert traits["words_per_turn"]["status"] == "outside" and traits["words_per_turn"]["difference"] > 0
    # both write English; nobody gave up by stop reason: within, difference 0
    assert traits["in_language"]["status"] == "within" and traits["in_language"]["difference"] == 0
    # no proposal broke a constraint on either side: not judged, and said why
    assert traits["accepts_breaking"]["status"] == "too few"
    assert "applies to 0 simulated and 0 human" in traits["accepts_breaking"]["reason"]
    # the agent passes every simulated conversation and 7 of the 10 human ones
    success = report["success"]
    assert (success["simulated"]["mean"], success["human"]["mean"]) == (1.0, 0.7)
    assert success["status"] == "outside" and success["interval"][0] > 0
    lines = res.stdout.strip().splitlines()
    assert re.fullmatch(
        r"realism: \d/\d traits within the human range, distance \d+\.\d\d; outside: .*facts revealed unasked.*"
        r"; agent success inflated by \+30 pts \[\+\d+, \+\d+\]",
        lines[-1],
    ), lines[-1]
    assert any(line.startswith("facts revealed unasked") and "outside" in line for line in lines)
    page = (tmp_path / "realism.html").read_text("utf-8")
    charted = [t for t in report["traits"] if t["simulated"]["n"] + t["human"]["n"]]
    assert page.count("<svg") == len(charted) + 1  # a chart per trait measured, and the success rate
    assert "accepts a constraint-breaking proposal: no conversation where it applies." in page
    assert "simulated (n=50)" in page and "human (n=10)" in page and report["line"] in page


def test_the_same_simulator_on_both_sides_is_within_range_everywhere(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    res = _realism(runs, "--out", str(tmp_path), human="sim2")
    report = json.loads((tmp_path / "realism.json").read_text("utf-8"))
    judged = [t for t in report["traits"] if t["status"] != "too few"]
    assert judged and all(t["status"] == "within" for t in judged), [t["reason"] for t in judged]
    assert report["distance"] < 0.1 and report["score"] == 1  # the rule simulator varies a little by seed
    assert (
        res.stdout.strip().splitlines()[-1].startswith(f"realism: {len(judged)}/{len(judged)} traits within")
    )


def test_too_few_conversations_exit_3_saying_how_many(runs: dict[str, Path]) -> None:
    res = _realism(runs, "--case-family", "BANK-01", check=False)
    assert res.returncode == 3
    assert res.stderr.strip().splitlines()[-1] == (
        "realism: too few conversations to compare: 5 simulated and 1 human; at least 5 per side are "
        "needed (30+ per side for intervals narrow enough to defend): exit 3"
    )


def test_bad_input_names_what_and_exits_2(runs: dict[str, Path], tmp_path: Path) -> None:
    res = usersim("realism", str(runs["sim"]), "--human", str(tmp_path / "nope"), check=False)
    assert res.returncode == 2
    assert f"Error: --human: {tmp_path / 'nope'} is not a run folder (no results.jsonl)" in res.stderr
    res = usersim("realism", str(runs["sim"]), "--human", str(runs["human"]), check=False)  # no --cases
    assert res.returncode == 2
    assert "case BANK-01 is not in the case library; pass its folder with --cases" in res.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.jsonl").write_text('{"id": "x"}\n', "utf-8")
    res = _realism({**runs, "broken": broken}, human="broken", check=False)
    assert res.returncode == 2 and f"{broken / 'results.jsonl'}:1:" in res.stderr


def test_calibration_moves_traits_into_range_and_writes_new_personas(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    originals = {p: p.read_bytes() for p in (runs["bank"] / "personas").glob("*.yaml")}
    res = _realism(runs, "--out", str(tmp_path), "--calibrate", "--agent", AGENT, "--rounds", "2")
    report = json.loads((tmp_path / "realism.json").read_text("utf-8"))
    rows = {r["what"]: r for r in report["calibration"]}
    # the rule simulator waits to be asked; people volunteer: reveal_policy gradually closes the gap
    facts = rows["facts revealed unasked"]
    assert facts["before"].startswith("outside") and facts["after"].startswith("within"), facts
    changed = [r for w, r in rows.items() if w.startswith("persona ") and "→" in r["after"]]
    assert changed and any("reveal_policy when_asked → gradually" in r["after"] for r in changed)
    # what no knob moved is said, not hidden
    assert "still outside" in rows and "polite turns" in rows["still outside"]["before"]
    line = next(x for x in res.stdout.splitlines() if x.startswith("calibration ("))
    assert re.search(r"(\d)/8 traits within before, (\d)/8 after", line)
    before, after = map(int, re.search(r"(\d)/8 traits within before, (\d)/8 after", line).groups())  # type: ignore[union-attr]
    assert after > before
    tuned = sorted((tmp_path / "personas").glob("*.yaml"))
    assert len(tuned) == len(changed)
    text = tuned[0].read_text("utf-8")
    assert text.startswith("# ") and "tuned by `usersim realism --calibrate`" in text
    usersim("validate", str(tmp_path / "personas"))  # the tuned personas are valid persona files
    assert {p: p.read_bytes() for p in originals} == originals  # the originals are untouched
    assert "Calibration: before / after" in (tmp_path / "realism.html").read_text("utf-8")


def test_calibrate_needs_an_agent_and_the_cases(runs: dict[str, Path]) -> None:
    res = usersim("realism", str(runs["sim"]), "--human", str(runs["human"]), "--calibrate", check=False)
    assert res.returncode == 2
    assert "--calibrate runs conversations: give --agent SPEC" in res.stderr


def test_sessions_recorded_with_play_are_the_human_side_counting_only_the_persons_turns(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Five BANK-01 sessions typed in `usersim play` (two with --take-over 2: the rule simulator
    says the polite opening, the person the rest) against the simulated BANK-01 conversations."""
    from tests.support.pty_session import PtySession

    out = tmp_path / "played"
    scripts = [
        ([], ["lost my card. block it", "C-1001", "1985-03-14", "ok", "/done"]),
        ([], ["card gone, C-1001 dob 1985-03-14", "yes", "/done"]),
        ([], ["block my debit card", "C-1001", "1985-03-14", "sure", "/done"]),
        (["--take-over", "2"], ["C-1001", "1985-03-14", "yep", "/done"]),
        (["--take-over", "2"], ["C-1001 and dob 1985-03-14", "ok", "/done"]),
    ]
    for extra, lines in scripts:
        s = PtySession(
            "play",
            "BANK-01",
            "--cases",
            str(runs["bank"] / "cases"),
            "--agent",
            AGENT,
            "--out",
            str(out),
            *extra,
        )
        for line in lines:
            s.type(line)
        assert s.wait() == 0, s.screen
    res = usersim(
        "realism",
        str(runs["sim"]),
        "--human",
        str(out),
        "--cases",
        str(runs["bank"] / "cases"),
        "--case-family",
        "BANK-01",
        "--out",
        str(tmp_path / "r2"),
    )
    report = json.loads((tmp_path / "r2" / "realism.json").read_text("utf-8"))
    assert (report["simulated_conversations"], report["human_conversations"]) == (5, 5)
    traits = {t["key"]: t for t in report["traits"]}
    # the person typed no "please": the rule simulator's opening in the shared sessions is not theirs
    assert traits["polite_share"]["human"]["mean"] == 0
    typed = [[x for x in lines if not x.startswith("/")] for _, lines in scripts]
    from usersim.reports.realism_measures import words

    expected = sum(sum(words(x) for x in t) / len(t) for t in typed) / len(typed)
    assert traits["words_per_turn"]["human"]["mean"] == pytest.approx(expected)
    assert report["success"]["human"]["mean"] == 1.0  # the correct agent passed every session
    assert res.stdout.strip().splitlines()[-1].startswith("realism: ")
