"""Safe reading of every YAML (and text) file the project loads, with line numbers for errors.

`read_yaml(path)` never runs code (SafeLoader), never crashes on hostile input and never blows up:

* bytes are decoded as UTF-8 (a BOM is allowed); other bytes are a `file:line` problem;
* files above `MAX_BYTES`, nesting deeper than `MAX_DEPTH` and documents whose aliases expand to
  more than `MAX_NODES` nodes (billion laughs) are refused before anything is built;
* duplicate keys in a mapping are an error (`file:line: key: duplicate key`), not "last one wins";
* every scalar that cannot be built (`2026-13-45`, `!!int abc`) is a problem at its line;
* messages quote at most ~80 characters of any value (`short`).

Every failure is raised as `FileProblems`; callers report and skip the file.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import os
import re
import reprlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:  # pydantic only names the types here: a listing served from its cache never imports it
    from pydantic import BaseModel, ValidationError

MAX_BYTES = int(os.environ.get("USERSIM_MAX_FILE_BYTES") or 4_000_000)
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_MESSAGE = 400
QUOTE = 80

_repr = reprlib.Repr()
_repr.maxstring = QUOTE
_repr.maxother = QUOTE
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6
_repr.maxlevel = 3


def short(value: Any, limit: int = QUOTE) -> str:
    """repr of `value` cut to about `limit` characters (never builds a huge repr first)."""
    if isinstance(value, str):
        text = repr(value[:limit]) + ("…" if len(value) > limit else "")
    else:
        text = _repr.repr(value)
    return text if len(text) <= limit + 8 else text[:limit] + "…"


@dataclass
class Problem:
    """One problem in one file, printed as `file:line: field: message`."""

    file: str
    line: int
    field: str
    message: str

    def __post_init__(self) -> None:
        if len(self.message) > MAX_MESSAGE:
            self.message = self.message[:MAX_MESSAGE] + "…"
        if len(self.field) > 120:
            self.field = self.field[:120] + "…"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field or '<file>'}: {self.message}"


class FileProblems(ValueError):
    """A file (or several) failed validation; `problems` lists each with file:line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _fail(path: Path | str, line: int, message: str, field: str = "") -> FileProblems:
    return FileProblems([Problem(str(path), line, field, message)])


class LineIndex:
    """Maps a key path (('judging', 'checks', 0)) to the line of that node in the YAML source."""

    def __init__(self, root: yaml.Node | None):
        self.root = root

    def line(self, loc: Iterable[Any]) -> int:
        node = self.root
        best = node.start_mark.line + 1 if node is not None else 1
        for part in loc:
            child = None
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                        child = v
                        best = k.start_mark.line + 1
                        break
            elif (
                isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value)
            ):
                child = node.value[part]
                best = child.start_mark.line + 1
            if child is None:
                break
            node = child
        return best


@dataclass
class ReadLog:
    """The files read (path -> blake2b of their bytes) while a `recording_reads()` block ran, and
    whether anything else was consulted that a file hash cannot stand for (imported Python code)."""

    files: dict[str, str] = field(default_factory=dict)
    untracked: str = ""  # why the outcome depends on more than `files` ("" = it does not)


_READS: ContextVar[ReadLog | None] = ContextVar("usersim_reads", default=None)


@contextmanager
def recording_reads() -> Iterator[ReadLog]:
    """Record every file `read_text_file` reads inside the block (a cache of what loading a file
    produced is valid while these files are unchanged)."""
    log = ReadLog()
    token = _READS.set(log)
    try:
        yield log
    finally:
        _READS.reset(token)


def note_untracked(why: str) -> None:
    """Inside `recording_reads()`: the outcome depends on something besides the files read."""
    log = _READS.get()
    if log is not None and not log.untracked:
        log.untracked = why


