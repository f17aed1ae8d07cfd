"""Which reader a file needs: `--format`, else guessed from the file's content."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from usersim.cases.importers.conversation import Conversation, ImportFormatError
from usersim.cases.importers.langsmith import read_langsmith
from usersim.cases.importers.openai_jsonl import read_openai_jsonl
from usersim.cases.importers.otlp import read_otlp

READERS: dict[str, Callable[[Path], list[Conversation]]] = {
    "openai-jsonl": read_openai_jsonl,
    "langsmith": read_langsmith,
    "otel": read_otlp,
}


def guess_format(path: Path) -> str:
    """openai-jsonl / langsmith / otel from the first document of the file."""
    text = path.read_text(encoding="utf-8")
    head = text.lstrip()[:1]
    if '"resourceSpans"' in text[:4096]:
        return "otel"
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    try:
        row = json.loads(first)
    except json.JSONDecodeError:
        row = None
    if isinstance(row, dict) and "messages" in row and not ("run_type" in row or "inputs" in row):
        return "openai-jsonl"
    if head in "[{" and ('"run_type"' in text or '"inputs"' in text):
        return "langsmith"
    raise ImportFormatError(f"{path}: cannot tell the format; pass --format openai-jsonl, langsmith or otel")


def read_conversations(path: Path, fmt: str | None = None) -> list[Conversation]:
    """The conversations of one file, read as `fmt` (guessed when None)."""
    fmt = fmt or guess_format(path)
    if fmt not in READERS:
        raise ImportFormatError(f"unknown format {fmt!r}; choose one of {', '.join(READERS)}")
    return READERS[fmt](path)
