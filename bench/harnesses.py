"""The harnesses the bench plays side by side, each `count` conversations, `concurrency` at once,
against the stub's `agent`, `sim` and `judge` models:

* usersim in process (`usersim.arun`: graph, simulator, judges, store, summary and report);
* two bare loops that post the SAME requests usersim posts for this conversation (the prompts
  `capture_prompts` took from one usersim conversation: the agent's system prompt and tools, the
  simulator's persona prompt, the judges' requests) with nothing else around them — one as plain
  JSON over one aiohttp session (the floor), one through the openai SDK's typed request pipeline;
* openevals' `run_multiturn_simulation_async` (the `bench` extra; null with the reason when it
  cannot be imported).

usersim and the bare loops make the same calls: 5 agent, 5 simulator (the 5th says stop) and the
judges' (the case's rubric and the simulated user's fidelity). openevals ends at max_turns and its
first user line is fixed, so it makes 4 simulator calls, and one judge call: the case's rubric
(bench/openevals_rubric.md, openevals' own conversation-prompt layout); every figure is also given
per model call, and the calls are what the stub served (bench/stub_server.py's tags).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import CASE, TURNS

OPENING = "我想暑假去日本玩"  # bench/case.yaml's input.message
TIMEOUT = 900.0  # s per request: on a loaded machine a reply can wait long for its turn on the CPU


@dataclass
class Prompts:
    """The fixed parts of usersim's requests for the bench conversation."""

    agent_system: list[dict[str, Any]] = field(default_factory=list)  # leading system messages
    agent_extra: dict[str, Any] = field(default_factory=dict)  # tools, options: the body minus messages
    sim_system: str = "You are role-playing a USER planning a trip."
    sim_extra: dict[str, Any] = field(default_factory=dict)
    judges: list[dict[str, Any]] = field(default_factory=list)  # whole judge request bodies


def dump_prompts(prompts: Prompts, path: Path) -> Path:
    """`prompts` as JSON (what a harness in a child process reads back with load_prompts)."""
    path.write_text(json.dumps(dataclasses.asdict(prompts), ensure_ascii=False), encoding="utf-8")
    return path


def load_prompts(path: str | Path) -> Prompts:
    return Prompts(**json.loads(Path(path).read_text(encoding="utf-8")))


def rubric_prompt() -> str:
    """openevals' judge prompt for the bench case: bench/openevals_rubric.md with the case's
    `judging.rubric` items (the same rubric usersim's judge reads), `{outputs}` left for openevals."""
    import yaml

    items = yaml.safe_load(CASE.read_text(encoding="utf-8"))["judging"]["rubric"]
    template = (CASE.parent / "openevals_rubric.md").read_text(encoding="utf-8")
    return template.replace("[[RUBRIC]]", "\n".join(f"- {item}" for item in items))


def capture_prompts(exchanges: list[dict[str, Any]]) -> Prompts:
    """Prompts from the stub's log of one usersim conversation."""
    p = Prompts()
    first: dict[str, dict[str, Any]] = {}
    for ex in exchanges:
        first.setdefault(ex["model"], ex["request"])
        if ex["model"] == "judge":
            p.judges.append(ex["request"])
    rest = lambda body: {k: v for k, v in body.items() if k not in ("model", "messages")}  # noqa: E731
    if "agent" in first:
        msgs = first["agent"].get("messages", [])
        p.agent_system = [m for m in msgs[:1] if m.get("role") == "system"]
        p.agent_extra = rest(first["agent"])
    if "sim" in first:
        msgs = first["sim"].get("messages", [])
        if msgs and msgs[0].get("role") == "system":
            p.sim_system = msgs[0]["content"]
        p.sim_extra = rest(first["sim"])
    return p


# --- usersim ------------------------------------------------------------------------------------


async def usersim_conversations(count: int, concurrency: int, out: Path) -> int:
    """usersim in process; returns the model calls its records account for."""
    import usersim

    result = await usersim.arun(
        str(CASE),
        agent="openai:agent",
        simulator="openai:sim",
        judge_model="openai:judge",
        out=out,
        repeats=count,
        concurrency=concurrency,
    )
    # statuses from the store's columns and the calls from summary.json: the check parses no record
    # (the peers' loops read nothing back either; parsing 256 records was 2% of a C=128 run's wall)
    if result.counts.get("error") or len(result.records) != count:
        raise RuntimeError(f"usersim bench run went wrong: {result.explain(transcript=False)}")
    return int(result.summary["usage"]["total"]["calls"])


# --- the bare loops -------------------------------------------------------------------------------

Chat = Callable[[dict[str, Any]], Awaitable[str]]


