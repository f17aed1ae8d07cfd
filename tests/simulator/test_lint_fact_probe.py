"""`usersim persona lint` proposes each fact with other digits (probes.yaml `fact_proposals`) and
warns when the rule simulator would not correct it; a persona whose facts it corrects is clean."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import usersim

PERSONA = """\
id: {id}
name: Test
language: {language}
identity: someone with a few facts
goal: {{description: get it done, required: [done], deliverable_keywords: {{done: [all set]}}}}
known_info:
{facts}
"""


def lint(tmp_path: Path, language: str, facts: str) -> str:
    path = tmp_path / f"p-{language}.yaml"
    path.write_text(PERSONA.format(id=path.stem, language=language, facts=facts), encoding="utf-8")
    res = usersim("persona", "lint", str(path), check=False)
    return res.stdout + res.stderr


def test_facts_the_simulator_corrects_give_no_warning(tmp_path: Path) -> None:
    out = lint(
        tmp_path,
        "en",
        '  - {key: delivery_address, value: "Building 4, Floor 2", label: delivery address}\n'
        "  - {key: card_last4, value: the one ending in 7788, label: stolen card}\n",
    )
    assert "0 warning(s)" in out, out
    out = lint(tmp_path, "zh", "  - {key: address, value: 4号楼2层, label: 收货地址}\n")
    assert "0 warning(s)" in out, out


def test_a_fact_nothing_ties_to_its_words_is_reported_with_the_probe(tmp_path: Path) -> None:
    # a bare number under a label that names no concept: "your magic is 8899" cannot be told apart
    out = lint(tmp_path, "en", '  - {key: magic, value: "7788", label: magic}\n')
    assert "did not correct a proposal that gets 'magic' (7788) wrong" in out, out
    assert "8899" in out, out  # the probe's wrong value is shown
