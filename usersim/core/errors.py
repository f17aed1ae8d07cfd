"""Errors charged to whoever caused them, carried up to the record with their traceback."""

from __future__ import annotations

import traceback as _tb


class CaseError(Exception):
    """The test author's files or code failed: a user's tool, check or judge raised, or a case names
    a table, key or column its environment does not have. The conversation ends as `error` with
    blame `case`; `where` names the file/function, `traceback` is the formatted traceback."""

    def __init__(self, message: str, *, where: str = "", traceback: str = "") -> None:
        super().__init__(message)
        self.where = where
        self.traceback = traceback

    @classmethod
    def from_exception(cls, exc: BaseException, *, where: str) -> CaseError:
        text = "".join(_tb.format_exception(type(exc), exc, exc.__traceback__))
        return cls(f"{where}: {type(exc).__name__}: {exc}", where=where, traceback=text)
