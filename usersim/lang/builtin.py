"""The built-in languages, registered through the `usersim.languages` entry points like any plugin."""

from __future__ import annotations

from usersim.lang.resources import DATA, Language

zh = Language(code="zh", name="中文", data_dir=DATA / "zh", script="\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff")
en = Language(code="en", name="English", data_dir=DATA / "en")
