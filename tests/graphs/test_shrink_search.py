"""The shrink search on its own: ddmin finds the planted cause among many units, is 1-minimal and
deterministic, stops at its budget with a selection that still holds; sentences are cut and joined
the same way in English and Chinese; tool-result noise is pruned by rows and fields."""

from __future__ import annotations

import asyncio
import json

import pytest

from usersim.cases.loader import find_case
from usersim.cases.schema import Case, CaseInput
from usersim.core.messages import Message, ToolCall
from usersim.graphs.shrink_search import BudgetSpent, Search
from usersim.graphs.shrink_units import Draft, join_sentences


def _static(lines: list[str], history: list[Message] | None = None) -> Case:
    case = find_case("B1-EI-01")
    inp = CaseInput(history=history or [], message=lines[0], script=lines[1:])
    return case.model_copy(update={"input": inp, "environment": None})


class Oracle:
    """Holds when every needed line is still said (anywhere in the live lines); counts its runs."""

    def __init__(self, needed: set[str], budget: int = 1000):
        self.needed, self.budget, self.runs = needed, budget, 0

    async def __call__(self, case: Case, persona):
        if self.runs >= self.budget:
            raise BudgetSpent
        self.runs += 1
        said = " ".join([case.input.message or "", *case.input.script])
        return all(n in said for n in self.needed), None


def _search(lines: list[str], oracle: Oracle):
    draft = Draft.of(_static(lines), None, [])
    search = Search(draft, oracle)
    kept, complete = asyncio.run(search.run(draft.everything()))
    case, _ = draft.build(kept)
    return [case.input.message, *case.input.script], complete


LINES = [f"Line {i} of the conversation, said once." for i in range(16)]


@pytest.mark.parametrize("needed", [{"Line 3 "}, {"Line 2 ", "Line 11 "}, {"Line 0 ", "Line 7 ", "Line 15 "}])
def test_ddmin_finds_exactly_the_planted_lines(needed):
    found, complete = _search(LINES, Oracle(needed))
    assert complete
    assert found == [line for line in LINES if any(n in line for n in needed)]


def test_the_same_input_takes_the_same_path_and_cost():
    a, b = Oracle({"Line 5 ", "Line 9 "}), Oracle({"Line 5 ", "Line 9 "})
    assert _search(LINES, a) == _search(LINES, b)
    assert a.runs == b.runs and a.runs < 60  # far fewer runs than the 2^16 selections


def test_a_spent_budget_returns_the_last_selection_that_held():
    oracle = Oracle({"Line 5 ", "Line 9 "}, budget=8)
    found, complete = _search(LINES, oracle)
    assert not complete and oracle.runs == 8
    assert 2 < len(found) < len(LINES)  # smaller than the start, not yet minimal
    assert all(any(n in line for line in found) for n in oracle.needed)  # and it still holds


@pytest.mark.parametrize(
    "text,picked,expected",
    [
        ("Hi there. My card was stolen. Please block it.", [1, 2], "My card was stolen. Please block it."),
        ("Hi there.\nMy card was stolen.", [1], "My card was stolen."),
        ("Hi!\nMy card was stolen.\nBlock it?", [0, 2], "Hi!\nBlock it?"),
        ("你好。我的卡丢了。请帮我挂失。", [1, 2], "我的卡丢了。请帮我挂失。"),
        ("您好！我的银行卡被偷了，尾号7788。请尽快冻结！", [1], "我的银行卡被偷了，尾号7788。"),
        ("The price is 3.5 dollars. That is fine.", [0], "The price is 3.5 dollars."),
    ],
)
def test_sentences_are_cut_and_joined_as_the_text_had_them(text, picked, expected):
    assert join_sentences(text, picked) == expected


def test_a_sentence_shrink_keeps_the_one_that_matters_in_each_language():
    lines = [
        "你好。我想冻结尾号7788的卡。谢谢。",
        "Hello. Please block the card ending in 7788, the blue one. Thanks.",
    ]
    draft = Draft.of(_static(lines), None, [])
    assert len(draft.units["sentences"]) == 6
    found, _ = _search(lines, Oracle({"7788的卡", "block the card"}))
    assert found == ["我想冻结尾号7788的卡。", "Please block the card ending in 7788, the blue one."]