def read_text_file(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The file's text, decoded as UTF-8; anything else (missing, a folder, a device, too big,
    not UTF-8, unreadable) raises FileProblems naming the file (and the line of a bad byte)."""
    path = Path(path)
    try:
        if not path.exists():
            raise _fail(path, 1, "file not found")
        if not path.is_file():
            raise _fail(path, 1, "not a regular file")
        if path.stat().st_size > max_bytes:
            raise _fail(path, 1, f"file is larger than {max_bytes} bytes; refusing to read it")
        chunks: list[bytes] = []
        total = 0
        with path.open("rb") as f:
            while total <= max_bytes:  # in chunks: never allocate max_bytes up front
                chunk = f.read(min(1 << 20, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        raw = b"".join(chunks)
        log = _READS.get()
        if log is not None:
            log.files[str(path.resolve())] = hashlib.blake2b(raw, digest_size=16).hexdigest()
    except OSError as exc:
        raise _fail(path, 1, f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise _fail(path, 1, f"file is larger than {max_bytes} bytes; refusing to read it")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _fail(
            path,
            line,
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}; save the file as UTF-8",
        ) from None


class _Bad(Exception):
    """A problem at a YAML mark (raised inside the loader, turned into a Problem)."""

    def __init__(self, mark: Any, message: str, node: yaml.Node | None = None):
        self.mark = mark
        self.message = message
        self.node = node


class _ScalarErrors:
    """Scalar errors tied to their node's line (mixed into both loaders)."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except (_Bad, yaml.YAMLError):
            raise
        except (ValueError, TypeError, OverflowError, ArithmeticError, LookupError) as exc:
            value = node.value if isinstance(node, yaml.ScalarNode) else ""
            raise _Bad(
                node.start_mark, f"cannot read {short(value)} as {node.tag.rsplit(':', 1)[-1]}: {exc}", node
            ) from None


class _Loader(_ScalarErrors, yaml.SafeLoader):
    """SafeLoader with a nesting limit and scalar errors tied to their node's line."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in the PyYAML stubs
                raise _Bad(event.start_mark, f"nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_MERGE = "tag:yaml.org,2002:merge"


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for kv in node.value for n in kv]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_tree(root: yaml.Node, path: Path, offset: int) -> None:
    """Refuse recursive aliases, alias expansion beyond MAX_NODES and duplicate keys."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    problems: list[Problem] = []
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            sizes[nid] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[nid] > MAX_NODES:
                raise _fail(
                    path,
                    node.start_mark.line + 1 + offset,
                    f"anchors/aliases expand to more than {MAX_NODES} values; refusing to build it",
                )
            continue
        if nid in sizes:
            continue
        if nid in on_path:
            raise _fail(
                path, node.start_mark.line + 1 + offset, "an alias refers to its own anchor (recursion)"
            )
        on_path.add(nid)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for k, _ in node.value:
                if not isinstance(k, yaml.ScalarNode) or k.tag == _MERGE:
                    continue
                line = k.start_mark.line + 1 + offset
                key = (k.tag, k.value)
                if key in first:
                    problems.append(
                        Problem(
                            str(path),
                            line,
                            k.value[:QUOTE],
                            f"duplicate key {short(k.value)} (first at line {first[key]}); "
                            "each key may appear once in a mapping",
                        )
                    )
                else:
                    first[key] = line
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    if problems:
        raise FileProblems(problems)


