"""C1-SF-07's commute-estimate check on a paraphrase corpus (tests/judges/paraphrase/estimates.yaml):
every rewording is decided as its original, or unjudged-uncertain, never the opposite verdict; and
the layer stays decisive (most rewordings are decided, not left uncertain)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, case, state, user
from usersim.judges.checks import run_check

CORPUS = yaml.safe_load((Path(__file__).parent / "paraphrase" / "estimates.yaml").read_text(encoding="utf-8"))
SPEC = CORPUS["check"]
REPLIES = CORPUS["replies"]


async def decide(text: str):
    transcript = [user("曼谷 3 天，去大皇宫、卧佛寺、考山路、暹罗广场，排个行程"), bot(text)]
    return await run_check(SPEC, transcript=transcript, case=case(checks=[SPEC]), state=state(transcript))


def test_the_corpus_is_big_enough_and_balanced():
    kinds = [r["expect"] for r in REPLIES]
    assert len(kinds) >= 30 and kinds.count("pass") >= 12 and kinds.count("fail") >= 12


@pytest.mark.parametrize("expect", ["pass", "fail"])
async def test_the_originals_decide_as_the_seed_says(expect):
    v = await decide(CORPUS["originals"][expect])
    assert v.verdict == expect, v.reason


@pytest.mark.parametrize("reply", REPLIES, ids=[f"{i}-{r['expect']}" for i, r in enumerate(REPLIES)])
async def test_a_rewording_is_never_decided_the_opposite_way(reply):
    v = await decide(reply["text"])
    assert v.verdict in (reply["expect"], "unjudged"), v.reason
    if v.verdict == "unjudged":
        assert v.reason.startswith("uncertain:"), v.reason
    if v.verdict == "fail":  # a fail names the estimate word and the duration it is attached to
        assert "estimated commute times" in v.reason and "[cues:" in v.reason


async def test_the_check_decides_nearly_every_rewording():
    verdicts = [(await decide(r["text"])).verdict == r["expect"] for r in REPLIES]
    assert sum(verdicts) / len(verdicts) >= 0.9
