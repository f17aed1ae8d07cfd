"""Which remote conversation a stateless `respond` call continues.

Adapters for agents that keep the conversation on their side (the Responses API's
`previous_response_id`, an A2A context) get the whole transcript on every call, and one adapter
serves many conversations at once. `Threads` remembers, for each conversation prefix the agent
has answered (a running hash of the system prompt and the messages), the remote handle that
answer left; a later call continues the longest remembered prefix of its transcript and sends only
what came after it. A prefix it has never seen (a new conversation, a static case's history)
finds nothing, and the adapter starts a new remote conversation.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

from usersim.core.messages import Message

T = TypeVar("T")


def prefix_hashes(system: str, convo: list[Message]) -> list[str]:
    """hashes[k] identifies (system, convo[:k]): one running hash step per message."""
    h = hashlib.sha256(system.encode()).hexdigest()
    out = [h]
    for m in convo:
        h = hashlib.sha256((h + m.model_dump_json()).encode()).hexdigest()
        out.append(h)
    return out


class Threads(Generic[T]):
    """prefix hash -> remote handle, the oldest forgotten first beyond `keep` entries."""

    def __init__(self, keep: int = 20_000) -> None:
        self.keep = keep
        self._handles: OrderedDict[str, T] = OrderedDict()

    def find(self, system: str, convo: list[Message]) -> tuple[int, T | None]:
        """(k, handle) of the longest remembered prefix convo[:k]; (0, None) when none is."""
        hashes = prefix_hashes(system, convo)
        for k in range(len(convo), 0, -1):
            handle = self._handles.get(hashes[k])
            if handle is not None:
                return k, handle
        return 0, None

    def remember(self, system: str, convo: list[Message], handle: T) -> None:
        """`handle` continues the conversation (system, convo)."""
        self._handles[prefix_hashes(system, convo)[-1]] = handle
        while len(self._handles) > self.keep:
            self._handles.popitem(last=False)
