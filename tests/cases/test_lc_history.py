"""LangChain messages read alike from every shape LangSmith and LangGraph store them in
(tests/data/import/lc_shapes/messages.yaml), and folded by id like LangGraph's add_messages."""

from __future__ import annotations

import pytest
import yaml

from tests.support.cli import REPO
from usersim.cases.importers.lc_history import REMOVE_ALL, LcMessage, add_messages, lc_message, merge

SHAPES = yaml.safe_load((REPO / "tests/data/import/lc_shapes/messages.yaml").read_text(encoding="utf-8"))
CASES = [
    pytest.param(e["want"], s, id=f"{e['name']} #{i}") for e in SHAPES for i, s in enumerate(e["shapes"])
]


@pytest.mark.parametrize("want, shape", CASES)
def test_every_shape_of_a_message_reads_the_same(want, shape):
    got = lc_message(shape, "x.json: message 0")
    assert (got.id, got.chat) == (want["id"], want["chat"])


@pytest.mark.parametrize(
    "shape, says",
    [
        (
            {"type": "robot", "content": "hi"},
            "x.json: message 0: unknown message type 'robot' (human, ai, tool, system or remove)",
        ),
        ({"type": "remove", "content": ""}, "x.json: message 0: a RemoveMessage must name the id it removes"),
        ("hi", "x.json: message 0: a message must be an object, got str"),
    ],
)
def test_what_is_no_message_is_named(shape, says):
    with pytest.raises(ValueError) as err:
        lc_message(shape, "x.json: message 0")
    assert str(err.value) == says


def m(mid: str | None, text: str, role: str = "user") -> LcMessage:
    return LcMessage(mid, {"role": role, "content": text})


def test_add_messages_replaces_by_id_removes_and_appends():
    history = [m("1", "hi"), m("2", "hello", "assistant")]
    got = add_messages(history, [m("2", "hello again", "assistant"), LcMessage("1", None), m("3", "bye")])
    assert [(x.id, (x.chat or {})["content"]) for x in got] == [("2", "hello again"), ("3", "bye")]
    assert add_messages(got, [LcMessage(REMOVE_ALL, None), m("4", "new")]) == [m("4", "new")]


def test_merge_without_ids_keeps_every_message_once():
    sys_, u1, a1, u2, a2 = (
        m(None, "be brief", "system"), m(None, "hi"), m(None, "hello", "assistant"), m(None, "bye"), m(None, "ok", "assistant"),
    )  # fmt: skip
    # a model call that sends the whole history again adds only its new tail
    assert merge([sys_, u1, a1], [sys_, u1, a1, u2]) == [sys_, u1, a1, u2]
    # a run whose output repeats all of what is known (its state) replaces it
    assert merge([u2], [sys_, u1, a1, u2, a2]) == [sys_, u1, a1, u2, a2]
    # the next run's messages overlapping the tail
    assert merge([u1, a1, u2], [u2, a2]) == [u1, a1, u2, a2]
    # nothing shared: appended, the repeated system prompt dropped
    assert merge([sys_, u1, a1], [sys_, u2, a2]) == [sys_, u1, a1, u2, a2]
