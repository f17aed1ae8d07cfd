"""Divergence of a replayed regression case from the transcript it was promoted from."""

from __future__ import annotations

import difflib

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry

# Reply texts less similar than this (difflib ratio) count as a divergence.
TEXT_SIMILARITY_FLOOR = 0.6


def _turns(messages: list[Message]) -> list[list[Message]]:
    """Agent messages grouped by the user turn they answer."""
    turns: list[list[Message]] = []
    for m in messages:
        if m.role == "user":
            turns.append([])
        elif turns and m.role == "assistant":
            turns[-1].append(m)
    return turns


def _calls(msgs: list[Message]) -> list[tuple[str, str]]:
    return [(c.name, repr(sorted(c.arguments.items()))) for m in msgs for c in m.tool_calls]


def _text(msgs: list[Message]) -> str:
    return "\n".join(m.content for m in msgs if m.content)


def _show_calls(msgs: list[Message]) -> str:
    shown = [
        f"{c.name}({', '.join(f'{k}={v}' for k, v in sorted(c.arguments.items()))})"
        for m in msgs
        for c in m.tool_calls
    ]
    return "; ".join(shown) or "no tool call"


def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


class DivergenceJudge:
    """Compares each live turn with the recorded one: tool calls (names and arguments) and reply text.
    Informational only (never decides status): a regression case is promoted from a *failing*
    conversation, so a fixed agent is expected to depart from it. The verdict says where and how."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "divergence"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        if not case.reference_transcript:
            return []
        live = _turns(transcript[state.history_len :])
        ref = _turns(case.reference_transcript)
        origin = case.promoted_from  # a strict case replays one turn of the recording: number it as there
        first = origin.failing_turn if origin and origin.form == "strict" and origin.failing_turn else 1
        for i, (now, then) in enumerate(zip(live, ref), start=first):
            if _calls(now) != _calls(then):
                return [
                    self._diverged(
                        i,
                        "tool_calls",
                        _show_calls(now),
                        _show_calls(then),
                        "tool calls differ",
                    )
                ]
            ratio = difflib.SequenceMatcher(None, _text(now), _text(then)).ratio()
            if ratio < TEXT_SIMILARITY_FLOOR:
                return [
                    self._diverged(
                        i,
                        "text",
                        _clip(_text(now)),
                        _clip(_text(then)),
                        f"reply text similarity {ratio:.2f} < {TEXT_SIMILARITY_FLOOR}",
                    )
                ]
        if len(live) != len(ref):
            turn = min(len(live), len(ref)) + first
            return [
                self._diverged(
                    turn,
                    "length",
                    f"{len(live)} turn(s)",
                    f"{len(ref)} turn(s)",
                    f"{len(live)} turn(s) now vs {len(ref)} recorded",
                )
            ]
        return [
            Verdict(
                judge=self.name,
                verdict="pass",
                counts_toward_status=False,
                reason=f"the agent still follows the recorded conversation for all {len(ref)} turn(s)",
                details={"diverged": False, "first_divergent_turn": None, "turns_recorded": len(ref)},
            )
        ]

    def _diverged(self, turn: int, kind: str, now: str, recorded: str, why: str) -> Verdict:
        return Verdict(
            judge=self.name,
            verdict="pass",  # information, not a failure: departing from a failing transcript is the point
            counts_toward_status=False,
            reason=f"the agent now departs from the recorded conversation at turn {turn}: {why} "
            f"(now: {now}; recorded: {recorded})",
            details={
                "diverged": True,
                "first_divergent_turn": turn,
                "kind": kind,
                "now": now,
                "recorded": recorded,
            },
        )


@judge_registry.register("divergence")
def make_divergence(config: JudgeConfig) -> DivergenceJudge:
    """Where a promoted regression case now departs from its recorded conversation; informational."""
    return DivergenceJudge()
