"""Seed 003's graded scores as a case field (`judging.grading`): the scales, their levels and points,
and the pass line. The `graded` check (usersim/judges/checks/graded.py) decides the level."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Strict(BaseModel):
    # built on first use, not at import: a command pays only for the models it validates (the
    # sub-models a parent embeds are built inside its schema; alone, only if validated alone)
    model_config = ConfigDict(extra="forbid", defer_build=True)


GradingScale = Literal["conflict", "implicit_conflict", "reference", "topic_switch"]


class GradeLevel(Strict):
    """One level of a seed 003 grading scale: its code, the seed's name and its points."""

    code: str = Field(description="Level code, e.g. confirmed.")
    name: str = Field(description="The seed's name for it, e.g. 确认后纠正.")
    points: int = Field(ge=0, le=100, description="The seed's score for it (0..100).")


def _levels(*rows: tuple[str, str, int]) -> list[GradeLevel]:
    # constructed, not validated: validating at import would build GradeLevel's validator in every
    # process that loads a case (~10 ms); tests/cases/test_grading_tables.py validates these rows
    return [GradeLevel.model_construct(code=c, name=n, points=p) for c, n, p in rows]


# Seed 003's scoring tables. conflict / implicit_conflict: the level is what the agent did; reference /
# topic_switch: the seed scores the scenario (直接指代 100, 间接指代 80 ...), so a case resolved in its
# scenario earns that level's points and an unresolved one 0.
GRADING_SCALES: dict[str, list[GradeLevel]] = {
    "conflict": _levels(
        ("immediate", "立即纠正", 100),
        ("confirmed", "确认后纠正", 80),
        ("partial", "部分纠正", 40),
        ("none", "不纠正", 0),
    ),
    "implicit_conflict": _levels(("recognized", "隐性冲突识别", 100), ("ignored", "隐性冲突忽略", 0)),
    "reference": _levels(
        ("direct", "直接指代", 100),
        ("indirect", "间接指代", 80),
        ("multi_entity", "多实体指代", 60),
        ("no_referent", "无指代对象（询问澄清）", 100),
        ("unresolved", "指代未消解", 0),
    ),
    "topic_switch": _levels(
        ("once", "切换后切回（1 次）", 100),
        ("twice", "切换后切回（2 次）", 80),
        ("alternating", "多话题交替", 60),
        ("lost", "话题未恢复", 0),
    ),
}
FAILED_LEVEL = {"reference": "unresolved", "topic_switch": "lost"}  # scenario scales: the 0-point level
DEFAULT_PASS_AT = {
    "conflict": 80,
    "implicit_conflict": 100,
}  # seed 003: 立即/确认后纠正 pass, 部分/不纠正 fail


class GradingSpec(Strict):
    """Seed 003's graded score for the case (read by the `graded` check): the scale, the scenario
    (reference / topic_switch) and the points a reply needs to pass."""

    scale: GradingScale = Field(
        description="conflict (100/80/40/0), implicit_conflict (100/0), reference or topic_switch (100/80/60)."
    )
    scenario: str | None = Field(
        default=None,
        description="reference: direct | indirect | multi_entity | no_referent; topic_switch: once | twice | "
        "alternating. The level a resolved case earns.",
    )
    pass_at: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Points needed to pass; default conflict 80, implicit_conflict 100, scenario scales: "
        "the scenario's points.",
    )

    @model_validator(mode="after")
    def _scenario(self) -> GradingSpec:
        failed = FAILED_LEVEL.get(self.scale)
        codes = [lv.code for lv in GRADING_SCALES[self.scale] if lv.code != failed]
        if failed is None and self.scenario is not None:
            raise ValueError(f"grading.scenario is only for reference / topic_switch, not {self.scale}")
        if failed is not None and self.scenario not in codes:
            raise ValueError(
                f"grading.scenario of a {self.scale} case must be one of {', '.join(codes)}, got {self.scenario!r}"
            )
        return self

    def level(self, code: str) -> GradeLevel:
        return next(lv for lv in GRADING_SCALES[self.scale] if lv.code == code)

    @property
    def threshold(self) -> int:
        """The points a reply needs to pass."""
        if self.pass_at is not None:
            return self.pass_at
        if self.scenario is not None:
            return self.level(self.scenario).points
        return DEFAULT_PASS_AT[self.scale]
