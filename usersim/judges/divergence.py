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


class DivergenceJudge:
    """Compares each live turn with the recorded one: tool calls (names and arguments) and reply text.
    Informational: it tells whether a regression replay still follows the original path."""

    name = "divergence"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        if not case.reference_transcript:
            return []
        live = _turns(transcript[state.history_len :])
        ref = _turns(case.reference_transcript)
        for i, (now, then) in enumerate(zip(live, ref), start=1):
            if _calls(now) != _calls(then):
                return [
                    self._diverged(
                        i,
                        f"tool calls differ: now {_calls(now) or 'none'}, recorded {_calls(then) or 'none'}",
                    )
                ]
            ratio = difflib.SequenceMatcher(None, _text(now), _text(then)).ratio()
            if ratio < TEXT_SIMILARITY_FLOOR:
                return [self._diverged(i, f"reply text similarity {ratio:.2f} < {TEXT_SIMILARITY_FLOOR}")]
        if len(live) != len(ref):
            return [
                self._diverged(
                    min(len(live), len(ref)) + 1, f"{len(live)} turn(s) now vs {len(ref)} recorded"
                )
            ]
        return [
            Verdict(
                judge=self.name,
                verdict="pass",
                counts_toward_status=False,
                reason=f"replay follows the recorded conversation for all {len(ref)} turn(s)",
            )
        ]

    def _diverged(self, turn: int, why: str) -> Verdict:
        return Verdict(
            judge=self.name,
            verdict="fail",
            counts_toward_status=False,
            reason=f"replay diverges from the recorded conversation at turn {turn}: {why}",
            details={"first_divergent_turn": turn},
        )


@judge_registry.register("divergence")
def make_divergence(config: JudgeConfig) -> DivergenceJudge:
    """Replay-vs-recorded comparison for promoted regression cases; informational."""
    return DivergenceJudge()
