"""Commented persona scaffolds for `usersim persona new`, one YAML body per example domain."""

from __future__ import annotations

from pathlib import Path
from string import Template

SCAFFOLD_DIR = Path(__file__).resolve().parent
DOMAINS = ["travel", "shopping", "housing", "food", "support"]
ENGLISH_DOMAINS = {"support"}  # an English customer-service example; the others are Chinese
# (language, identity) per domain; the Chinese example domains share one identity line.
_OPENING = {
    "support": ("en", "A customer of Acme Air who booked a trip last month and now has to cancel it.")
}
_DEFAULT = ("zh", "刚入职的设计师，想买一件趁手的工作装备，但不懂参数。")


def scaffold(persona_id: str, domain: str, path: Path) -> str:
    """The commented YAML of a new persona for `domain` (every field explained)."""
    header = Template((SCAFFOLD_DIR / "_header.yaml").read_text(encoding="utf-8"))
    body = (SCAFFOLD_DIR / f"{domain}.yaml").read_text(encoding="utf-8")
    name = persona_id.replace("-", " ").replace("_", " ").title()
    language = "en" if domain in ENGLISH_DOMAINS else "zh"
    return header.substitute(id=persona_id, name=name, path=path, language=language) + body
