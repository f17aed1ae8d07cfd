"""The rule simulator never says a line that contradicts its persona's traits, and a filler at most
once a conversation (issue 23: a tech-savvy engineer saying "It's my first time doing this"; an
impatient user repeating "Take your time, no rush" every turn)."""

from __future__ import annotations

import pytest

from tests.simulator.helpers import persona, view
from usersim.core.messages import Message
from usersim.personas.schema import Traits
from usersim.simulator.phrasing import fits, option_text, templates
from usersim.simulator.rule import RuleSimulator

U = lambda text: Message(role="user", content=text)
A = lambda text: Message(role="assistant", content=text)
QUESTIONS = ["从哪里出发？", "几个人？", "哪天出发？", "预算多少？", "还有别的要求吗？", "好的。"]


def lines(code: str, key: str, traits: Traits, *, allowed: bool) -> list[str]:
    return [option_text(o) for o in templates(code)[key] if fits(o, traits) is allowed]


async def talk(p, seed: int) -> list[str]:
    """Six user turns against an agent that keeps asking."""
    t = [U("帮我订去大阪的票")]
    said = []
    for turn, q in enumerate(QUESTIONS, start=2):
        t.append(A(q))
        reply = await RuleSimulator().next_turn(view(p, t, turn, seed=seed))
        said.append(reply.message)
        t.append(U(reply.message))
    return said


@pytest.mark.parametrize(
    "traits",
    [
        {"verbosity": "high", "tech_savvy": "high", "patience": "low"},
        {"verbosity": "high", "tech_savvy": "low", "patience": "high"},
        {"verbosity": "high", "tech_savvy": "medium", "patience": "medium", "decisiveness": "high"},
    ],
)
async def test_no_line_contradicts_a_trait_and_no_filler_repeats(traits):
    p = persona(traits=traits)
    banned = lines("zh", "fillers", p.traits, allowed=False) + lines(
        "zh", "hesitate", p.traits, allowed=False
    )
    fillers = [option_text(o) for o in templates("zh")["fillers"]]
    assert banned, "each trait mix here rules some line out"
    said_fillers = 0
    for seed in range(8):
        said = await talk(p, seed)
        said_fillers += sum(f in m for m in said for f in fillers)
        for msg in said:
            assert not any(b in msg for b in banned), (traits, msg)
        for f in fillers:
            assert sum(f in m for m in said) <= 1, (f, said)
    assert said_fillers >= 8  # verbose personas do add colour, just not the wrong kind or twice


def test_fits_reads_every_listed_trait():
    option = {"text": "x", "when": {"tech_savvy": ["low"], "patience": ["high", "medium"]}}
    assert fits(option, Traits(tech_savvy="low", patience="medium"))
    assert not fits(option, Traits(tech_savvy="high", patience="medium"))
    assert not fits(option, Traits(tech_savvy="low", patience="low"))
    assert fits("plain line", Traits(tech_savvy="high"))


def test_both_languages_have_the_same_phrasing_keys():
    assert set(templates("zh")) == set(templates("en"))
