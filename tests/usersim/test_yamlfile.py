"""The safe reader every project file goes through: hostile bytes and YAML become file:line
problems quickly, never exceptions, hangs or memory blowups."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from usersim.core.yamlfile import FileProblems, Problem, parse_yaml, read_text_file, read_yaml, short


def _problem(path: Path) -> str:
    with pytest.raises(FileProblems) as info:
        read_yaml(path)
    assert len(info.value.problems) >= 1
    return str(info.value.problems[0])


def _write(tmp_path: Path, data: bytes | str, name: str = "f.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_utf8_with_bom_and_merge_keys_and_aliases_read_fine(tmp_path):
    path = _write(tmp_path, "\ufeffbase: &b {x: 1}\ncopy: *b\nmerged: {<<: *b, y: 2}\n")
    data, lines = read_yaml(path)
    assert data == {"base": {"x": 1}, "copy": {"x": 1}, "merged": {"x": 1, "y": 2}}
    assert lines.line(("merged", "y")) == 3


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a: 1\nb: caf\xe9\n", ":2: <file>: not UTF-8 text: byte 0xe9 at offset 11"),
        (b"a: 1\nb: x\x01y\n", ":2: <file>: control character U+0001 is not allowed in YAML"),
        (b"id: a\nx: 1\nid: b\n", ":3: id: duplicate key 'id' (first at line 1)"),
        (b"a:\n  d: 2026-13-45\n", ":2: a.d: cannot read '2026-13-45' as timestamp"),
        (b"a: [1, !!int abc]\n", ":1: a.1: cannot read 'abc' as int"),
        (b"a: !!float x\n", ":1: a: cannot read 'x' as float"),
        (b"a: &a [1, *a]\n", ":1: <file>: an alias refers to its own anchor"),
        (
            b"a: !!python/object:os.system ls\n",
            ":1: <file>: YAML syntax error: could not determine a constructor",
        ),
        (b"a: 1\n---\nb: 2\n", ":2: <file>: YAML syntax error"),
        (b"a: b: c\n", ":1: <file>: YAML syntax error: mapping values are not allowed here"),
    ],
)
def test_hostile_input_is_one_problem_with_its_line(tmp_path, data, expected):
    path = _write(tmp_path, data)
    assert _problem(path).startswith(f"{path}{expected}")


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 100_000 + "]" * 100_000,  # quadratic in PyYAML's scanner without the pre-scan
        "a: " + "{a: " * 20_000 + "}" * 20_000,
        "".join("  " * i + f"k{i}:\n" for i in range(500)),  # block nesting: RecursionError without the limit
        "l0: &l0 [x, x, x, x, x, x, x, x, x]\n"  # billion laughs: 9^10 values if built
        + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)),
    ],
)
def test_nesting_and_alias_bombs_are_refused_fast(tmp_path, text):
    path = _write(tmp_path, text)
    started = time.perf_counter()
    message = _problem(path)
    assert time.perf_counter() - started < 1.5
    assert "nested deeper than 64 levels" in message or "expand to more than" in message


def test_not_a_regular_file_is_refused_without_reading(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # reading it would block forever
    assert "not a regular file" in _problem(fifo)
    assert "not a regular file" in _problem(Path("/dev/zero"))
    assert "file not found" in _problem(tmp_path / "missing.yaml")
    assert "not a regular file" in _problem(tmp_path)


def test_size_limit(tmp_path):
    path = _write(tmp_path, "a: 1\n" * 100)
    with pytest.raises(FileProblems, match="larger than 100 bytes"):
        read_text_file(path, max_bytes=100)
    assert read_text_file(path, max_bytes=10_000).count("\n") == 100


def test_messages_quote_at_most_about_80_characters():
    assert len(short("x" * 2_000_000)) < 100
    assert len(short(list(range(1_000_000)))) < 100
    problem = Problem("f.yaml", 1, "k" * 10_000, "m" * 10_000)
    assert len(str(problem)) < 600


def test_embedded_yaml_lines_are_offset(tmp_path):
    with pytest.raises(FileProblems) as info:
        parse_yaml("name: x\nname: y\n", tmp_path / "SKILL.md", line_offset=1)
    assert str(info.value.problems[0]).startswith(f"{tmp_path / 'SKILL.md'}:3: name: duplicate key")


def test_a_file_read_again_is_not_parsed_again_but_an_edit_is_seen(tmp_path, monkeypatch):
    from usersim.core import yamlfile

    f = tmp_path / "a.yaml"
    f.write_text("a: [1, 2]\n", encoding="utf-8")
    first, _ = yamlfile.read_yaml(f)
    first["a"].append(3)  # callers own their copy
    calls = []
    real = yamlfile.parse_yaml
    monkeypatch.setattr(yamlfile, "parse_yaml", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert yamlfile.read_yaml(f)[0] == {"a": [1, 2]} and calls == []
    f.write_text("a: [1, 9]\n", encoding="utf-8")  # same size, maybe the same mtime: content decides
    assert yamlfile.read_yaml(f)[0] == {"a": [1, 9]} and calls == [1]


def _tree(lines) -> list[tuple[str, str, int, int, object]]:
    import yaml

    out, stack = [], [lines.root]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        out.append((type(node).__name__, node.tag, node.start_mark.line, node.start_mark.column, value))
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for kv in node.value for n in kv)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return out


def _both(text: str, path: Path, monkeypatch) -> tuple[object, object]:
    """(libyaml path, Python path) of one text: the data and line tree, or the problems raised."""
    from usersim.core import yamlfile

    def once() -> object:
        try:
            data, lines = parse_yaml(text, path)
        except FileProblems as exc:
            return [str(p) for p in exc.problems]
        return data, _tree(lines)

    fast = once()
    with monkeypatch.context() as m:
        m.setattr(yamlfile, "_CParser", None)
        slow = once()
    return fast, slow


HOSTILE = [
    "a: 1\na: 2\n",
    "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - x\n" * 3,
    "".join("  " * i + f"k{i}:\n" for i in range(70)) + "  " * 70 + "v: 1\n",
    "".join("  " * i + f"k{i}:\n" for i in range(30)) + "  " * 30 + "v: " + "[" * 40 + "]" * 40 + "\n",
    "a: &x [1, 2]\nb: *x\nc: *x\n",
    "a: &x [1, *x]\n",
    "when: 2026-13-45\n",
    "n: !!int abc\n",
    "bad: \x07bell\n",
    "k: [1, 2\n",
    "? complex\n: value\n",
    "---\na: 1\n---\nb: 2\n",
    "",
    "# only a comment\n",
    "x: 'it''s'\ny: \"tab\\there\"\nz: |\n  block\n  text\n",
]


def test_the_libyaml_path_reads_every_file_as_the_line_tracking_loader_does(monkeypatch):
    """read_yaml takes libyaml when it can; data, line numbers and every problem must stay the
    Python loader's: over the project's own YAML files and a set of hostile documents."""
    from usersim.core import yamlfile

    assert yamlfile._CParser is not None, "PyYAML was built without libyaml: the fast path is never taken"
    repo = Path(__file__).resolve().parents[2]
    files = [p for d in ("usersim", "examples", "tests") for p in sorted((repo / d).rglob("*.y*ml"))]
    assert len(files) > 200
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        fast, slow = _both(text, f, monkeypatch)
        assert fast == slow, f
    for i, text in enumerate(HOSTILE):
        fast, slow = _both(text, Path(f"hostile{i}.yaml"), monkeypatch)
        assert fast == slow, text


# nodes the plain builder of the libyaml path hands back to the constructors, and scalars it builds
# itself: each must read exactly (types included) as the line-tracking loader reads it
PLAIN_AND_UNUSUAL = [
    "base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n",
    "more:\n  <<: {x: 1}\n  y: 2\n",
    "? [a, b]\n: 1\n",
    "? {a: 1}\n: 1\n",
    "s: !!set {a, b}\n",
    "o: !!omap [{a: 1}, {b: 2}]\n",
    "b: !!binary aGVsbG8=\n",
    "c: !custom value\n",
    "n: !!float 1\n",
    "ints: [0x1f, 0o17, 017, 1_000, 0b101, -3, +4]\nfloats: [.inf, -.Inf, .nan, 1e3, 6.8523015e+5, 1_000.5]\n",
    "bools: [yes, No, on, OFF, true, False]\nnulls: [~, null, Null, '']\n",
    "day: 2026-04-07\nwhen: 2026-04-07 10:30:00\nstamp: 2001-12-14t21:59:43.10-05:00\n",
    "1: one\n2.5: two\ntrue: three\n~: four\n2026-04-07: five\n",
    "n: !!int 0x\n",
    "nested: [{a: [1, {b: [x, y]}]}, [], {}]\n",
]


def test_the_plain_builder_reads_every_kind_of_node_as_the_loader_does(monkeypatch):
    from usersim.core import yamlfile

    def typed(value: object) -> str:
        return repr(value)  # 1, 1.0 and True are equal but not the same reading

    for i, text in enumerate(PLAIN_AND_UNUSUAL):
        fast, slow = _both(text, Path(f"plain{i}.yaml"), monkeypatch)
        assert typed(fast) == typed(slow), text
    loader = yamlfile._FastLoader("a: [1, 2.5, x, null]\n")
    node = loader.get_single_node()
    assert yamlfile._build_plain(loader, node) == {"a": [1, 2.5, "x", None]}  # built, not handed back
    loader = yamlfile._FastLoader("a: !!set {x}\n")
    assert yamlfile._build_plain(loader, loader.get_single_node()) is yamlfile._UNUSUAL
