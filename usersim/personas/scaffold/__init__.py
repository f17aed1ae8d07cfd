"""Commented persona scaffolds for `usersim persona new`, one YAML body per example domain."""

from __future__ import annotations

from pathlib import Path
from string import Template

SCAFFOLD_DIR = Path(__file__).resolve().parent
DOMAINS = ["travel", "shopping", "housing", "food"]


def scaffold(persona_id: str, domain: str, path: Path) -> str:
    """The commented YAML of a new persona for `domain` (every field explained)."""
    header = Template((SCAFFOLD_DIR / "_header.yaml").read_text(encoding="utf-8"))
    body = (SCAFFOLD_DIR / f"{domain}.yaml").read_text(encoding="utf-8")
    name = persona_id.replace("-", " ").replace("_", " ").title()
    return header.substitute(id=persona_id, name=name, path=path) + body
