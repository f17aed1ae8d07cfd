"""Drive `python -m usersim ...` in a pseudo-terminal, as a person at a terminal would: wait for a
prompt, type a line, press Ctrl-C or Ctrl-D. The child has the terminal as its controlling tty,
so the terminal echoes what is typed and turns Ctrl-C into SIGINT, exactly as for a person."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

from tests.support.cli import REPO

PROMPT = "you> "


class PtySession:
    """One `usersim` process on a pseudo-terminal; `screen` is everything it printed so far."""

    def __init__(self, *args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        full_env.pop("COLUMNS", None)
        pid, fd = pty.fork()
        if pid == 0:  # the child: the usersim command on the terminal
            try:
                os.chdir(cwd)
                os.execve(sys.executable, [sys.executable, "-m", "usersim", *args], full_env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.screen = ""
        self._seen = 0  # where the last `expect` matched
        self.returncode: int | None = None

    def _read(self, timeout: float) -> bool:
        """Read what is there within `timeout`; False at the end of output."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.screen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, text: str, timeout: float = 120) -> str:
        """Wait until `text` is printed after the last match; returns the output up to it."""
        deadline = time.monotonic() + timeout
        while text not in self.screen[self._seen :]:
            if time.monotonic() > deadline or not self._read(min(1.0, deadline - time.monotonic())):
                if text in self.screen[self._seen :]:
                    break
                raise AssertionError(f"{text!r} never printed; the screen so far:\n{self.screen}")
        end = self.screen.index(text, self._seen) + len(text)
        out, self._seen = self.screen[self._seen : end], end
        return out

    def prompt(self) -> str:
        """Wait for the next prompt; returns what was printed before it (and the prompt)."""
        return self.expect(PROMPT)

    def send(self, line: str) -> None:
        """Type a line and press Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def type(self, line: str) -> str:
        """Wait for the prompt, then type a line; returns what was printed before the prompt."""
        shown = self.prompt()
        self.send(line)
        return shown

    def ctrl_c(self) -> None:
        self.prompt()
        os.write(self.fd, b"\x03")

    def ctrl_d(self) -> None:
        self.prompt()
        os.write(self.fd, b"\x04")

    def wait(self, timeout: float = 180) -> int:
        """Read to the end of output and return the exit code."""
        deadline = time.monotonic() + timeout
        while self._read(1.0):
            if time.monotonic() > deadline:
                os.kill(self.pid, 9)
                raise AssertionError(f"usersim did not end within {timeout}s; the screen:\n{self.screen}")
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode
