"""The shipped library validates as a whole, through the CLI."""

from __future__ import annotations

import json

from tests.integration.test_cli_run import usersim


def test_cases_personas_and_skills_validate():
    res = usersim("validate", "usersim/cases", "usersim/personas", "usersim/sandbox/skills")
    assert "0 with problems" in res.stderr
    assert res.stdout == ""


def test_cases_list_json_contract():
    rows = json.loads(usersim("cases", "list", "usersim/cases", "--json").stdout)
    ids = {r["id"] for r in rows}
    assert len(ids) == len(rows) >= 126
    assert all({"id", "dimension", "mode", "scoring"} <= set(r) for r in rows)
    assert {r["id"] for r in rows if r["mode"] == "organic"} >= {"C2-TD-04", "C2-E2E-04"}
    assert {f"D-{i:02d}" for i in range(1, 21)} <= ids