async def _bare(chat: Chat, prompts: Prompts, count: int, concurrency: int) -> None:
    """The conversation with nothing around the calls: the transcript as a list of dicts."""
    sem = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with sem:
            transcript = [{"role": "user", "content": OPENING}]
            for _ in range(TURNS):
                body = {"model": "agent", "messages": [*prompts.agent_system, *transcript]}
                transcript.append(
                    {"role": "assistant", "content": await chat({**prompts.agent_extra, **body})}
                )
                flipped = [
                    {"role": "user" if m["role"] == "assistant" else "assistant", "content": m["content"]}
                    for m in transcript
                ]
                sys_msg = {"role": "system", "content": prompts.sim_system}
                body = {**prompts.sim_extra, "model": "sim", "messages": [sys_msg, *flipped]}
                move = json.loads(await chat(body))
                if move.get("action") == "stop":
                    break
                transcript.append({"role": "user", "content": move.get("message", "")})
            await asyncio.gather(*(chat(body) for body in prompts.judges))

    await asyncio.gather(*(one() for _ in range(count)))


async def bare_json_conversations(prompts: Prompts, count: int, concurrency: int) -> int:
    """The floor: the requests posted as plain JSON over one aiohttp session."""
    import aiohttp

    calls = 0
    url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
    headers = {"Authorization": "Bearer bench"}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as s:

        async def chat(body: dict[str, Any]) -> str:
            nonlocal calls
            calls += 1
            async with s.post(url, json=body, headers=headers) as reply:
                reply.raise_for_status()
                data = await reply.json()
            return data["choices"][0]["message"]["content"] or ""

        await _bare(chat, prompts, count, concurrency)
    return calls


async def bare_sdk_conversations(prompts: Prompts, count: int, concurrency: int) -> int:
    """The same requests through the openai SDK's typed `chat.completions.create` (its aiohttp
    backend, no retries)."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    calls = 0
    async with AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="bench",
        max_retries=0,
        timeout=TIMEOUT,
        http_client=DefaultAioHttpClient(),
    ) as client:

        async def chat(body: dict[str, Any]) -> str:
            nonlocal calls
            calls += 1
            reply = await client.chat.completions.create(**body)
            return reply.choices[0].message.content or ""

        await _bare(chat, prompts, count, concurrency)
    return calls


# --- openevals ------------------------------------------------------------------------------------


def openevals_missing() -> str | None:
    """Why openevals cannot run here, or None."""
    try:
        import langchain_openai  # noqa: F401
        import openevals.simulators  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure is the reason recorded
        return (
            f"openevals not importable ({type(exc).__name__}: {exc}); install with pip install -e '.[bench]'"
        )
    return None


async def openevals_conversations(prompts: Prompts, count: int, concurrency: int) -> int:
    """openevals' multiturn simulator (`run_multiturn_simulation_async`): its own LLM simulated user
    (`create_async_llm_simulated_user`) with usersim's persona prompt for the case, the agent as a
    ChatOpenAI app with usersim's agent system prompt and tools, and openevals' LLM-as-judge
    (`create_async_llm_as_judge`) as the trajectory evaluator on the case's rubric. Returns the
    conversations played (the calls are counted at the stub)."""
    from langchain_openai import ChatOpenAI
    from openevals.llm import create_async_llm_as_judge
    from openevals.simulators import create_async_llm_simulated_user, run_multiturn_simulation_async

    base = os.environ["OPENAI_BASE_URL"]
    agent: Any = ChatOpenAI(model="agent", base_url=base, api_key="bench", max_retries=0, timeout=TIMEOUT)
    if prompts.agent_extra.get("tools"):  # the agent under test has the same tools as under usersim
        agent = agent.bind_tools(prompts.agent_extra["tools"])
    sim = ChatOpenAI(model="sim", base_url=base, api_key="bench", max_retries=0, timeout=TIMEOUT)
    judge = ChatOpenAI(model="judge", base_url=base, api_key="bench", max_retries=0, timeout=TIMEOUT)
    sem = asyncio.Semaphore(concurrency)
    system = [{"role": m["role"], "content": m["content"]} for m in prompts.agent_system]

    histories: dict[str, list[dict[str, Any]]] = {}

    async def app(inputs: dict[str, Any], *, thread_id: str, **_: Any) -> dict[str, Any]:
        # openevals hands the app the new user message only: the app keeps its thread's history,
        # so the agent sees the whole conversation, as it does under usersim and the bare loops
        history = histories.setdefault(thread_id, [])
        history.append({"role": inputs["role"], "content": inputs["content"]})
        reply = await agent.ainvoke([*system, *history])
        history.append({"role": "assistant", "content": reply.content})
        return {"role": "assistant", "content": reply.content}

    evaluator = create_async_llm_as_judge(prompt=rubric_prompt(), judge=judge, feedback_key="rubric")

    async def one(i: int) -> None:
        async with sem:
            user = create_async_llm_simulated_user(
                system=prompts.sim_system,  # sent as it is (openevals prepends it, no templating)
                client=sim,
                fixed_responses=[OPENING],
            )
            result = await run_multiturn_simulation_async(
                app=app, user=user, max_turns=TURNS, trajectory_evaluators=[evaluator], thread_id=str(i)
            )
            histories.pop(str(i), None)
            if not result["evaluator_results"] or result["evaluator_results"][0]["score"] is not True:
                raise RuntimeError(f"openevals bench conversation not judged: {result['evaluator_results']}")

    await asyncio.gather(*(one(i) for i in range(count)))
    return count
