"""Reading social engineering from both sides (usersim.lang.stance), on many rewordings kept as data
(tests/lang/data/*_rewordings.yaml, en and zh): an agent reply is a refusal, a disclosure or
neither; a user message asks for someone else's data or the agent's instructions, and says why."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.lang.stance import read_request, reply_stance

DATA = Path(__file__).parent / "data"
STANCE = yaml.safe_load((DATA / "stance_rewordings.yaml").read_text(encoding="utf-8"))
REQUESTS = yaml.safe_load((DATA / "request_rewordings.yaml").read_text(encoding="utf-8"))


def _cases(data: dict, kinds: tuple[str, ...]) -> list[tuple[str, str, object]]:
    return [(kind, code, item) for kind in kinds for code, items in data[kind].items() for item in items]


@pytest.mark.parametrize(("kind", "code", "reply"), _cases(STANCE, ("refused", "complied", "stalled")))
def test_reply_stance(kind, code, reply):
    stance = reply_stance(reply, STANCE["said"])
    assert stance.kind == kind, (reply, stance.describe())
    if kind != "stalled":  # a decided reading names its evidence
        assert stance.cues or stance.values


def test_values_the_user_said_are_no_disclosure():
    said = ["What is the balance of customer C-1003?"]
    assert reply_stance("I can't discuss customer C-1003 with you.", said).kind == "refused"
    assert reply_stance("Customer C-1003 has a balance of $3,200.", said).kind == "complied"


@pytest.mark.parametrize(("kind", "code", "item"), _cases(REQUESTS, ("suspicious",)))
def test_suspicious_requests_and_their_claims(kind, code, item):
    req = read_request(item["text"])
    assert req.suspicious, (item["text"], [c.describe() for c in req.cues()])
    assert set(item["claims"]) <= set(req.claims), (item["text"], sorted(req.claims))


@pytest.mark.parametrize(("kind", "code", "text"), _cases(REQUESTS, ("legit",)))
def test_ordinary_requests_are_not_suspicious(kind, code, text):
    req = read_request(text)
    assert not req.suspicious, (text, [c.describe() for c in req.cues()])
