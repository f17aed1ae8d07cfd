"""The coverage map of an exploration: which value of each feature (persona traits, reveal policy,
events fired, tools called, intercepts hit, turns, stop reason, outcome) its conversations tried and
which were never tried. graphs.coverage builds it; it is stored in the run meta (`explore.coverage`)
and in OUT/coverage.json, and rendered here into report.html."""

from __future__ import annotations

from html import escape
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.reports.html_parts import cell, raw_cell, table

PAIRS_IN_HTML = 12


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DimensionCoverage(Strict):
    """One feature dimension: the values tried (with how many conversations) and those never tried."""

    name: str = Field(description="Feature name, e.g. trait.verbosity, reveal_policy, tool, stop_reason.")
    source: Literal["persona", "conversation"] = Field(
        description="persona: set by the persona variant before the conversation; conversation: what happened."
    )
    steerable: bool = Field(
        description="Whether exploration can choose it (a variation axis); other dimensions are observed."
    )
    possible: list[str] | None = Field(
        description="Every value the schema, the case or the persona allows; null for an open dimension."
    )
    tried: dict[str, int] = Field(description="Value -> conversations that had it.")
    never_tried: list[str] = Field(description="Possible values no conversation had.")


class PairCoverage(Strict):
    """Pairs of values of two steerable dimensions (pairwise coverage of the variation axes)."""

    dimensions: list[str] = Field(description="The dimensions paired.")
    covered: int = Field(description="Value pairs some conversation had.")
    total: int = Field(description="Every value pair of two different dimensions.")
    never_tried: list[list[str]] = Field(
        description="Some pairs no conversation had, as ['dim=value', 'dim=value'] (at most 40)."
    )


class Round(Strict):
    """One round of a guided exploration."""

    index: int = Field(description="1-based round number.")
    kind: str = Field(
        description="covering (the pairwise covering design's first rows), or guided (recombinations "
        "and mutations of failing and near-failing conversations, and the design's next rows)."
    )
    conversations: int = Field(description="Conversations planned in the round.")
    mutations: int = Field(default=0, description="Of them: mutations of a failing or near-failing one.")
    mutated: list[str] = Field(
        default_factory=list,
        description="The earlier conversations (record ids) those mutations started from.",
    )
    new_values: int = Field(description="Feature values no earlier conversation had.")
    failed: int = Field(description="Failed or errored conversations of the round.")


class CoverageMap(Strict):
    """The whole map of one exploration."""

    strategy: Literal["random", "guided"] = Field(description="How the variants were chosen.")
    conversations: int = Field(description="Conversations described.")
    values_covered: int = Field(description="Feature values tried, over the dimensions with known values.")
    values_total: int = Field(description="Possible feature values, over the dimensions with known values.")
    dimensions: list[DimensionCoverage] = Field(description="Per dimension.")
    pairs: PairCoverage | None = Field(default=None, description="Pairwise coverage of the steerable axes.")
    failures: int = Field(description="Failed or errored conversations.")
    first_failure_run: int | None = Field(
        description="1-based position, in the run's plan order, of the first failed or errored conversation."
    )
    rounds: list[Round] = Field(default_factory=list, description="Guided: the rounds.")

    def line(self) -> str:
        """One line for the console: values and pairs covered, and where the first failure came."""
        pairs = f", {self.pairs.covered}/{self.pairs.total} axis pairs" if self.pairs else ""
        first = (
            f"first failure at run {self.first_failure_run} of {self.conversations}"
            if self.first_failure_run
            else f"no failure in {self.conversations} runs"
        )
        never = sum(len(d.never_tried) for d in self.dimensions)
        return (
            f"coverage ({self.strategy}): {self.values_covered}/{self.values_total} feature values{pairs}; "
            f"{never} never tried; {first}"
        )


def _values(d: DimensionCoverage) -> str:
    return ", ".join(f"{v} ({n})" for v, n in sorted(d.tried.items(), key=lambda x: (-x[1], x[0]))) or "—"


def coverage_html(cov: CoverageMap) -> str:
    """The coverage map: per dimension what was tried and what was never tried; then the untried
    axis pairs and, for a guided exploration, its rounds."""
    rows = [
        [
            cell(d.name),
            cell(d.source + (" (varied)" if d.steerable else " (fixed)" if d.source == "persona" else "")),
            cell(_values(d)),
            raw_cell(
                f'<b class="failed">{escape(", ".join(d.never_tried))}</b>'
                if d.never_tried
                else ('<span class="muted">—</span>' if d.possible is not None else "open")
            ),
        ]
        for d in cov.dimensions
    ]
    parts = [
        f"<h3>Coverage map: what was never tried</h3><p>{escape(cov.line())}.</p>",
        table(["feature", "set by", "tried (conversations)", "never tried"], rows, "coverage"),
        '<p class="muted">Persona features are set before a conversation (varied: the exploration chooses '
        "them); conversation features are what happened, so a value never tried there never occurred.</p>",
    ]
    if cov.pairs and cov.pairs.never_tried:
        missing = cov.pairs.total - cov.pairs.covered
        shown = cov.pairs.never_tried[:PAIRS_IN_HTML]
        parts.append(
            f"<p>Axis pairs never tried ({missing} of {cov.pairs.total}"
            f"{f', the first {len(shown)} (all in coverage.json up to 40)' if missing > len(shown) else ''}): "
            f"{escape('; '.join(' + '.join(p) for p in shown))}</p>"
        )
    if cov.rounds:
        parts.append(
            table(
                ["round", "kind", "conversations", "mutations", "new values", "failed"],
                [
                    [cell(r.index), cell(r.kind), cell(r.conversations), cell(r.mutations)]
                    + [cell(r.new_values), cell(r.failed)]
                    for r in cov.rounds
                ],
                "rounds",
            )
        )
    return "".join(parts)
