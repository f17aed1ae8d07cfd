"""The registries read usersim's entry points straight from each distribution's entry_points.txt:
the same entry points importlib.metadata finds, the first distribution of a name winning."""

from __future__ import annotations

import sys
from importlib.metadata import distributions

from usersim.core.registry import _all_entry_points


def _reference(path: list[str]) -> list[tuple[str, str, str]]:
    seen: set[str] = set()
    found = []
    for dist in distributions(path=path):
        name = dist._normalized_name  # type: ignore[attr-defined]
        if name in seen:
            continue
        seen.add(name)
        found += [(e.group, e.name, e.value) for e in dist.entry_points if e.group.startswith("usersim.")]
    return sorted(found)


def _ours(path: list[str]) -> list[tuple[str, str, str]]:
    return sorted(
        (e.group, e.name, e.value) for e in _all_entry_points(tuple(path)) if e.group.startswith("usersim.")
    )


def test_the_installed_entry_points_are_those_importlib_metadata_reads():
    ours = _ours(sys.path)
    assert ("usersim.checks", "builtin", "usersim.judges.checks") in ours
    assert ours == _reference(sys.path)


def test_comments_extras_and_a_shadowed_distribution(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, value in ((first, "plug_a:make [fast]"), (second, "plug_b:make")):
        info = folder / "Plug_Thing-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: plug.thing\nVersion: 1.0\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(
            f"# a comment\n[console_scripts]\nplug = plug_a:main\n\n[usersim.judges]\n# another\ntone = {value}\n",
            encoding="utf-8",
        )
    other = first / "other-2.0.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: other\nVersion: 2.0\n", encoding="utf-8")
    (other / "entry_points.txt").write_text("[usersim.checks]\npolite = polite.checks\n", encoding="utf-8")
    path = [str(first), str(second)]
    ours = _ours(path)
    assert ours == [
        ("usersim.checks", "polite", "polite.checks"),
        ("usersim.judges", "tone", "plug_a:make [fast]"),
    ]
    assert ours == _reference(path)


def test_an_entry_point_loads_its_module_or_attribute():
    (ep,) = [
        e for e in _all_entry_points(tuple(sys.path)) if e.group == "usersim.languages" and e.name == "en"
    ]
    import usersim.lang.builtin as builtin

    assert ep.load() is builtin.en
