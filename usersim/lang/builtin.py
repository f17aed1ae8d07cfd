"""The built-in languages: registered here on import and named by the `usersim.languages` entry points
zh and en like any plugin."""

from __future__ import annotations

from usersim.lang.resources import DATA, Language, languages

zh = Language(code="zh", name="中文", data_dir=DATA / "zh", script="\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff")
en = Language(code="en", name="English", data_dir=DATA / "en")

# registered on import (the languages registry imports this module first), so looking up zh or en
# reads no entry points; the entry points zh and en name these same objects
languages.register("zh")(zh)
languages.register("en")(en)
