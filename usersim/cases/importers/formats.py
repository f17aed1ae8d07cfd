"""Which reader a file needs: `--format`, else guessed from the file's content."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from usersim.cases.importers.conversation import Conversation, ImportFormatError
from usersim.cases.importers.langgraph import read_langgraph
from usersim.cases.importers.langsmith import read_langsmith
from usersim.cases.importers.openai_jsonl import read_openai_jsonl
from usersim.cases.importers.otlp import is_flat_span, read_otlp

READERS: dict[str, Callable[[Path], list[Conversation]]] = {
    "openai-jsonl": read_openai_jsonl,
    "langsmith": read_langsmith,
    "langgraph": read_langgraph,
    "otel": read_otlp,
}


def _first(text: str) -> Any:
    """The file's first document: the whole file as JSON, else its first line; its first element
    when it is a list."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        lines = text.lstrip().splitlines()
        try:
            doc = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            return None
    if isinstance(doc, dict):
        for key in ("runs", "history", "checkpoints", "states"):
            if isinstance(doc.get(key), list):
                doc = doc[key]
                break
    while isinstance(doc, list) and doc:
        doc = doc[0]
    return doc


def guess_format(path: Path) -> str:
    """openai-jsonl / langsmith / langgraph / otel from the first document of the file."""
    text = path.read_text(encoding="utf-8")
    if '"resourceSpans"' in text[:4096]:
        return "otel"
    doc = _first(text)
    if is_flat_span(doc):
        return "otel"  # an SDK's span dump
    if isinstance(doc, dict):
        checkpoint = doc.get("checkpoint")
        if isinstance(checkpoint, dict) and "channel_values" in checkpoint:
            return "langgraph"  # a checkpoint tuple
        if isinstance(doc.get("values"), dict) and (
            {"next", "checkpoint", "config", "parent_config"} & set(doc)
        ):
            return "langgraph"  # a StateSnapshot / the server's thread state
        if "run_type" in doc or "inputs" in doc:
            return "langsmith"
        if "messages" in doc:
            return "openai-jsonl"
    raise ImportFormatError(
        f"{path}: cannot tell the format; pass --format openai-jsonl, langsmith, langgraph or otel"
    )


def read_conversations(path: Path, fmt: str | None = None) -> list[Conversation]:
    """The conversations of one file, read as `fmt` (guessed when None)."""
    fmt = fmt or guess_format(path)
    if fmt not in READERS:
        raise ImportFormatError(f"unknown format {fmt!r}; choose one of {', '.join(READERS)}")
    return READERS[fmt](path)
