"""`usersim import` of LangSmith run exports (JSONL and JSON) and LangGraph checkpointer threads
(the server's thread history, a checkpoint tuple dump), through the CLI: the bank conversations
come out exactly as recorded (once, in order), become valid static and organic cases that pass
the correct bank agent and fail the flawed one where its flaws bite, and a history that cannot be
rebuilt exactly stops the import naming the file, the checkpoint and the message (exit 2).
Fixtures: tests/data/import/make_langchain_fixtures.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from tests.support.cli import REPO, usersim

DATA = REPO / "tests/data/import"
CORRECT, FLAWED = "python:examples.bank.agent:correct", "python:examples.bank.agent:flawed"
SUITE = str(REPO / "examples/bank/cases/_suite.yaml")
HISTORY = DATA / "langgraph_history.json"  # GET /threads/{id}/history of a BANK-03 thread, newest first
THREAD = "5f1c9e0a-07aa-4d3e-b1de-1a2b3c4d5e03"

# what the flawed agent gets wrong, per fixture: picking the latest Skyline charge (dispute),
# express shipping by default (replacement), opening a dispute outside the 60-day window (old
# charge). The transfer and the old charge's last turn (the customer accepts the refusal) pass.
FLAWED_FAILS = {
    "langsmith_runs.jsonl": {
        "sess-7c1e-dispute-t5": "open_dispute was never called",
        "sess-7c1e-dispute-sim": "closest call had transaction_id=T-4002",
        "thr-2b9d-replacement-t5": "block_card was never called",
        "thr-2b9d-replacement-sim": "closest call had card_id=K-3004, shipping=express",
        "conv-5e02-old-charge-sim": "unexpected new disputes record D-1",
    },
    "langgraph_history.json": {
        f"{THREAD}-t5": "block_card was never called",
        f"{THREAD}-sim": "closest call had card_id=K-3004, shipping=express",
    },
    "langgraph_checkpoints.json": {
        "thread-bank-06-dispute-t5": "open_dispute was never called",
        "thread-bank-06-dispute-sim": "closest call had transaction_id=T-4002",
        "thread-bank-08-old-charge-sim": "unexpected new disputes record D-1",
    },
}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def run(folder: Path, agent: str, out: Path) -> dict[str, dict]:
    usersim(
        "run",
        str(folder),
        "--agent",
        agent,
        "--simulator",
        "rule",
        "--out",
        str(out),
        "--no-progress",
        check=False,
    )
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


def conversation(case: dict) -> list[tuple]:
    """The recorded conversation a static case holds (history, then the live turn), system prompt
    left out: (role, text, [(tool, arguments)])."""
    out = []
    for m in case["input"]["history"] + case["reference_transcript"]:
        calls = [
            (c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m.get("tool_calls") or []
        ]
        if m["role"] != "system":
            out.append((m["role"], (m.get("content") or "").strip(), calls))
    return out


def imported(src: Path, out: Path, *extra: str) -> dict[str, dict]:
    res = usersim("import", str(src), "--to", str(out), *extra)
    assert res.stdout.strip().splitlines()[-1].endswith("all valid"), res.stdout + res.stderr
    return {p.stem: load(p) for p in sorted(out.glob("*.yaml"))}


@pytest.mark.parametrize("fixture", list(FLAWED_FAILS))
def test_each_fixture_imports_to_valid_static_and_organic_cases_that_separate_the_agents(fixture, tmp_path):
    out = tmp_path / "imported"
    # no --format: guessed from the content (a runs JSONL, a thread history, checkpoint tuples)
    cases = imported(DATA / fixture, out, "--persona", "--environment", SUITE)
    assert usersim("validate", str(out)).returncode == 0
    static = {k for k, c in cases.items() if c["mode"] == "static"}
    organic = {k for k, c in cases.items() if c["mode"] != "static"}
    assert static and len(organic) == len(static)  # one organic case per conversation, from its persona
    for k in organic:
        assert (out / cases[k]["persona"]).is_file()
    correct = run(out, CORRECT, tmp_path / "c")
    assert set(correct) == static | organic
    assert all(r["status"] == "passed" for r in correct.values()), {
        k: [v["reason"] for v in r["verdicts"] if v["verdict"] == "fail"]
        for k, r in correct.items()
        if r["status"] != "passed"
    }
    flawed = run(out, FLAWED, tmp_path / "f")
    failed = {k.split("|")[0]: r for k, r in flawed.items() if r["status"] != "passed"}
    assert set(failed) == set(FLAWED_FAILS[fixture])
    for case_id, says in FLAWED_FAILS[fixture].items():
        reasons = " ".join(v["reason"] for v in failed[case_id]["verdicts"] if v["verdict"] == "fail")
        assert says in reasons, (case_id, reasons)


def test_the_same_conversation_reads_the_same_from_every_export(tmp_path):
    """BANK-06 recorded as OpenAI chat JSONL, as a LangSmith chain thread (messages only in llm and
    tool runs) and as LangGraph checkpoint tuples; BANK-03 as a nested LangSmith export, a LangSmith
    LangGraph thread and a LangGraph server history: each one conversation, every message once."""
    read = {
        f: imported(DATA / f, tmp_path / f.split(".")[0])
        for f in (
            "openai_chats.jsonl",
            "langsmith_runs.jsonl",
            "langgraph_checkpoints.json",
            "langsmith_export.json",
            "langgraph_history.json",
        )
    }
    dispute = conversation(read["openai_chats.jsonl"]["conv_a90c33-dispute-t5"])
    assert conversation(read["langsmith_runs.jsonl"]["sess-7c1e-dispute-t5"]) == dispute
    assert conversation(read["langgraph_checkpoints.json"]["thread-bank-06-dispute-t5"]) == dispute
    assert len(dispute) == 18 and [r for r, _, _ in dispute].count("user") == 5
    replacement = conversation(read["langsmith_export.json"]["9d97601d-8f0b-5a82-b646-6f691bb64ade-t5"])
    assert conversation(read["langsmith_runs.jsonl"]["thr-2b9d-replacement-t5"]) == replacement
    assert conversation(read["langgraph_history.json"][f"{THREAD}-t5"]) == replacement
    assert [c for _, _, calls in replacement for c in calls] == [
        ("verify_customer", {"customer_id": "C-1004", "date_of_birth": "1969-01-30"}),
        ("get_customer", {"customer_id": "C-1004"}),
        ("block_card", {"card_id": "K-3004"}),
        ("order_replacement_card", {"card_id": "K-3004", "shipping": "standard"}),
    ]


def test_a_langsmith_export_reads_the_same_as_jsonl_a_json_list_and_one_nested_run(tmp_path):
    lines = (DATA / "langsmith_runs.jsonl").read_text(encoding="utf-8").splitlines()
    runs = [json.loads(x) for x in lines]
    as_list = tmp_path / "runs.json"
    as_list.write_text(json.dumps(runs), encoding="utf-8")
    (root,) = [r for r in runs if r["extra"]["metadata"].get("conversation_id") == "conv-5e02-old-charge"]
    root = {**root, "child_runs": [r for r in runs if r["parent_run_id"] == root["id"]]}
    one = tmp_path / "one_run.json"
    one.write_text(json.dumps(root), encoding="utf-8")
    jsonl = imported(DATA / "langsmith_runs.jsonl", tmp_path / "a", "--format", "langsmith")
    listed = imported(as_list, tmp_path / "b")
    single = imported(one, tmp_path / "c")
    assert {k: conversation(c) for k, c in jsonl.items()} == {k: conversation(c) for k, c in listed.items()}
    assert conversation(single["conv-5e02-old-charge-t4"]) == conversation(jsonl["conv-5e02-old-charge-t4"])
    assert len(jsonl) == 3 and len(single) == 1


def test_a_bad_jsonl_line_is_named(tmp_path):
    src = tmp_path / "runs.jsonl"
    lines = (DATA / "langsmith_runs.jsonl").read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join([*lines[:3], '{"id": "r9", "run_type": "llm",', *lines[3:]]), encoding="utf-8")
    res = usersim("import", str(src), "--to", str(tmp_path / "o"), "--format", "langsmith", check=False)
    assert res.returncode == 2 and f"{src}:4: not JSON" in res.stderr, res.stderr


def history() -> list[dict]:
    return json.loads(HISTORY.read_text(encoding="utf-8"))


def write(tmp_path: Path, items: list[dict], name: str = "history.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "arrange",
    [
        pytest.param(lambda h: h + h, id="every checkpoint twice (two overlapping pages)"),
        pytest.param(lambda h: h[::-1], id="oldest first"),
        pytest.param(lambda h: random.Random(7).sample(h, len(h)), id="shuffled"),
        pytest.param(lambda h: [x for x in h for _ in range(3)][::-1], id="each three times, oldest first"),
    ],
)
def test_duplicated_or_reordered_checkpoints_import_once_and_in_order(arrange, tmp_path):
    want = conversation(imported(HISTORY, tmp_path / "as-exported")[f"{THREAD}-t5"])
    src = write(tmp_path, arrange(history()))
    got = imported(src, tmp_path / "o")
    assert list(got) == [f"{THREAD}-t5"]
    assert conversation(got[f"{THREAD}-t5"]) == want


def test_a_message_edited_later_by_id_replaces_the_first_and_an_absent_one_is_removed(tmp_path):
    h = history()  # newest first
    newest = h[0]["values"]["messages"]
    ask = next(m for m in newest if m["content"] == "Could you please provide your customer ID?")
    # an earlier checkpoint also held a retried reply the graph removed (RemoveMessage) right after
    retry = {**ask, "id": "msg-retry-1", "content": "Sorry, one moment."}
    oldest_with_ask = max(
        i for i, x in enumerate(h) if ask["id"] in [m["id"] for m in x["values"]["messages"]]
    )
    cp = h[oldest_with_ask]["values"]["messages"]
    cp.insert(cp.index(next(m for m in cp if m["id"] == ask["id"])) + 1, retry)
    # and the newest checkpoint edited the question by id (update_state with the same id)
    ask["content"] = "Could you please provide your customer ID (it starts with C-)?"
    got = conversation(imported(write(tmp_path, h), tmp_path / "o")[f"{THREAD}-t5"])
    texts = [t for _, t, _ in got]
    assert "Could you please provide your customer ID (it starts with C-)?" in texts
    assert "Could you please provide your customer ID?" not in texts and "Sorry, one moment." not in texts
    assert len(got) == 18


def test_a_pending_remove_message_in_a_checkpoint_tuple_dump_is_applied(tmp_path):
    dump = json.loads((DATA / "langgraph_checkpoints.json").read_text(encoding="utf-8"))
    newest = next(x for x in dump if x["config"]["configurable"]["thread_id"] == "thread-bank-04-transfer")
    last = newest["checkpoint"]["channel_values"]["messages"][-1]["kwargs"]
    edit = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"]}
    newest["pending_writes"] = [
        ["task-1", "messages", [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "RemoveMessage"], "kwargs": {"id": last["id"]}}]],
        ["task-1", "messages", [{**edit, "kwargs": {"content": "Done: $250.00 moved to savings.", "type": "ai", "id": "msg-new"}}]],
    ]  # fmt: skip
    got = imported(write(tmp_path, dump, "checkpoints.json"), tmp_path / "o")
    turn = got["thread-bank-04-transfer-t4"]["reference_transcript"]
    assert turn[-1]["content"] == "Done: $250.00 moved to savings."
    assert last["content"] not in [m.get("content") for m in turn]


def test_a_message_without_id_is_matched_by_its_place_when_nothing_before_it_changed(tmp_path):
    h = history()
    for x in h:  # the user's messages lost their ids in every checkpoint (a custom state)
        for m in x["values"]["messages"]:
            if m["type"] == "human":
                m.pop("id")
    got = imported(write(tmp_path, h), tmp_path / "o")
    assert conversation(got[f"{THREAD}-t5"]) == conversation(
        imported(HISTORY, tmp_path / "ref")[f"{THREAD}-t5"]
    )


def _ids(h: list[dict], n: int) -> tuple[str, list[dict]]:
    return h[n]["checkpoint_id"], h[n]["values"]["messages"]


def _unknown_call(h: list[dict]) -> str:
    tool = next(m for m in h[0]["values"]["messages"] if m["type"] == "tool")
    for x in h:
        for m in x["values"]["messages"]:
            if m["id"] == tool["id"]:
                m["tool_call_id"] = "call_not_made"
    return (
        f"checkpoint {_first_with(h, tool['id'])}: message {tool['id']} (tool) answers tool "
        "call 'call_not_made', which no earlier AI message made"
    )


def _first_with(h: list[dict], mid: str) -> str:
    """The oldest checkpoint (the list is newest first) holding message `mid`."""
    return h[max(i for i, x in enumerate(h) if mid in [m["id"] for m in x["values"]["messages"]])][
        "checkpoint_id"
    ]


def _swapped(h: list[dict]) -> str:
    cid, msgs = _ids(h, 0)
    msgs[1], msgs[2] = msgs[2], msgs[1]
    a, b = msgs[1]["id"], msgs[2]["id"]
    return (
        f"checkpoint {cid}: checkpoints disagree on order: message {a} comes before message {b} here, "
        f"after it in checkpoint {_first_with(h, a)}"
    )


def _ambiguous(h: list[dict]) -> str:
    cid, msgs = _ids(h, 0)
    del msgs[1]
    msgs[1].pop("id")
    return f"checkpoint {cid}: message 1 (user) has no id and its place is ambiguous"


def _fork(h: list[dict]) -> str:
    branch = json.loads(json.dumps(h[0]))
    branch["checkpoint_id"] = branch["checkpoint"]["checkpoint_id"] = "1f0fffff-0000-6000-8000-000000000000"
    branch["values"]["messages"][-1]["content"] = "Your card will arrive by express."
    h.insert(0, branch)
    return (
        f"checkpoint {h[1]['parent_checkpoint_id']}: the history forks here (checkpoints "
        f"{branch['checkpoint_id']}, {h[1]['checkpoint_id']} both continue it); export one branch"
    )


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(_unknown_call, id="a tool result whose tool_call_id matches no call"),
        pytest.param(_swapped, id="checkpoints that disagree on order"),
        pytest.param(_ambiguous, id="a message without id where order is ambiguous"),
        pytest.param(_fork, id="two checkpoints continue the same one"),
    ],
)
def test_a_history_that_cannot_be_rebuilt_stops_naming_file_checkpoint_and_message(spoil, tmp_path):
    h = history()
    says = spoil(h)
    src = write(tmp_path, h)
    out = tmp_path / "o"
    res = usersim("import", str(src), "--to", str(out), "--format", "langgraph", check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"Error: {src}: thread {THREAD}, {says}" in res.stderr, (says, res.stderr)
    assert not out.exists()  # nothing written


@pytest.mark.parametrize(
    "content, says",
    [
        ('[{"values": {"messages": []}, "next": []}]', "item 0: the checkpoint has no checkpoint_id"),
        ('[{"metadata": {}}]', "item 0: not a LangGraph checkpoint"),
        (
            '[{"values": {"messages": [{"type": "robot", "content": "x"}]}, "checkpoint_id": "c1", "next": []}]',
            "checkpoint c1: message 0: unknown message type 'robot'",
        ),
        (
            '[{"values": {"messages": []}, "checkpoint_id": "c1", "next": []}]',
            "no thread holds a conversation",
        ),
    ],
)
def test_an_unreadable_langgraph_file_is_named_with_where_it_went_wrong(tmp_path, content, says):
    src = tmp_path / "bad.json"
    src.write_text(content, encoding="utf-8")
    res = usersim("import", str(src), "--to", str(tmp_path / "o"), "--format", "langgraph", check=False)
    assert res.returncode == 2 and f"{src}" in res.stderr and says in res.stderr, res.stderr


def test_a_get_state_history_dump_reads_as_the_server_history(tmp_path):
    """`[s._asdict() for s in graph.get_state_history(config)]` with the messages dumped by
    langchain_core.load.dumpd: `config` / `parent_config` instead of `checkpoint` /
    `parent_checkpoint`, serialized messages."""
    kinds = {"human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}
    snapshots = []
    for x in history():
        msgs = [
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", kinds[m["type"]]],
                "kwargs": m,
            }
            for m in x["values"]["messages"]
        ]
        parent = x["parent_checkpoint"]
        snapshots.append(
            {
                "values": {"messages": msgs},
                "next": x["next"],
                "config": {"configurable": x["checkpoint"]},
                "metadata": x["metadata"],
                "created_at": x["created_at"],
                "parent_config": {"configurable": parent} if parent else None,
                "tasks": [],
                "interrupts": [],
            }
        )
    got = imported(write(tmp_path, snapshots, "snapshots.json"), tmp_path / "o")
    assert conversation(got[f"{THREAD}-t5"]) == conversation(
        imported(HISTORY, tmp_path / "ref")[f"{THREAD}-t5"]
    )


def test_llm_and_tool_runs_whose_parent_was_left_out_attach_to_their_trace_root(tmp_path):
    """An export filtered to the root, llm and tool runs of the LangGraph thread (its `agent` and
    `tools` chain runs left out) whose roots keep only text: the model calls are found through
    `trace_id`, and the thread reads as before."""
    runs = [json.loads(x) for x in (DATA / "langsmith_runs.jsonl").read_text(encoding="utf-8").splitlines()]
    roots = {r["id"] for r in runs if r["extra"]["metadata"].get("thread_id") == "thr-2b9d-replacement"}
    kept = []
    for r in runs:
        if r["trace_id"] not in roots or r["name"] in ("agent", "tools"):
            continue
        if r["id"] in roots:
            r = {
                **r,
                "inputs": {"input": r["inputs"]["messages"][0]["content"]},
                "outputs": {"output": "done"},
            }
        kept.append(r)
    assert {r["run_type"] for r in kept} == {"chain", "llm", "tool"}
    assert all(r["parent_run_id"] not in {k["id"] for k in kept} for r in kept if r["run_type"] == "llm")
    src = tmp_path / "filtered.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    got = imported(src, tmp_path / "o")
    ref = imported(DATA / "langsmith_runs.jsonl", tmp_path / "ref")
    assert list(got) == ["thr-2b9d-replacement-t5"]
    assert conversation(got["thr-2b9d-replacement-t5"]) == conversation(ref["thr-2b9d-replacement-t5"])


def test_a_subgraphs_checkpoints_are_not_the_threads_history(tmp_path):
    h = history()
    sub = json.loads(json.dumps(h[3]))  # a subgraph's checkpoint: its own namespace, its own order
    sub["checkpoint"]["checkpoint_ns"] = "agent:6f1d2c3b-0e6a-4a55-9d0e-000000000001"
    sub["checkpoint_id"] = sub["checkpoint"]["checkpoint_id"] = "1f0fffff-0000-6000-8000-00000000000a"
    sub["values"]["messages"].reverse()
    got = imported(write(tmp_path, [sub, *h]), tmp_path / "o")
    assert conversation(got[f"{THREAD}-t5"]) == conversation(
        imported(HISTORY, tmp_path / "ref")[f"{THREAD}-t5"]
    )
