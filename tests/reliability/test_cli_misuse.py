"""Hostile command lines and folders: every misuse ends in one clear line and a non-zero exit,
never a traceback; bad files are reported with file:line and skipped; run folders have one writer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import usersim
from tests.support.openai_stub import openai_stub  # noqa: F401, F811  (fixture)
from usersim.cases.loader import CASES_DIR, load_case
from usersim.core.yamlfile import FileProblems
from usersim.graphs.store import FolderLock, RunStore

GOOD = CASES_DIR / "b1" / "B1-EI-01.yaml"


def _no_traceback(res) -> None:
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, res.stderr[-3000:]


def _problems(path: Path) -> list[str]:
    try:
        load_case(path)
    except FileProblems as exc:
        return [str(p) for p in exc.problems]
    return []


# --- bad files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "    methods: [auto]",
            "    methods: 5",
            "{line}: judging.scoring.methods: Input should be a valid list",
        ),
        (
            "    methods: [auto]",
            "    methods: [[auto]]",
            "{line}: judging.scoring.methods.0: Input should be",
        ),
        ("difficulty: easy", "difficulty: [easy]", "{line}: difficulty: Input should be"),
        (
            '  current_date: "2026-04-07"',
            "  current_date: 2026-13-45",
            "{line}: context.current_date: cannot read '2026-13-45'",
        ),
        (
            "mode: static",
            "mode: static\nmax_turns: !!int abc",
            "{line2}: max_turns: cannot read 'abc' as int",
        ),
        ("mode: static", "mode: static\nid: renamed", "{line2}: id: duplicate key 'id' (first at line 1)"),
    ],
)
def test_wrong_types_and_bad_scalars_are_problems_with_file_line(tmp_path, old, new, expected):
    text = GOOD.read_text(encoding="utf-8")
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    path = tmp_path / "case.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    problems = _problems(path)
    assert problems and all(p.startswith(f"{path}:") for p in problems)
    want = f"{path}:" + expected.format(line=line, line2=line + 1)
    assert any(p.startswith(want) for p in problems), (want, problems)


def test_a_huge_value_is_quoted_short(tmp_path):
    path = tmp_path / "case.yaml"
    path.write_text(
        GOOD.read_text(encoding="utf-8") + "bogus_field: '" + "x" * 2_000_000 + "'\n", encoding="utf-8"
    )
    problems = _problems(path)
    assert problems and max(len(p) for p in problems) < 600


def test_includes_stay_inside_the_case_folders_and_nest_a_limited_depth(tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "base.yaml").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    case = suite / "case.yaml"
    case.write_text("include: /etc/hostname\nid: X-1\n", encoding="utf-8")
    assert any(":1: include: include '/etc/hostname' points outside" in p for p in _problems(case))
    case.write_text("include: ../elsewhere/base.yaml\nid: X-1\n", encoding="utf-8")
    assert any("USERSIM_INCLUDE_PATH" in p for p in _problems(case))
    monkeypatch.setenv("USERSIM_INCLUDE_PATH", str(outside))
    assert _problems(case) == []  # an explicit allow-list opens the folder
    assert load_case(case).id == "X-1"
    # a chain of 12 includes inside the suite folder stops at the depth limit
    (suite / "c0.yaml").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    for i in range(1, 12):
        (suite / f"c{i}.yaml").write_text(f"include: c{i - 1}.yaml\n", encoding="utf-8")
    assert any("includes nest deeper than 8 files" in p for p in _problems(suite / "c11.yaml"))
    assert _problems(suite / "c5.yaml") == []


def _suite_with_a_bad_file(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(GOOD, suite / "B1-EI-01.yaml")
    (suite / "broken.yaml").write_bytes(b"id: BROKEN\ntitle: \xff\n")
    return suite


def test_cases_list_reports_the_bad_file_and_lists_the_others(tmp_path):
    res = usersim("cases", "list", str(_suite_with_a_bad_file(tmp_path)), check=False)
    _no_traceback(res)
    assert res.returncode == 2
    assert "B1-EI-01" in res.stdout
    assert "broken.yaml:2: <file>: not UTF-8 text" in res.stderr


def test_run_exits_2_before_any_model_call_when_a_selected_file_is_bad(tmp_path, openai_stub):  # noqa: F811
    out = tmp_path / "out"
    res = usersim(
        "run",
        str(_suite_with_a_bad_file(tmp_path)),
        "--agent",
        "openai:gpt-x",
        "--out",
        str(out),
        check=False,
    )
    _no_traceback(res)
    assert res.returncode == 2
    assert "broken.yaml:2:" in res.stderr
    assert openai_stub.requests == [] and not out.exists()


def test_run_of_a_missing_path_is_one_line(tmp_path):
    res = usersim("run", str(tmp_path / "nonexistent"), "--out", str(tmp_path / "o"), check=False)
    _no_traceback(res)
    assert res.returncode == 2 and "No such case file or directory" in res.stderr


# --- run folders -----------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under_a_file", "a_file", "dev_null", "proc"])
def test_unusable_out_paths_are_refused_before_work(tmp_path, where):
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    out = {
        "under_a_file": afile / "run",
        "a_file": afile,
        "dev_null": Path("/dev/null"),
        "proc": Path("/proc/usersim-run"),
    }[where]
    res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    _no_traceback(res)
    assert res.returncode != 0
    error = [line for line in res.stderr.splitlines() if line.startswith("Error")]
    assert len(error) == 1, res.stderr  # one clear line (click may add its usage hint above it)
    assert str(out) in error[0] or str(afile) in error[0]


def test_a_corrupt_results_store_names_the_file_and_a_way_out(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.sqlite").write_bytes(b"this is not a database\n" * 200)
    res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    _no_traceback(res)
    assert res.returncode != 0
    assert f"{out / 'results.sqlite'} is not a usable run store" in res.stderr
    assert "Move it aside" in res.stderr


def test_a_corrupt_record_row_names_the_store_and_the_record(tmp_path):
    import sqlite3

    out = tmp_path / "run"
    usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    db = sqlite3.connect(out / "results.sqlite")
    db.execute("UPDATE records SET record = '{not json'")
    db.commit()
    db.close()
    res = usersim("rescore", str(out), check=False)
    _no_traceback(res)
    assert res.returncode != 0 and "results.sqlite (record 'B1-EI-01" in res.stderr


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    first = FolderLock(out)
    first.acquire()  # what a running `usersim run --out run` holds
    try:
        res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
        _no_traceback(res)
        assert res.returncode != 0
        assert "is in use by another usersim command (pid" in res.stderr
        assert not (out / "results.jsonl").exists()
    finally:
        first.release()
    res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    assert (out / "results.jsonl").is_file()  # free again once the first writer is done


def test_two_stores_on_one_folder_cannot_be_open_at_once(tmp_path):
    a = RunStore(tmp_path / "results.sqlite")
    try:
        with pytest.raises(ValueError, match="in use by another usersim command"):
            RunStore(tmp_path / "results.sqlite")
    finally:
        a.close()
    RunStore(tmp_path / "results.sqlite").close()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--id", "B1-CL-01"], "holds a run of a different suite"),
        (["--id", "B1-EI-01", "--seed", "9"], "was run with seed=0, not 9"),
        (["--id", "B1-EI-01", "--agent", "reference:window-2"], "was run with agent='reference'"),
        (["--id", "B1-EI-01", "--judge-model", "openai:judge-x"], "was run with judge_model=None"),
    ],
)
def test_resume_refuses_a_folder_of_another_run(tmp_path, change, message):
    out = tmp_path / "run"
    usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    before = (out / "results.jsonl").read_text(encoding="utf-8")
    res = usersim("run", *change, "--resume", "--out", str(out), "--no-progress", check=False)
    _no_traceback(res)
    assert res.returncode != 0 and message in res.stderr, res.stderr
    assert (out / "results.jsonl").read_text(encoding="utf-8") == before  # nothing merged


def test_a_non_utf8_results_file_is_one_problem_line_not_a_traceback(tmp_path):
    out = tmp_path / "run"
    usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    jsonl = out / "results.jsonl"
    jsonl.write_bytes(jsonl.read_bytes() + b'{"id": "\xff\xfe"}\n')
    res = usersim("report", str(out), check=False)
    _no_traceback(res)
    assert res.returncode == 2
    assert f"{jsonl}:3: <file>: not UTF-8 text" in res.stderr


def test_an_os_error_in_any_command_is_one_line(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    res = usersim("persona", "new", "someone", "--to", str(afile / "sub"), check=False)
    _no_traceback(res)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [f"Error: Not a directory: {afile / 'sub'}"]


def test_a_writer_in_another_process_is_seen(tmp_path):
    """The lock is an OS-level flock: a second process sees the first one's pid."""
    import subprocess
    import sys

    out = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from usersim.graphs.store import run_folder_lock\n"
            "with run_folder_lock(Path(sys.argv[1])):\n    print('locked', flush=True); time.sleep(60)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
        assert res.returncode != 0 and f"(pid {holder.pid} since" in res.stderr
    finally:
        holder.kill()
        holder.wait()
    res = usersim("run", "--id", "B1-EI-01", "--out", str(out), "--no-progress", check=False)
    assert (out / "results.jsonl").is_file()  # kill -9 of the holder leaves no stale lock


