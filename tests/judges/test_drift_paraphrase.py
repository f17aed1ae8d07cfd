"""The drift reading on rewordings it was not written for (tests/judges/paraphrase/drift.yaml): an
on-topic last reply is never read as drift, an off-topic one never as anchored, a reply without
content words is uncertain; at least 90% of the topical rewordings are decided."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.judges.helpers import bot, user
from usersim.judges.drift import lexical_curve, overall

GROUPS = yaml.safe_load((Path(__file__).parent / "paraphrase" / "drift.yaml").read_text(encoding="utf-8"))[
    "groups"
]
FIRST_REPLY = "好的，已经按你的要求查好了，下面是结果。"


def _cases():
    for g in GROUPS:
        for kind in ("on_topic", "off_topic", "uncertain"):
            for i, reply in enumerate(g.get(kind, [])):
                yield pytest.param(g, kind, reply, id=f"{g['name']}-{kind}-{i}")


def _last(g: dict, reply: str) -> dict:
    # the first reply restates the instruction, as an anchored agent does
    t = [user(g["instruction"]), bot(g["instruction"] + "：" + FIRST_REPLY), user(g["follow_up"]), bot(reply)]
    curve, _ = lexical_curve(t, 0)
    return {**curve[-1], "overall": overall(curve)}


@pytest.mark.parametrize("g, kind, reply", list(_cases()))
def test_rewording_is_never_read_the_opposite_way(g, kind, reply):
    p = _last(g, reply)
    if kind == "uncertain":
        assert p.get("uncertain") and p["overall"] is None, p
    elif p.get("uncertain"):
        assert p["overall"] is None
    elif kind == "on_topic":
        assert p["anchoring"] >= 70, p
    else:
        assert p["anchoring"] <= 30, p


def test_most_topical_rewordings_are_decided():
    topical = [(g, r) for g in GROUPS for k in ("on_topic", "off_topic") for r in g.get(k, [])]
    decided = sum(1 for g, r in topical if not _last(g, r).get("uncertain"))
    assert len(topical) >= 35 and decided / len(topical) >= 0.9
