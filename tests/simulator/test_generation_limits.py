"""Per-role generation limits: every call carries max_tokens (a spec's ?max_tokens= wins)."""

from __future__ import annotations

from tests.support.openai_stub import openai_stub, text  # noqa: F401  (fixture)
from usersim.llm.client import DEFAULT_MAX_TOKENS, chat_completion

MSGS = [{"role": "user", "content": "hi"}]


async def test_each_role_gets_its_default_limit_and_the_caller_or_env_overrides_it(openai_stub, monkeypatch):  # noqa: F811
    openai_stub.script(text("a"), text("b"), text("c"), text("d"))
    for role in ("agent", "simulator", "judge"):
        await chat_completion(model="m", messages=MSGS, role=role, cache=False)
    await chat_completion(model="m", messages=MSGS, role="agent", max_tokens=77, cache=False)
    sent = [r["max_tokens"] for r in openai_stub.requests]
    assert sent == [
        DEFAULT_MAX_TOKENS["agent"],
        DEFAULT_MAX_TOKENS["simulator"],
        DEFAULT_MAX_TOKENS["judge"],
        77,
    ]
    assert DEFAULT_MAX_TOKENS == {"agent": 4096, "simulator": 600, "judge": 2000}
    monkeypatch.setenv("USERSIM_MAX_TOKENS_SIMULATOR", "128")
    openai_stub.script(text("e"))
    await chat_completion(model="m", messages=MSGS, role="simulator", cache=False)
    assert openai_stub.requests[-1]["max_tokens"] == 128
