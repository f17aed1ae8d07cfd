"""Run the `usersim` command line in process (fast) or, for the few smoke tests that need a real
process, as `python -m usersim`."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    """What a command printed and how it ended, shaped like subprocess.CompletedProcess."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _cwd(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def usersim(*args: str, env: dict | None = None, check: bool = True, cwd: Path = REPO) -> Result:
    """`usersim ARGS` in this process; raises with the output when it exits non-zero and check is set."""
    from usersim.cli import main

    with _cwd(cwd):
        res = CliRunner().invoke(main, list(args), env=env, catch_exceptions=True)
    err = res.stderr
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback

        err += "".join(traceback.format_exception(res.exception))
    out = Result(tuple(args), res.exit_code, res.stdout, err)
    if check and out.returncode != 0:
        raise AssertionError(f"usersim {' '.join(args)} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out


def usersim_process(*args: str, env: dict | None = None, check: bool = True, cwd: Path = REPO) -> Result:
    """`python -m usersim ARGS` as a real process: for smoke tests of the console entry."""
    res = subprocess.run(
        [sys.executable, "-m", "usersim", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
    out = Result(tuple(args), res.returncode, res.stdout, res.stderr)
    if check and out.returncode != 0:
        raise AssertionError(f"usersim {' '.join(args)} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out
