"""Seeded mutation fuzz over case, persona and SKILL.md files through `usersim validate`.

Each mutant must come back as "valid" or as problems that each name the mutant's file and a line;
no exception may escape, no call may take more than a few seconds (billion laughs, deep nesting
and include chains are refused before anything big is built), and no problem may come from the
"internal error" safety net (that would be a validator crashing on a wrong type).
"""

from __future__ import annotations

import random
import resource
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from usersim.cli import main
from usersim.cli.cases import validate_file

pytestmark = pytest.mark.slow  # `make test-fast` leaves these out; `make test` and CI run them

ROOT = Path(__file__).resolve().parents[2] / "usersim"
SEED = 20261130
MUTANTS = 360
CALL_LIMIT_S = 3.0
MEMORY_LIMIT_MIB = 300

HOSTILE_SCALARS = [
    "2026-13-45",
    "!!int abc",
    "!!float xyz",
    "!!timestamp 2026-02-30",
    "!!binary '***'",
    "!!python/object:os.system ls",
    "5",
    "-1",
    "1e999",
    "[[auto]]",
    "[easy]",
    "{a: {b: {c: [1, 2, {d: e}]}}}",
    "null",
    "~",
    "''",
    "[]",
    "{}",
    "yes",
    "0x1F",
    "*undefined_alias",
    "&a [*a]",
    "'" + "x" * 5000 + "'",
    '"\\x00\\u202e"',
    "[" * 200 + "]" * 200,
    "? [a]\n  : b",
    "!!int " + "9" * 6000,
    "|\n  multi\n  line",
    "@reserved",
    "`backtick`",
    "{unclosed: [1, 2",
    "../../../../etc/passwd",
]

STRUCTURAL = [
    # billion laughs: 9^10 values if expanded
    "lol0: &l0 [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)),
    "deep: " + "[" * 3000 + "]" * 3000 + "\n",
    "".join("  " * i + f"k{i}:\n" for i in range(150)) + "  " * 150 + "v: 1\n",
    "include: /etc/passwd\n",
    "include: ../../../../../../etc/hostname\n",
    "include: {path: x}\n",
    "include: self.yaml\n",
    "id: duplicate-id\nid: other-id\n",
    "rec: &r {a: *r}\n",
    "---\nsecond: document\n",
    "\t tab: indent\n",
]


def _mutate(text: str, rng: random.Random) -> bytes:
    lines = text.splitlines(keepends=True) or ["\n"]
    op = rng.randrange(9)
    i = rng.randrange(len(lines))
    if op == 0:  # replace a value with a hostile scalar
        line = lines[i]
        if ":" in line:
            key = line.split(":", 1)[0]
            lines[i] = f"{key}: {rng.choice(HOSTILE_SCALARS)}\n"
        else:
            lines[i] = line.rstrip("\n") + " " + rng.choice(HOSTILE_SCALARS) + "\n"
    elif op == 1:  # insert a hostile structure at top level or at this line's indentation
        block = rng.choice(STRUCTURAL)
        if rng.random() < 0.5:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" "))]
            block = "".join(indent + b for b in block.splitlines(keepends=True))
        lines.insert(i, block)
    elif op == 2:  # duplicate a line (duplicate keys)
        lines.insert(i, lines[i])
    elif op == 3:  # delete lines
        del lines[i : i + rng.randint(1, 4)]
    elif op == 4:  # shift indentation
        lines[i] = ("  " + lines[i]) if rng.random() < 0.5 else lines[i].lstrip(" ")
    elif op == 5:  # swap two lines
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    data = "".join(lines).encode("utf-8")
    if op == 6:  # raw bytes: invalid UTF-8, control characters, NUL
        pos = rng.randrange(len(data) + 1)
        data = data[:pos] + bytes([rng.choice([0xFF, 0xC3, 0x00, 0x01, 0x1B, 0x7F, 0x85])]) + data[pos:]
    elif op == 7:  # truncated file
        data = data[: rng.randrange(len(data) + 1)]
    elif op == 8:  # a few random byte flips
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if buf:
                buf[rng.randrange(len(buf))] = rng.randrange(256)
        data = bytes(buf)
    return data


