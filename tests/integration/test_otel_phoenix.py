"""`usersim run --otel` against a real OTLP receiver: Arize Phoenix, started by the test, ingests the
traces over OTLP/HTTP and is queried back through its REST API. The correct and the flawed bank
agents' conversations arrive as one trace each, with their tool calls and one evaluation event per
verdict; the flawed agent's wrong dispute arrives as a failing evaluation with its reason.

Phoenix has many dependencies of its own, so it lives in its own virtualenv (a service, not a
library of ours): `make test` installs it (scripts/test-services.sh) into .cache/phoenix-venv in the
checkout and points USERSIM_PHOENIX at its `phoenix`; USERSIM_PHOENIX may name another one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.cli import usersim

BANK = "examples/bank/cases"
CASES = ("BANK-02", "BANK-06", "BANK-10")
# where `make test-services` puts it when USERSIM_PHOENIX is unset
DEFAULT = Path(__file__).resolve().parents[2] / ".cache" / "phoenix-venv" / "bin" / "phoenix"


def _phoenix_executable() -> str:
    named = os.environ.get("USERSIM_PHOENIX")
    candidate = Path(named) if named else DEFAULT
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    if os.environ.get("USERSIM_OPTIONAL_SKIP") == "1":
        pytest.skip("Arize Phoenix is not installed")
    origin = f"USERSIM_PHOENIX={named}" if named else f"the default {DEFAULT}"
    pytest.fail(
        f"Arize Phoenix (the OTLP receiver of this test) is not installed at {origin}: "
        "run `make test-services` (what `make test` runs first) or set USERSIM_PHOENIX"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    port = _free_port()
    work = tmp_path_factory.mktemp("phoenix")
    env = dict(os.environ)
    env.update(
        PHOENIX_WORKING_DIR=str(work),
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(_free_port()),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_TELEMETRY_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    log = (work / "phoenix.log").open("w")
    proc = subprocess.Popen([_phoenix_executable(), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 420  # its imports alone take minutes on a loaded machine
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Phoenix did not start: {(work / 'phoenix.log').read_text()[-2000:]}")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _all_spans(base: str) -> list[dict]:
    spans: list[dict] = []
    cursor = None
    while True:
        page = _get(f"{base}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else ""))
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def _traces(base: str, expected: set[tuple[str, str]]) -> dict[tuple[str, str], tuple[dict, list[dict]]]:
    """(run id, record id) -> (root span, every span of its trace); waits until the receiver has
    written a root for each expected conversation and the span count stopped growing."""
    deadline = time.monotonic() + 60
    last = -1
    while True:
        spans = _all_spans(base)
        by_trace: dict[str, list[dict]] = defaultdict(list)
        for s in spans:
            by_trace[s["context"]["trace_id"]].append(s)
        roots = {}
        for members in by_trace.values():
            for root in (s for s in members if s["parent_id"] is None):
                key = (root["attributes"]["usersim.run_id"], root["attributes"]["usersim.record_id"])
                roots[key] = (root, members)
        if (set(roots) >= expected and len(spans) == last) or time.monotonic() > deadline:
            return roots
        last = len(spans)
        time.sleep(0.5)


def test_the_runs_traces_arrive_in_phoenix_with_tool_spans_and_verdict_events(phoenix, tmp_path):
    records = {}
    for agent in ("correct", "flawed"):
        out = tmp_path / agent
        ids = [arg for case in CASES for arg in ("--id", case)]
        res = usersim(
            "run", BANK, *ids, "--agent", f"python:examples.bank.agent:{agent}", "--out", str(out),
            "--no-progress", "--otel", "--otel-endpoint", phoenix, check=False,
        )  # fmt: skip
        assert f"otel: {len(CASES)} trace(s)" in res.stderr and "not exported" not in res.stderr
        for line in (out / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            records[(r["run_id"], r["id"])] = r
    roots = _traces(phoenix, set(records))
    assert set(roots) == set(records)  # one trace per conversation, nothing else
    for key, record in records.items():
        root, members = roots[key]
        assert sum(1 for s in members if s["parent_id"] is None) == 1
        assert root["name"] == f"invoke_agent {record['agent']}"
        assert root["attributes"]["usersim.status"] == record["status"]
        tools = [s for s in members if s["name"].startswith("execute_tool ")]
        assert sorted(s["attributes"]["gen_ai.tool.name"] for s in tools) == sorted(
            e["name"] for e in record["tool_trace"]
        )
        evaluations = [e for e in root["events"] if e["name"] == "gen_ai.evaluation.result"]
        assert sorted(
            (e["attributes"]["gen_ai.evaluation.name"], e["attributes"]["gen_ai.evaluation.score.label"])
            for e in evaluations
        ) == sorted((v["judge"], v["verdict"]) for v in record["verdicts"])
    flawed = next(
        root
        for root, _ in roots.values()
        if root["attributes"]["usersim.case_id"] == "BANK-06" and root["name"].endswith(":flawed")
    )
    reasons = [
        e["attributes"]["gen_ai.evaluation.explanation"]
        for e in flawed["events"]
        if e["attributes"]["gen_ai.evaluation.score.label"] == "fail"
    ]
    assert any("transaction_id=T-4002 (expected T-4001)" in r for r in reasons), reasons
