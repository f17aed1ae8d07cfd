"""Lines a person types, read without ever blocking the event loop (`usersim play`).

A daemon thread reads the file descriptor with `os.read` (no buffered reader, so no lock a daemon
thread could hold at interpreter exit) and hands complete lines to the loop. A Ctrl-C while the
person is at the prompt resolves the wait with INTERRUPTED instead of cancelling the run, so the
conversation that finished so far is judged and stored; `interrupt` is safe to call from a signal
handler (it only schedules work on the loop).
"""

from __future__ import annotations

import asyncio
import codecs
import os
import threading
from collections import deque
from typing import Final

INTERRUPTED: Final = "\x03"  # what `readline` returns after `interrupt()` (ETX: nobody types it in a line)


class LineReader:
    """Lines from a file descriptor (stdin, a pipe, a pseudo-terminal); None at end of input."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        # a terminal echoes what the person types; lines from a pipe or a file are echoed by the screen
        self.echoes = os.isatty(fd)
        self._lines: deque[str | None] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._interrupted = False
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._thread = threading.Thread(target=self._read, name="usersim-play-input", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # the terminal went away: end of input
                chunk = b""
            if not chunk:
                rest = pending + decoder.decode(b"", final=True)
                self._post([rest] if rest else [], eof=True)
                return
            pending += decoder.decode(chunk)
            *lines, pending = pending.split("\n")
            if lines:
                self._post([line.rstrip("\r") for line in lines])

    def _post(self, lines: list[str], eof: bool = False) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._take, lines, eof)
        except RuntimeError:  # the loop is closed: the session is over, nobody waits for the line
            pass

    def _take(self, lines: list[str], eof: bool) -> None:
        self._lines.extend(lines)
        if eof:
            self._lines.append(None)
        assert self._wake is not None
        self._wake.set()

    def interrupt(self) -> bool:
        """Resolve the wait at the prompt with INTERRUPTED (from a signal handler too); False when
        no read was ever started (nothing waits)."""
        if self._loop is None or self._loop.is_closed():
            return False
        self._loop.call_soon_threadsafe(self._on_interrupt)
        return True

    def _on_interrupt(self) -> None:
        self._interrupted = True
        assert self._wake is not None
        self._wake.set()

    async def readline(self) -> str | None:
        """The next line without its newline; None at end of input; INTERRUPTED after `interrupt`."""
        if self._thread is None:
            self._start()
        assert self._wake is not None
        while True:
            if self._interrupted:
                self._interrupted = False
                return INTERRUPTED
            if self._lines:
                line = self._lines.popleft()
                if line is None:
                    self._lines.appendleft(None)  # end of input stays the end
                return line
            self._wake.clear()
            await self._wake.wait()
