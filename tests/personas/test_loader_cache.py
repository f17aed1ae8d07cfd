"""Persona files are parsed once per run: the cache is keyed by path, mtime and size, so an edited
file is read again, and callers get their own copy."""

from __future__ import annotations

import os
import shutil

from usersim.personas.loader import LIBRARY_DIR, load_persona_file


def test_edited_persona_file_is_read_again(tmp_path):
    path = tmp_path / "japan-first-trip.yaml"
    shutil.copy(LIBRARY_DIR / "japan-first-trip.yaml", path)
    assert load_persona_file(path).name == "小林（第一次去日本）"
    path.write_text(path.read_text(encoding="utf-8").replace("小林", "小王"), encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a new mtime, whatever the clock
    assert load_persona_file(path).name == "小王（第一次去日本）"


def test_a_caller_changing_its_persona_does_not_change_the_next_load():
    first = load_persona_file(LIBRARY_DIR / "japan-first-trip.yaml")
    first.known_info.clear()
    first.name = "changed"
    again = load_persona_file(LIBRARY_DIR / "japan-first-trip.yaml")
    assert again.name == "小林（第一次去日本）" and again.known_info
