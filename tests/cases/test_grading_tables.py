"""Seed 003's grading tables are constructed without validation at import (cases/grading.py):
every row must still be a valid GradeLevel, and a case's grading reads them as before."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from usersim.cases.grading import DEFAULT_PASS_AT, FAILED_LEVEL, GRADING_SCALES, GradeLevel, GradingSpec


@pytest.mark.parametrize("scale", sorted(GRADING_SCALES))
def test_every_level_of_every_scale_validates(scale):
    levels = GRADING_SCALES[scale]
    assert levels, scale
    for lv in levels:
        assert GradeLevel.model_validate(lv.model_dump()) == lv
    codes = [lv.code for lv in levels]
    assert len(set(codes)) == len(codes), f"{scale}: duplicate level codes {codes}"
    assert FAILED_LEVEL.get(scale, codes[0]) in codes


def test_a_constructed_level_is_still_refused_when_validated():
    bad = GradeLevel.model_construct(code="x", name="y", points=101).model_dump()
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        GradeLevel.model_validate(bad)


def test_thresholds_read_the_tables():
    assert GradingSpec(scale="conflict").threshold == DEFAULT_PASS_AT["conflict"] == 80
    assert GradingSpec(scale="reference", scenario="indirect").threshold == 80
    assert GradingSpec(scale="topic_switch", scenario="alternating").level("lost").points == 0
    with pytest.raises(ValidationError, match="must be one of direct, indirect, multi_entity, no_referent"):
        GradingSpec(scale="reference", scenario="unresolved")
