"""Languages and their resource files; user extensions; cues that name the entry that fired.

A resource file is `<data_dir>/<topic>.yaml`, a mapping of keys to lists of phrases (or to nested
mappings / scalars where a topic needs structure). Every folder that extends a language is merged
over the built-in one in order: lists are extended (duplicates dropped, order kept), mappings merged
key by key, scalars replaced. Extensions come from `USERSIM_LANG_PATH` (os.pathsep-separated
folders, each holding `<code>/<topic>.yaml`) and from `add_resource_dir()` (the runner calls it for
a `lang/` folder inside a domain folder).
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from usersim.core.registry import Registry
from usersim.core.yamlfile import load_trusted

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Language:
    """One language plugin: its code (zh, en, ...), a display name and the folder of its resource
    files. Register it under the entry-point group `usersim.languages` (name = code)."""

    code: str
    name: str
    data_dir: Path
    script: str = ""  # a regex character class of the script that marks this language ("" = Latin)


# zh and en (usersim/lang/builtin.py, also the entry points zh and en) are found without reading
# the environment's entry points; another language is looked up there
languages: Registry[Language] = Registry("language", "usersim.languages", "usersim.lang.builtin")

_extra_dirs: list[Path] = []
_lock = threading.Lock()


def add_resource_dir(path: str | Path) -> None:
    """Extend every language with the resource files under `path/<code>/<topic>.yaml`."""
    p = Path(path).resolve()
    with _lock:
        if p not in _extra_dirs:
            _extra_dirs.append(p)
            resources.cache_clear()


def remove_resource_dir(path: str | Path) -> None:
    """Undo `add_resource_dir` (tests, long-lived processes loading several domains)."""
    p = Path(path).resolve()
    with _lock:
        if p in _extra_dirs:
            _extra_dirs.remove(p)
            resources.cache_clear()


def resource_dirs() -> list[Path]:
    """The extension folders in force: USERSIM_LANG_PATH first, then those added at run time."""
    env = [Path(p).resolve() for p in os.environ.get("USERSIM_LANG_PATH", "").split(os.pathsep) if p.strip()]
    return env + [p for p in _extra_dirs if p not in env]


class ResourceError(ValueError):
    """A language resource file that cannot be read; the message names the file."""


def _read(path: Path) -> dict[str, Any]:
    try:
        data = load_trusted(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ResourceError(f"{path}: cannot read language resource: {exc}") from None
    if not isinstance(data, dict):
        raise ResourceError(f"{path}: a language resource file is a mapping of keys to phrases")
    return data


def _merge(base: Any, extra: Any) -> Any:
    if isinstance(base, list) and isinstance(extra, list):
        return base + [x for x in extra if x not in base]
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for k, v in extra.items():
            out[k] = _merge(out[k], v) if k in out else v
        return out
    return extra


@dataclass(frozen=True)
class Cue:
    """Why a reading was made: the resource entry that fired and the span of text it matched."""

    entry: str  # "<code>/<topic>.<key>", e.g. "zh/polarity.exclusion"
    start: int
    end: int
    text: str

    def describe(self) -> str:
        return f'{self.entry} "{self.text}"'


_TOPIC_LOCK = threading.Lock()


@dataclass
class Resources:
    """The merged resource files of one language, by topic."""

    code: str
    topics: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)  # topic -> files merged, for messages
    # topic -> its files in merge order, each with its data when read already (None: a built-in file,
    # read when the topic is first asked for: a run's first request needs one topic of ~20)
    _parts: dict[str, list[tuple[Path, dict[str, Any] | None]]] = field(default_factory=dict, repr=False)

    def topic(self, name: str) -> dict[str, Any]:
        if name in self._parts:
            with _TOPIC_LOCK:  # threads asking at once wait for the one merging it
                parts = self._parts.get(name)
                if parts is not None:
                    merged: dict[str, Any] = {}
                    for path, data in parts:
                        merged = _merge(merged, _read(path) if data is None else data)
                    self.topics[name] = merged
                    del self._parts[name]
        return self.topics.get(name, {})

    def get(self, topic: str, key: str, default: Any = None) -> Any:
        return self.topic(topic).get(key, default)

    def words(self, topic: str, key: str) -> tuple[str, ...]:
        """A list entry as a tuple of phrases ('' when missing: an empty tuple)."""
        value = self.topic(topic).get(key, ())
        if isinstance(value, str):
            return (value,)
        return tuple(str(v) for v in value or ())

    def entry(self, topic: str, key: str) -> str:
        return f"{self.code}/{topic}.{key}"


@functools.lru_cache(maxsize=32)
def resources(code: str) -> Resources:
    """The resources of language `code`: its built-in files merged with every extension folder. An
    extension folder's files are read (and a broken one named) here; the package's own files when
    their topic is first asked for."""
    lang = languages.get(code)
    res = Resources(code)
    folders = [lang.data_dir] + [d / code for d in resource_dirs()]
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            topic = path.stem
            data = None if folder == lang.data_dir else _read(path)
            res._parts.setdefault(topic, []).append((path, data))
            res.files.setdefault(topic, []).append(str(path))
    return res


def language_codes() -> list[str]:
    return languages.names()


class Memo:
    """Readings remembered while the same resources are in force (forgotten when a resource folder
    or a language is added), for pure readers that run again on the same text many times per
    conversation (a persona's facts, the opening message's needs). At most `size` entries."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._held: tuple[Resources, ...] = ()
        self._memo: dict[Any, Any] = {}

    def table(self) -> dict[Any, Any]:
        """The memo for the resources in force now."""
        held = tuple(resources(code) for code in language_codes())
        if len(held) != len(self._held) or any(a is not b for a, b in zip(held, self._held, strict=True)):
            self._held, self._memo = held, {}
        elif len(self._memo) >= self.size:
            self._memo.clear()
        return self._memo


@functools.lru_cache(maxsize=8)
def _script(code: str) -> re.Pattern[str] | None:
    s = languages.get(code).script
    return re.compile(f"[{s}]") if s else None


def detect(text: str) -> str:
    """The language a text is mostly written in: the first language whose script marks a tenth of
    its letters (zh for CJK ideographs), else the first Latin-script language (en)."""
    letters = [ch for ch in text or "" if ch.isalpha()]
    fallback = "en"
    for code in language_codes():
        pat = _script(code)
        if pat is None:
            fallback = code if fallback not in language_codes() else fallback
            continue
        if letters and sum(1 for ch in letters if pat.match(ch)) * 10 >= len(letters):
            return code
    return fallback