def _field_of(root: yaml.Node, target: yaml.Node) -> str:
    """The dotted key path (judging.checks.0) of `target` inside `root`, or '' when not found."""
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, loc = stack.pop()
        if node is target:
            return ".".join(loc)[:120]
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                stack.append((v, (*loc, key)))
                stack.append((k, (*loc, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, (*loc, str(i))) for i, v in enumerate(node.value))
    return ""


_FLOW_SPECIAL = re.compile(r"[\[\]{}#'\"\n]")


def _flow_depth_line(text: str) -> int | None:
    """The line where flow collections (`[`, `{`) nest deeper than MAX_DEPTH, found in one linear
    pass: PyYAML's scanner is quadratic in flow depth, so `[[[[...` must be refused before it."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth, line, pos, n = 0, 1, 0, len(text)
    while (m := _FLOW_SPECIAL.search(text, pos)) is not None:
        i, ch = m.start(), m.group()
        pos = i + 1
        if ch == "\n":
            line += 1
        elif ch == "#":
            if i == 0 or text[i - 1] in " \t\n":  # a comment: skip to the end of the line
                end = text.find("\n", i)
                pos = n if end < 0 else end
        elif ch in "'\"":
            if depth:  # a quoted scalar inside a flow collection: skip it
                j = i + 1
                while j < n:
                    if ch == '"' and text[j] == "\\":
                        j += 2
                    elif text[j] == ch and ch == "'" and j + 1 < n and text[j + 1] == "'":
                        j += 2
                    elif text[j] == ch:
                        break
                    else:
                        j += 1
                line += text.count("\n", i, j)
                pos = j + 1
        elif ch in "[{":
            k = i - 1
            while k >= 0 and text[k] in " \t":
                k -= 1
            before = text[k] if k >= 0 else "\n"
            if depth or before in "\n:-?":  # block context: only a value may open a flow collection
                depth += 1
                if depth > MAX_DEPTH:
                    return line
        elif depth:  # ] or }
            depth -= 1
    return None


_CParser: Any = getattr(yaml, "CSafeLoader", None)
_BLOCK_INDICATOR = re.compile(r"(?:^|\s)[-?:](?=\s|$)")


def _block_depth_bound(text: str) -> int:
    """An upper bound of the block nesting depth: a nested block node sits at a deeper column or
    behind an indicator (`- `, `? `, `: `) on its line, and a sequence may share its key's column,
    so a line is at most 2 x (indent + indicators + 1) levels deep."""
    bound = 0
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        bound = max(bound, 2 * (len(line) - len(body) + len(_BLOCK_INDICATOR.findall(body)) + 1))
    return bound


class _FastLoader(_ScalarErrors, _CParser or yaml.SafeLoader):  # type: ignore[misc]  # C when built
    """libyaml's parser and composer (C) with the same scalar constructors: for a well-formed file
    it builds the very nodes and data the line-tracking Python loader builds, about 10x faster."""


def _plain_depth(root: yaml.Node) -> tuple[int, bool]:
    """(how deeply the tree nests, whether a mapping repeats a key) in one walk, for a document
    without anchors (so without aliases: no recursion, no expansion to guard against)."""
    deepest, repeated = 0, False
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, level = stack.pop()
        if level > deepest:
            deepest = level
        if isinstance(node, yaml.MappingNode):
            keys = [(k.tag, k.value) for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            repeated = repeated or len(set(keys)) != len(keys)
            stack.extend((n, level + 1) for kv in node.value for n in kv)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((n, level + 1) for n in node.value)
    return deepest, repeated


_TAG = "tag:yaml.org,2002:"
_PLAIN_SCALARS = {_TAG + t for t in ("null", "bool", "int", "float", "timestamp")}
_UNUSUAL = object()


def _build_plain(loader: Any, root: yaml.Node) -> Any:
    """The data of an alias-free document, as the loader's constructors build it, for the nodes
    case and data files are made of (str / int / float / bool / null / timestamp scalars, mappings
    and sequences) without the constructors' per-node machinery (~3x faster on a case library).
    _UNUSUAL for anything else (a merge key, another tag, a key that cannot be a dict key, a scalar
    its constructor refuses): the loader's constructors then build it and say what is wrong."""
    scalar_of = loader.yaml_constructors

    def build(node: yaml.Node) -> Any:  # nesting is bounded by MAX_DEPTH (checked before)
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            if tag == _TAG + "str":
                return node.value
            if tag not in _PLAIN_SCALARS:
                raise LookupError(tag)
            return scalar_of[tag](loader, node)
        if isinstance(node, yaml.MappingNode) and tag == _TAG + "map":
            out = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE:
                    raise LookupError(_MERGE)
                key = build(key_node)
                out[key] = build(value_node)  # an unhashable key: TypeError
            return out
        if isinstance(node, yaml.SequenceNode) and tag == _TAG + "seq":
            return [build(n) for n in node.value]
        raise LookupError(tag)

    try:
        return build(root)
    except Exception:  # noqa: BLE001 - the constructors decide (and word the error)
        return _UNUSUAL


def _parse_fast(text: str, path: Path, line_offset: int) -> tuple[Any, LineIndex] | None:
    """The document through libyaml, or None when only the Python loader can say what is wrong
    (any error) or check the nesting (the depth bound is not below MAX_DEPTH)."""
    if _CParser is None or _block_depth_bound(text) > MAX_DEPTH:
        return None
    try:
        yaml.reader.Reader(text)  # the Python reader's character checks (libyaml allows a few more)
        loader = _FastLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None, LineIndex(None)
            if "&" in text:
                _check_tree(node, path, line_offset)  # aliases: recursion and expansion guards
            else:
                deepest, repeated = _plain_depth(node)
                if deepest > MAX_DEPTH:
                    return None  # the Python loader names the line where it gets too deep
                if repeated:
                    _check_tree(node, path, line_offset)  # names every duplicate key
                plain = _build_plain(loader, node)
                if plain is not _UNUSUAL:
                    return plain, LineIndex(node)
            return loader.construct_document(node), LineIndex(node)
        finally:
            loader.dispose()
    except FileProblems:
        raise
    except Exception:  # noqa: BLE001 - the Python loader below turns the failure into a Problem
        return None


def parse_yaml(text: str, path: str | Path, *, line_offset: int = 0) -> tuple[Any, LineIndex]:
    """Parse YAML text safely; every failure is FileProblems with `path` and a line
    (`line_offset` is added, for YAML embedded after other lines, e.g. SKILL.md frontmatter)."""
    path = Path(path)
    if len(text) > MAX_BYTES:
        raise _fail(path, 1, f"text is longer than {MAX_BYTES} characters; refusing to parse it")
    deep = _flow_depth_line(text)
    if deep is not None:
        raise _fail(path, deep + line_offset, f"nested deeper than {MAX_DEPTH} levels")
    fast = _parse_fast(text, path, line_offset)
    if fast is not None:
        return fast
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1 + line_offset
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise _fail(path, line, f"control character U+{code:04X} is not allowed in YAML") from None
    node = None
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None, LineIndex(None)
            _check_tree(node, path, line_offset)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except FileProblems:
        raise
    except _Bad as exc:
        field = _field_of(node, exc.node) if node is not None and exc.node is not None else ""
        raise _fail(path, exc.mark.line + 1 + line_offset, exc.message, field) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else 1
        what = exc.problem or exc.context or "invalid YAML"
        raise _fail(path, line, f"YAML syntax error: {what}") from None
    except yaml.YAMLError as exc:
        raise _fail(path, 1 + line_offset, f"YAML error: {short(str(exc), 200)}") from None
    except RecursionError:
        raise _fail(path, 1 + line_offset, "YAML is nested too deeply") from None
    return data, LineIndex(node)


# Parsed files by (path, content digest): a run, a test session or a long-lived process using the
# Python API reads the same case library many times, and the line-tracking parser is pure Python.
_PARSED: dict[tuple[str, bytes], tuple[Any, LineIndex]] = {}
_PARSED_MAX = 2048


def load_trusted(text: str) -> Any:
    """`yaml.safe_load` through libyaml when it is built: for the package's own data files (language
    resources, tables), which need no line numbers."""
    return yaml.load(text, Loader=_CParser or yaml.SafeLoader)  # noqa: S506 - a safe loader either way


def read_yaml(path: str | Path) -> tuple[Any, LineIndex]:
    """Read and parse a YAML file safely (see the module docstring); raises FileProblems. A file
    read before with the same content is not parsed again; callers get their own copy of the data."""
    path = Path(path)
    text = read_text_file(path)
    key = (str(path), hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
    hit = _PARSED.get(key)
    if hit is None:
        hit = parse_yaml(text, path)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = hit
    data, lines = hit
    return _copy(data), lines


_SHARED = (str, int, float, bool, bytes, type(None), datetime.date)  # immutable: no copy needed


def _copy(data: Any) -> Any:
    """A copy of parsed YAML data (dicts, lists, scalars) for a caller that may change it: several
    times faster than copy.deepcopy, which a case library pays for every file."""
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    if isinstance(data, _SHARED):
        return data
    return copy.deepcopy(data)


_NAMED = re.compile(r"Value error, ([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*): (.+)", re.S)


def _loc_str(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc if not (isinstance(p, str) and p.startswith("function-")))


def validation_problems(
    path: Path, exc: ValidationError, lines: LineIndex, model: type[BaseModel]
) -> list[Problem]:
    """Turn a pydantic ValidationError into file:line: field: message problems with did-you-mean."""
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        msg = err["msg"]
        named = _NAMED.match(msg) if err["type"] == "value_error" and not loc else None
        if named:  # a model-level rule about one field says so first: "goal.required: ..."
            loc, msg = tuple(named[1].split(".")), named[2]
        if err["type"] == "extra_forbidden":
            allowed = _allowed_fields(model, loc[:-1])
            import difflib  # (for a problem to explain only)

            close = difflib.get_close_matches(str(loc[-1])[:QUOTE], allowed, n=1, cutoff=0.6)
            msg = f"unknown field {short(str(loc[-1]))}" + (f"; did you mean '{close[0]}'?" if close else "")
            if allowed:
                msg += f" (allowed: {', '.join(allowed)})"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif "input" in err and err["type"] not in ("value_error", "assertion_error"):
            msg = f"{msg} (got {short(err['input'])})"
        problems.append(Problem(str(path), lines.line(loc), _loc_str(loc), msg))
    return problems


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the sub-model at `loc` (for did-you-mean on unknown keys)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        current = _model_of(field.annotation)
        if current is None:
            return []
    return sorted(getattr(current, "model_fields", {}))


def _model_of(annotation: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None