def test_a_full_disk_mid_run_is_one_line_and_keeps_finished_records(tmp_path, monkeypatch):
    import sqlite3

    from usersim.graphs import store as store_mod

    real_put = store_mod.RunStore.put
    calls = {"n": 0}

    def put(self, record, ordinal, text=None):
        calls["n"] += 1
        if calls["n"] == 2:  # the store stops accepting writes (as on a full disk): a real sqlite3 error
            self._db.close()
        real_put(self, record, ordinal, text)

    monkeypatch.setattr(store_mod.RunStore, "put", put)
    out = tmp_path / "run"
    args = [
        "run",
        "--id",
        "B1-EI-01",
        "--id",
        "B1-CL-01",
        "--out",
        str(out),
        "--no-progress",
        "--concurrency",
        "1",
    ]
    res = usersim(*args, check=False)
    _no_traceback(res)
    assert res.returncode == 1 and "results.sqlite: cannot store record 'B1-" in res.stderr
    assert "the records stored before it are kept" in res.stderr
    db = sqlite3.connect(out / "results.sqlite")
    kept = db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    db.close()
    assert kept == 1  # the conversation that finished before the failure is kept
    monkeypatch.setattr(store_mod.RunStore, "put", real_put)
    res = usersim(*args, "--resume", check=False)
    rows = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 4  # 2 cases x groups A/B: nothing lost, nothing duplicated
