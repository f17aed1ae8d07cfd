"""The bench's OpenAI-compatible server, in its own process: `python bench/stub_server.py LATENCY_S [--log]`.

Prints its base URL on the first line of stdout, then serves until killed. Every reply waits
LATENCY_S seconds (asyncio, so calls overlap). Besides `/v1/chat/completions` it serves
`/t/TAG/v1/chat/completions`: a harness pointed at `BASE/t/TAG/v1` (bench.common.Stub.url) has its
calls counted under TAG, per model (`__counts__`), so every calls-per-conversation figure is what
the stub served, not what a harness says it sent. Replies are chosen by the request's model name,
so every harness (usersim, the bare loops, openevals) gets the same conversation:

* `sim`   — the simulated user: continue with a line until the agent has answered 5 times, then stop
            (JSON when the request asks for a JSON object, as usersim's `openai:` simulator does;
            else the line as plain text, as openevals' simulated user reads it);
* `judge` — a passing verdict for every criterion (usersim's rubric and fidelity prompts, openevals'
            `score` schema);
* `__count__` — no model: answers with the number of calls served so far (for cached_rerun_calls);
* `__counts__` — no model: answers with {tag: {model: calls}} served so far (untagged calls under "");
* `__log__` — no model (with `--log`): answers with the JSON list of the exchanges since the last
            `__log__` ({model, request, reply, t: arrival time.time()}) and forgets them: the bench
            counts the tokens of every request it received and times the CLI's first request;
* anything else — the agent: a short plain answer.

Without `--log` the server keeps no request bodies (a 10,000-conversation run would otherwise hold
them all in this process).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.openai_stub import OpenAIStub, _completion  # noqa: E402

TURNS = 5
USER_LINES = ["从上海出发，7 月 15 号左右，6 天", "2 个人，人均 1 万左右", "想逛街吃东西，也看看寺庙", "好的"]


class Responder:
    def __init__(self, latency: float, log: bool = False) -> None:
        self.latency = latency
        self.calls = 0
        self.by_tag: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.log: list[dict] | None = [] if log else None

    def __call__(self, body: dict, tag: str = "") -> dict:
        arrived = time.time()
        model = body.get("model", "")
        if model == "__count__":
            return {"content": str(self.calls)}
        if model == "__counts__":
            return {"content": json.dumps(self.by_tag)}
        if model == "__log__":
            exchanges, self.log = self.log or [], [] if self.log is not None else None
            return {"content": json.dumps(exchanges, ensure_ascii=False)}
        self.calls += 1
        self.by_tag[tag][model] += 1
        reply = self._reply(model, body)
        if self.log is not None:
            self.log.append({"model": model, "request": body, "reply": reply, "t": arrived, "tag": tag})
        return {**reply, "delay": self.latency} if self.latency else reply

    def _reply(self, model: str, body: dict) -> dict:
        messages = body.get("messages", [])
        usage = {"prompt_tokens": 300, "completion_tokens": 20}
        if model == "sim":
            # every harness flips roles for its simulator: the user's own lines arrive as `assistant`,
            # each one answered by the agent (count those, not `user` messages: usersim may end with a
            # per-turn note or a retry request in a `user` message)
            answered = sum(1 for m in messages if m.get("role") == "assistant")
            if answered >= TURNS:
                return {"content": json.dumps({"action": "stop", "reason": "方案有了"}), "usage": usage}
            line = USER_LINES[min(answered, len(USER_LINES)) - 1] if answered else USER_LINES[0]
            if (body.get("response_format") or {}).get("type") != "json_object":
                return {"content": line, "usage": usage}
            move = {"action": "continue", "message": line}
            return {"content": json.dumps(move, ensure_ascii=False), "usage": usage}
        if model == "judge":
            verdict = {"reasoning": "ok. Thus, the score should be: true.", "score": True}
            if body.get("tools"):  # openevals through a function-calling structured output
                return {"tool_calls": [{"name": body["tools"][0]["function"]["name"], "arguments": verdict}]}
            schema = (body.get("response_format") or {}).get("json_schema") or {}
            if schema.get("name") == "score":  # openevals through a json_schema structured output
                return {"content": json.dumps(verdict), "usage": usage}
            text = json.dumps(messages, ensure_ascii=False)
            if "You audit a SIMULATED USER" in text:
                checks = [
                    {"check": c, "verdict": "pass"}
                    for c in ("knowledge", "character", "reveal", "language", "events")
                ]
                return {"content": json.dumps({"checks": checks}), "usage": usage}
            if "Criteria to judge" in text:
                ids = map(int, re.findall(r"^(\d+)\. \[", messages[0]["content"], re.M))
                results = [
                    {
                        "criterion_id": i,
                        "criterion": "c",
                        "verdict": "pass",
                        "reason": "消息 9 给出了方案",
                        "evidence_turn": 9,
                    }
                    for i in ids
                ]
                return {"content": json.dumps({"results": results}, ensure_ascii=False), "usage": usage}
            return {"content": json.dumps(verdict), "usage": usage}
        return {
            "content": "好的，方案：机票 MU729 上海→大阪 ¥1980；第一天 大阪城；酒店 ¥680/晚。",
            "usage": usage,
        }


class TaggedStub(OpenAIStub):
    """OpenAIStub serving `/t/TAG/v1/chat/completions` beside `/v1/chat/completions`, the tag
    handed to the responder; no script, no key or model checks (the bench needs none)."""

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._tagged)
        app.router.add_post("/t/{tag}/v1/chat/completions", self._tagged)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _tagged(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.responder(body, request.match_info.get("tag", ""))  # type: ignore[misc,call-arg]
        if reply.get("delay"):
            await asyncio.sleep(float(reply["delay"]))
        return web.json_response(_completion(body, reply, len(self.requests)))


class _Forget(list):
    """OpenAIStub.requests that keeps only the count (the stub numbers its call ids by len())."""

    count = 0

    def append(self, item: object) -> None:
        self.count += 1

    def __len__(self) -> int:
        return self.count


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    latency = float(args[0]) if args else 0.0
    stub = TaggedStub(responder=Responder(latency, log="--log" in sys.argv))
    stub.requests = _Forget()
    stub.start()
    print(stub.base_url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
