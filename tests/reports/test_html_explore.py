"""The exploration part of report.html: failure clusters and the branching tree link each failure to its
transcript with a copyable `usersim promote` command; regression runs show where they depart."""

from __future__ import annotations

import html
import shlex

from tests.reports.factory import record
from usersim.core.verdict import Verdict
from usersim.reports.html_explore import cluster_failures, explore_section, promote_command


def _failed(case_id: str, persona: str, reason: str, **extra):
    r = record(
        case_id,
        status="failed",
        mode="organic",
        verdicts=[Verdict(judge="stop_reason", verdict="fail", reason=reason)],
        **extra,
    )
    return r.model_copy(
        update={
            "id": f"{case_id}|persona={persona},r0",
            "variant": r.variant.model_copy(update={"persona": persona}),
        }
    )


def test_clusters_group_alike_reasons_and_the_report_links_and_offers_the_command():
    a = _failed("C2-E2E-04", "p~v1", "stopped: gave_up (2 consecutive unhelpful agent turns)")
    b = _failed("C2-E2E-04", "p~v2", "stopped: gave_up (3 consecutive unhelpful agent turns)")
    ok = record("C2-E2E-04", status="passed")
    clusters = cluster_failures([a, ok, b])
    assert len(clusters) == 1 and clusters[0]["records"] == [a.id, b.id] and clusters[0]["count"] == 2
    page = explore_section([a, ok, b], {"explore": {"n": 2, "out_dir": "/runs/x y"}, "seed": 7})
    assert f'<a href="#r0">{html.escape(a.id)}</a>' in page  # the representative's transcript anchor
    cmd = promote_command("/runs/x y", a.id)
    assert shlex.split(cmd) == ["usersim", "promote", "/runs/x y", a.id, "--to", "regressions"]
    assert html.escape(cmd, quote=True) in page and "copy</button>" in page


def test_branching_tree_shows_each_checkpoint_and_its_continuations():
    parent = record("C2-TD-04", status="passed", mode="organic")
    kids = [
        _failed(
            "C2-TD-04",
            "p~v1",
            "stopped: max_turns",
            branch={"parent_id": parent.id, "at_turn": 2, "index": i},
        ).model_copy(update={"id": f"{parent.id}|branch@2.{i}"})
        for i in range(2)
    ]
    page = explore_section(
        [parent, *kids], {"explore": {"n": 1, "branch_at": 2, "branches": 2, "out_dir": "o"}}
    )
    assert "checkpoint at turn 2" in page and "2 continuation(s), 2 failed" in page
    assert all(f'href="#r{n}"' in page for n in (0, 1, 2))


def test_a_plain_run_has_no_exploration_section_but_regressions_show_their_departure():
    assert explore_section([record()], {"seed": 0}) == ""
    reg = record(
        "C2-E2E-04-REG-abc",
        verdicts=[
            Verdict(
                judge="divergence",
                verdict="pass",
                counts_toward_status=False,
                reason="departs",
                details={
                    "diverged": True,
                    "first_divergent_turn": 5,
                    "kind": "tool_calls",
                    "now": "search()",
                    "recorded": "no tool call",
                },
            )
        ],
    )
    page = explore_section([reg], {})
    assert 'id="regressions"' in page and "turn 5 (tool_calls)" in page and "never decides the status" in page


def test_commands_name_the_case_folder_when_the_cases_are_not_the_bundled_library():
    a = _failed("bank-01", "p~v1", "stopped: gave_up")
    page = explore_section([a], {"explore": {"n": 1, "out_dir": "runs/x", "cases": ["examples/bank/cases"]}})
    cmd = promote_command("runs/x", a.id, cases=["examples/bank/cases"])
    assert shlex.split(cmd)[-4:] == ["--to", "regressions", "--cases", "examples/bank/cases"]
    assert html.escape(cmd, quote=True) in page


def test_the_coverage_map_is_rendered_from_the_meta_and_a_foreign_one_does_not_break_the_page():
    from usersim.reports.coverage_map import CoverageMap, DimensionCoverage
    from usersim.reports.html_explore import explore_section

    dim = DimensionCoverage(
        name="reveal_policy", source="persona", steerable=False, possible=["when_asked", "gradually"],
        tried={"when_asked": 3}, never_tried=["gradually"],
    )  # fmt: skip
    cov = CoverageMap(
        strategy="random", conversations=3, values_covered=1, values_total=2, dimensions=[dim],
        failures=0, first_failure_run=None,
    )  # fmt: skip
    page = explore_section([], {"explore": {"n": 3, "coverage": cov.model_dump(mode="json")}, "seed": 1})
    assert "Coverage map: what was never tried" in page and "no failure in 3 runs" in page
    row = page[page.index(">reveal_policy<") :]
    assert "persona (fixed)" in row[:200] and "when_asked (3)" in row[:300] and ">gradually<" in row[:500]
    broken = explore_section([], {"explore": {"n": 3, "coverage": {"strategy": "sideways"}}})
    assert "coverage map is not readable by this version" in broken and "Coverage map:" not in broken
