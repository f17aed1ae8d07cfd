"""Name -> implementation registries with "did you mean" errors (one per role)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised for an unknown registry name; the message lists close matches and all names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def did_you_mean(name: str, options: list[str] | set[str]) -> str:
    """' Did you mean 'x'?' or '' — for error messages."""
    close = difflib.get_close_matches(name, sorted(options), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


class Registry(Generic[T]):
    """Holds implementations of one role by name; `register` is usable as a decorator."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise ValueError(f"{self.role} '{name}' is registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(
                f"Unknown {self.role} '{name}'.{did_you_mean(name, set(self._items))} "
                f"Available: {', '.join(sorted(self._items))}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: str) -> bool:
        return name in self._items
