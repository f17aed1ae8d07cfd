"""A third-party plugin with bugs, for the case-error tests: its check reads a column the state
does not have (KeyError 'plan'), its judge divides by zero."""

from __future__ import annotations

import json
import os

from pydantic import BaseModel, ConfigDict

from usersim.core.verdict import Verdict
from usersim.judges.checks import Outcome, check_registry


class PlanParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan_id: str


@check_registry.register("line_on_plan", PlanParams)
def line_on_plan(params: PlanParams, ctx) -> Outcome:
    """The first line is on the plan."""
    line = ctx.case.environment.state["lines"][0]
    return Outcome(line["plan"] == params.plan_id, f"line is on {line['plan']}")


class ParsedParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str


@check_registry.register("reply_json", ParsedParams)
def reply_json(params: ParsedParams, ctx) -> Outcome:
    """The final reply is JSON with the field (the bug: it never checks that it is JSON)."""
    final = [m for m in ctx.transcript if m.role == "assistant"][-1].content
    return Outcome(params.key in json.loads(final), "parsed")


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@check_registry.register("remote_grader", NoParams)
def remote_grader(params: NoParams, ctx) -> Outcome:
    """Asks a grading service (the bug: it puts its key in the error)."""
    raise ConnectionError(f"grader refused key {os.environ.get('CRASH_PLUGIN_API_KEY')}")


class ToneJudge:
    name = "tone"

    async def __call__(self, *, transcript, case, state):
        replies = [m for m in transcript if m.role == "assistant" and m.content]
        polite = sum("please" in m.content for m in replies)
        return [Verdict(judge="tone", verdict="pass", reason=f"{polite / (len(replies) - len(replies))}")]


def make_tone_judge(config):
    return ToneJudge()
