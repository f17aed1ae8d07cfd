"""Name -> implementation registries with "did you mean" errors, one per role.

Every role's registry lives here, at the bottom layer, and fills itself from the entry-point group
of its role the first time it is read: built-ins register through the package's own entry points
exactly as third-party plugins do (pyproject `[project.entry-points."usersim.judges"]` ...). An entry
point names either a module that registers its items on import, or one object registered under the
entry point's name. So a case file can be checked against the check types and tools without the
data layer importing the judges or the sandbox, and adding a judge touches no core file.

A module may also declare names without importing their implementations (`register_lazy(name,
module)`): the name is listed, suggested and found at once, and `module` is imported (registering
the real item) only when the name is first looked up. The built-in check types are declared so:
validating a case imports the code of the checks it uses, not of every check.

A role's built-in module (the one its `builtin` entry point names, held to it by
tests/usersim/test_plugins.py) is imported first: a name it declares is found without reading the
environment's entry points (a scan of every installed distribution's metadata), which are read
once, only when a name is not built in or the full list is asked for (names, did-you-mean). So a
plugin adds names; it cannot replace a built-in one.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # importlib.metadata is imported when entry points are first read
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised for an unknown registry name; the message lists close matches and all names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def did_you_mean(name: str, options: list[str] | set[str]) -> str:
    """' Did you mean 'x'?' or '' — for error messages."""
    import difflib  # (an error path: most commands never suggest anything)

    close = difflib.get_close_matches(name, sorted(options), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


class PluginError(RuntimeError):
    """An entry point of a usersim plugin group could not be loaded."""


class _Deferred:
    """A registered name whose item `module` registers when imported (Registry.register_lazy)."""

    __slots__ = ("module",)

    def __init__(self, module: str) -> None:
        self.module = module


@functools.lru_cache(maxsize=4)
def _all_entry_points(path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """Every entry point installed on `path` (sys.path), read once per path: each read scans the
    metadata of every distribution in the environment (~0.1 s in a full one), and several
    registries ask."""
    from importlib.metadata import distributions

    seen: set[str] = set()
    found: list[EntryPoint] = []
    for dist in distributions():  # as entry_points() does: the first distribution of a name wins
        name = getattr(dist, "_normalized_name", None) or str(dist.metadata["Name"] or "").lower()
        if name in seen:
            continue
        seen.add(name)
        found.extend(dist.entry_points)
    return tuple(found)


def _entry_points(group: str) -> list[EntryPoint]:
    return [ep for ep in _all_entry_points(tuple(sys.path)) if ep.group == group]


class Registry(Generic[T]):
    """Holds implementations of one role by name; `register` is usable as a decorator.
    With `group`, the entry points of that group are loaded on first read; with `builtin`, that
    module is imported first and the names it registers or declares are found without them."""

    def __init__(self, role: str, group: str | None = None, builtin: str | None = None) -> None:
        self.role = role
        self.group = group
        self.builtin = builtin
        self._builtin_loaded = builtin is None
        self._builtin_loading = False
        self._items: dict[str, T] = {}
        # every item ever registered: a lazily declared name finds its item here when its module was
        # imported (so registered) while another `_items` table was in place (tests swap it)
        self._registered: dict[str, T] = {}
        self._loaded = group is None
        self._loading = False
        # threads (a LangGraph Server runs graph steps on a pool) wait for the one loading the
        # plugins instead of reading a half-filled registry ("Unknown language 'en'. Available: ")
        self._lock = threading.RLock()

    def _load_plugins(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:  # another thread loaded them; or a plugin registering
                return  # itself while this thread loads (it must not recurse)
            self._loading = True
            try:
                self._load_entry_points()
            finally:
                self._loading = False
                self._loaded = True

    def _load_builtin(self) -> None:
        """Import the role's built-in module (once): it registers or declares the built-in names."""
        if self._builtin_loaded:
            return
        with self._lock:  # as _load_plugins: other threads wait; the importing thread may re-enter
            if self._builtin_loaded or self._builtin_loading:
                return
            self._builtin_loading = True
            try:
                importlib.import_module(str(self.builtin))
            except Exception as exc:
                raise PluginError(
                    f"{self.role} built-ins ({self.builtin}) failed to load: {type(exc).__name__}: {exc}"
                ) from exc
            else:
                self._builtin_loaded = True
            finally:
                self._builtin_loading = False

    def _find(self, name: str) -> T | None:
        """The item or declaration registered under `name`: the built-ins first, the entry points
        only when `name` is not among them."""
        self._load_builtin()
        item = self._items.get(name)
        if item is None and not self._loaded:
            self._load_plugins()
            item = self._items.get(name)
        return item

    def _load_entry_points(self) -> None:
        for ep in sorted(_entry_points(self.group or ""), key=lambda e: e.name):
            try:
                obj = ep.load()
            except Exception as exc:
                raise PluginError(
                    f"{self.role} plugin '{ep.name}' ({ep.value}, entry-point group {self.group}) "
                    f"failed to load: {type(exc).__name__}: {exc}. Fix or uninstall the package that provides it."
                ) from exc
            if not isinstance(obj, ModuleType) and ep.name not in self._items:
                self._items[ep.name] = obj

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            old = self._items.get(name)
            if old is not None and old is not obj and not isinstance(old, _Deferred):
                raise ValueError(f"{self.role} '{name}' is registered twice")
            self._items[name] = obj
            self._registered[name] = obj
            return obj

        return deco

    def register_lazy(self, name: str, module: str) -> None:
        """Declare `name` as provided by `module`, imported on the first `get(name)`; importing it must
        register `name` (with `register`). A name already registered keeps its item."""
        self._items.setdefault(name, _Deferred(module))  # type: ignore[arg-type]

    def get(self, name: str) -> T:
        item = self._find(name)
        if item is None:
            self._load_plugins()  # every name, for the suggestion
            raise UnknownNameError(
                f"Unknown {self.role} '{name}'.{did_you_mean(name, set(self._items))} "
                f"Available: {', '.join(sorted(self._items))}"
            ) from None
        return self._resolve(name, item) if isinstance(item, _Deferred) else item

    def _resolve(self, name: str, deferred: _Deferred) -> T:
        """Import the module a lazily declared name comes from; the item it registered."""
        with self._lock:  # one thread imports; the others then find the real item
            try:
                importlib.import_module(deferred.module)
            except Exception as exc:
                raise PluginError(
                    f"{self.role} '{name}' ({deferred.module}) failed to load: {type(exc).__name__}: {exc}"
                ) from exc
            item = self._items.get(name)
            if item is None or isinstance(item, _Deferred):
                item = self._registered.get(name)
                if item is None:
                    raise PluginError(
                        f"{self.role} '{name}': importing {deferred.module} did not register it"
                    )
                self._items[name] = item
            return item

    def names(self) -> list[str]:
        self._load_builtin()
        self._load_plugins()
        return sorted(self._items)

    def __contains__(self, name: str) -> bool:
        return self._find(name) is not None


# One registry per role. Entry-point groups: usersim.agents (agent spec schemes), usersim.simulators
# (simulator spec schemes), usersim.judges (judge factories), usersim.checks (case-file check types),
# usersim.tools (sandbox tools).
# The built-in module of each is its `builtin` entry point's module (a name, not an import: the
# modules live in the layers above).
agents: Registry[Any] = Registry("agent", "usersim.agents", "usersim.adapters.catalog")
simulators: Registry[Any] = Registry("simulator", "usersim.simulators", "usersim.simulator.catalog")
judges: Registry[Any] = Registry("judge", "usersim.judges", "usersim.judges.select")
checks: Registry[Any] = Registry("check", "usersim.checks", "usersim.judges.checks")
tools: Registry[Any] = Registry("tool", "usersim.tools", "usersim.sandbox.tools")