def test_tool_result_noise_is_dropped_by_rows_and_fields():
    profile = {
        "name": "Priya",
        "email": "p@example.com",
        "cards": [{"id": "K-1"}, {"id": "K-2"}, {"id": "K-3"}],
    }
    history = [
        Message(role="user", content="Show my cards."),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="c1", name="get_customer"), ToolCall(id="c2", name="other")],
        ),
        Message(role="tool", content=json.dumps(profile), tool_call_id="c1", name="get_customer"),
        Message(role="tool", content="not JSON: left alone", tool_call_id="c2", name="other"),
    ]
    draft = Draft.of(_static(["Which one is active?"], history), None, history)
    assert draft.units["noise"] == [
        (0, 1, "name"), (0, 1, "email"), (0, 1, "cards"), (0, 1, "cards", 0), (0, 1, "cards", 1), (0, 1, "cards", 2)
    ]  # fmt: skip
    kept = draft.everything() | {"noise": frozenset({(0, 1, "cards"), (0, 1, "cards", 2)})}
    case, _ = draft.build(kept)
    tool, other = [m for m in case.input.history if m.role == "tool"]
    assert json.loads(tool.content) == {"cards": [{"id": "K-3"}]}
    assert other.content == "not JSON: left alone"
    # dropping the user turn drops its tool results with it: their noise no longer counts
    assert draft.relevant("noise", kept | {"turns": frozenset({1})}) == []


def test_a_selection_that_makes_no_case_is_never_run():
    draft = Draft.of(_static(["Only line. Two sentences."]), None, [])
    assert draft.build(draft.everything() | {"turns": frozenset()}) is None  # nothing left to answer
    assert draft.build(draft.everything() | {"sentences": frozenset()}) is None  # a message with no words


def _organic(message: str | None, script: list[str]):
    from usersim.personas.loader import resolve_persona

    case = find_case("C2-E2E-04")
    case = case.model_copy(update={"input": CaseInput(message=message, script=script)})
    return case, resolve_persona(case)


def test_an_organic_draft_drops_scripted_lines_facts_and_events_and_keeps_its_order():
    case, persona = _organic("第一句。", ["第二句。", "第三句。"])
    draft = Draft.of(case, persona, [])
    assert draft.units["turns"] == [0, 1, 2]
    assert draft.units["facts"] == list(range(len(persona.known_info))) and persona.known_info
    kept = draft.everything() | {"turns": frozenset({1, 2}), "facts": frozenset({0}), "events": frozenset()}
    built, p = draft.build(kept)
    # the first kept line opens the conversation, the rest are still replayed in order
    assert built.input.message == "第二句。" and built.input.script == ["第三句。"]
    assert p.known_info == persona.known_info[:1] and p.events == []
    assert persona.known_info != p.known_info  # the draft's own persona is not changed


def test_the_persona_opening_is_shrunk_by_sentence_when_the_case_does_not_set_one():
    case, persona = _organic(None, [])
    persona = persona.model_copy(update={"opening_message": "你好。我想买一台笔记本。预算八千以内。"})
    draft = Draft.of(case, persona, [])
    assert draft.units["sentences"] == [(-1, 0), (-1, 1), (-1, 2)]
    _, p = draft.build(draft.everything() | {"sentences": frozenset({(-1, 1), (-1, 2)})})
    assert p.opening_message == "我想买一台笔记本。预算八千以内。"


def test_facts_the_user_never_said_are_offered_to_go_first():
    from tests.reports.factory import record
    from usersim.core.record import TranscriptMessage

    case, persona = _organic(None, [])
    said = persona.known_info[0].value
    rec = record(case.id, transcript=[TranscriptMessage(role="user", content=f"就是 {said} 吧", turn=1)])
    unused = Draft.of(case, persona, []).unused("facts", rec)
    assert 0 not in unused and unused == list(range(1, len(persona.known_info)))
