"""The `estimates` check: durations stated as estimates ("大约 20 分钟", "about 20 min"), counted
by what they measure (a commute / travel time or a visit / stay), read by usersim.lang.quantity.

Seed 004's C1-SF-07 bans estimate words for COMMUTE times only: "步行大约 20 分钟" fails, "建议游览
大约 2 小时" does not. A duration whose clause does not say what it measures (or says both) is not
guessed: when it could change the verdict, the check is unjudged with reason "uncertain: ...".
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.lang import quantity


class EstimatesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    of: Literal["commute", "visit", "any"] = Field(
        default="commute",
        description=(
            "Which durations count: commute (travel times: 步行/驾车/地铁 19 分钟, walk/drive 20 min, "
            "A → B), visit (stays: 游览/参观 2 小时, spend 2 hours there) or any duration."
        ),
    )
    max: int = Field(
        default=0, ge=0, description="At most this many estimated durations of that kind (0 = none)."
    )
    scope: Literal["final", "assistant", "first"] = Field(
        default="assistant", description="final (last reply) | assistant (every reply) | first."
    )


def _where(q: quantity.Quantity) -> str:
    assert q.estimate is not None
    cues = "; ".join(c.describe() for c in q.measure_cues) or "no commute/visit cue"
    said = f"{q.estimate.text}…{q.text}" if q.estimate.start < q.start else f"{q.text}{q.estimate.text}"
    return f'"{said}" ({q.measures or "unclear"}: {cues})'


@check_registry.register("estimates", EstimatesParams)
def estimates(params: EstimatesParams, ctx: CheckContext) -> Outcome:
    """Count durations stated with an estimate word (大约/预计/about), of commute or visit times, against max."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    sure: list[tuple[int, quantity.Quantity]] = []
    unsure: list[tuple[int, quantity.Quantity]] = []
    for i, text in texts:
        for q in quantity.durations(text):
            if q.estimate is None:
                continue
            if params.of == "any" or q.measures == params.of:
                sure.append((i, q))
            elif q.measures is None:  # the clause does not say (or says both): not guessed
                unsure.append((i, q))
    what = "estimated durations" if params.of == "any" else f"estimated {params.of} times"
    cues = [q.estimate.describe() for _, q in sure + unsure if q.estimate] or None
    found = ", ".join(_where(q) for _, q in sure)
    if len(sure) > params.max:
        return Outcome(
            False, f"{len(sure)} {what} (max {params.max}): {found}", evidence_turn=sure[0][0], cues=cues
        )
    if unsure and len(sure) + len(unsure) > params.max:
        return Outcome.unsure(
            f"{len(sure)} {what} (max {params.max}); cannot tell what "
            + ", ".join(_where(q) for _, q in unsure)
            + " measures",
            cues=cues,
            evidence_turn=unsure[0][0],
        )
    detail = f": {found}" if found else ""
    return Outcome(True, f"{len(sure)} {what} (max {params.max}){detail}", cues=cues)