def _sources() -> list[tuple[str, Path]]:
    cases = sorted((ROOT / "cases").glob("*/*.yaml"))
    cases = [p for p in cases if not any(part in {"filler", "scaffold", "templates"} for part in p.parts)]
    personas = sorted((ROOT / "personas" / "library").glob("*.yaml"))
    skills = sorted((ROOT / "sandbox" / "skills").glob("*/SKILL.md"))
    assert cases and personas and skills
    return (
        [("case", p) for p in cases[:40]]
        + [("persona", p) for p in personas]
        + [("skill", p) for p in skills]
    )


class _Hang(BaseException):  # not caught by the validate safety net
    pass


def _alarm(signum, frame):
    raise _Hang


@pytest.fixture
def time_limit():
    old = signal.signal(signal.SIGALRM, _alarm)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


def _place(kind: str, src: Path, base: Path, n: int) -> Path:
    """Where the mutant goes so `validate` treats it as the same kind (and names still match)."""
    if kind == "skill":
        path = base / f"m{n}" / src.parent.name / "SKILL.md"
    elif kind == "persona":
        path = base / f"m{n}" / "personas" / src.name
    else:
        path = base / f"m{n}" / src.name
    path.parent.mkdir(parents=True)
    return path


def test_mutants_never_crash_hang_or_lose_the_line(tmp_path, time_limit):
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    rng = random.Random(SEED)
    sources = _sources()
    rejected = valid = 0
    slowest = 0.0
    for n in range(MUTANTS):
        kind, src = rng.choice(sources)
        path = _place(kind, src, tmp_path, n)
        path.write_bytes(_mutate(src.read_text(encoding="utf-8"), rng))
        started = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
        try:
            problems = validate_file(path)
        except _Hang:
            pytest.fail(f"validate hung (> {CALL_LIMIT_S}s) on mutant {n} of {src}: {path}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        slowest = max(slowest, time.perf_counter() - started)
        if not problems:
            valid += 1
            continue
        rejected += 1
        for p in problems:
            assert p.file.startswith(str(path.parent)) or p.file.startswith(str(ROOT)), (n, str(p))
            assert isinstance(p.line, int) and p.line >= 1, (n, str(p))
            assert "internal error" not in p.message, f"mutant {n} of {src}: {p}"
            assert len(str(p)) < 1000, f"mutant {n}: message too long ({len(str(p))} chars)"
    assert rejected > MUTANTS // 2, (rejected, valid)
    assert slowest < CALL_LIMIT_S
    # the same mutants through the commands: one report, no traceback
    persona_files = sorted(tmp_path.glob("m*/personas/*.yaml"))
    for args in (["persona", "lint", *map(str, persona_files)], ["validate", str(tmp_path)]):
        result = CliRunner().invoke(main, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args[:2],
            result.exception,
        )
        assert result.exit_code == 2 and "Traceback" not in result.output
    # billion laughs and friends are refused before anything big is built: the peak barely moves
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mib < MEMORY_LIMIT_MIB, f"peak memory grew by {grown_mib:.0f} MiB"


def test_validate_dir_reports_every_bad_file_and_still_checks_the_rest(tmp_path):
    """One folder with good and hostile files: every file is checked, exit 2, no traceback."""
    rng = random.Random(SEED + 1)
    good = sorted((ROOT / "cases" / "b1").glob("*.yaml"))[:3]
    for src in good:
        (tmp_path / src.name).write_bytes(src.read_bytes())
    (tmp_path / "bad_bytes.yaml").write_bytes(b"id: X\n\xff\xfe\n")
    (tmp_path / "bad_laughs.yaml").write_text(STRUCTURAL[0], encoding="utf-8")
    (tmp_path / "bad_scalar.yaml").write_text("id: Y\ndifficulty: [easy]\n", encoding="utf-8")
    for n in range(5):
        src = rng.choice(good)
        (tmp_path / f"mut{n}.yaml").write_bytes(_mutate(src.read_text(encoding="utf-8"), rng))
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code == 2
    out = result.output
    assert "bad_bytes.yaml:2: <file>: not UTF-8 text" in out
    assert "bad_laughs.yaml:" in out and "expand to more than" in out
    assert "bad_scalar.yaml:2: difficulty:" in out
    for src in good:
        assert f"{src.name}:" not in out  # the good copies are checked and pass
    assert "11 file(s) checked" in out
