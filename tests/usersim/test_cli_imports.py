"""`usersim cases list` and `usersim validate` start without the heavy packages a run needs
(langgraph and langchain-core, the OpenAI SDK, aiohttp, tiktoken, networkx, Ray): each one is
hundreds of milliseconds of import. Checked in a fresh process, as a user starts the command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ["langgraph", "langchain_core", "langsmith", "openai", "aiohttp", "tiktoken", "networkx", "ray"]

# runs the command as the console script does, then prints which heavy packages it imported
_PROBE = """
import json, sys
from usersim.cli import main
heavy = json.loads(sys.argv[1])
try:
    main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "loaded": sorted({m.split(".")[0] for m in sys.modules} & set(heavy))}))
"""


def _loaded(args: list[str], env: dict[str, str], tmp_path: Path) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(HEAVY), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**env, "USERSIM_CACHE_DIR": str(tmp_path / "cache")},
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return out["code"], out["loaded"]


@pytest.mark.parametrize(
    "args,cache",
    [
        (["cases", "list", "--json"], "0"),  # the first listing validates every case: cold
        (["cases", "list", "--json"], "1"),
        (["validate", "examples/bank/cases"], "0"),
        (["validate", "usersim/cases/b1"], "0"),
    ],
)
def test_listing_and_validating_import_none_of_the_run_packages(args, cache, tmp_path):
    import os

    env = {**os.environ, "USERSIM_NO_CASE_CACHE": cache}
    code, loaded = _loaded(args, env, tmp_path)
    assert code == 0
    assert loaded == [], f"`usersim {' '.join(args)}` imported {loaded}"


def test_the_probe_sees_a_heavy_import(tmp_path):
    """The check itself can fail: importing the conversation graph does load langgraph."""
    import os

    proc = subprocess.run(
        [sys.executable, "-c", "import sys, usersim.graphs.conversation; print('langgraph' in sys.modules)"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
    )
    assert proc.stdout.strip() == "True"


# what a command left behind: the packages of the listing's and validation's lazy parts
_PROBE_LAZY = """
import json, sys
from usersim.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({
    "code": code,
    "pydantic": "pydantic" in sys.modules,
    "checks": sorted(m for m in sys.modules if m.startswith("usersim.judges.checks.")),
    "tools": sorted(m for m in sys.modules if m.startswith("usersim.sandbox.tools.")),
}))
"""


def _probe(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE_LAZY, *args], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_listing_served_from_its_cache_imports_no_pydantic(tmp_path):
    import os

    env = {**os.environ, "USERSIM_NO_CASE_CACHE": "0", "USERSIM_CACHE_DIR": str(tmp_path / "cache")}
    first = _probe(["cases", "list", "--json"], env)  # fills the cache: validates every case
    assert first["code"] == 0 and first["pydantic"]
    again = _probe(["cases", "list", "--json"], env)
    assert again["code"] == 0
    # the bundled library's python-tool cases are validated afresh each time (never cached): those
    # need pydantic; a folder of plain cases is listed from the cache alone
    plain = _probe(["cases", "list", "--json", "usersim/cases/b1"], env)
    plain = _probe(["cases", "list", "--json", "usersim/cases/b1"], env)
    assert plain["code"] == 0 and not plain["pydantic"], plain


def test_validate_imports_only_the_checks_and_tools_it_uses():
    import os

    out = _probe(["validate", "examples/bank/cases"], {**os.environ, "USERSIM_NO_CASE_CACHE": "1"})
    assert out["code"] == 0
    # the bank cases use final_state, tool_called / tool_order / tool_not_called and keywords
    used = {"final_state", "tools", "text"}
    assert {m.rsplit(".", 1)[1] for m in out["checks"]} & {
        "clarification",
        "graded",
        "security_leak",
    } == set()
    assert {f"usersim.judges.checks.{m}" for m in used} <= set(out["checks"])
    assert out["tools"] == []  # the bank's own tools: no built-in sandbox tool is imported


# what validating the bank cases needs none of: the language layer's readings (the checks read text
# when they run), verdicts and crash handling, the case-regex engine (no `pattern` there), the
# did-you-mean machinery and logging (error paths), the quantity reader (no persona min / max)
_PROBE_READINGS = """
import json, sys
from usersim.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_validate_imports_no_language_reading_verdict_or_error_path_module():
    import os

    proc = subprocess.run(
        [sys.executable, "-c", _PROBE_READINGS, "validate", "examples/bank/cases"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "USERSIM_NO_CASE_CACHE": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0
    modules = set(out["modules"])
    lazy = {
        "usersim.judges.checks.mentions",
        "usersim.core.verdict",
        "usersim.judges.faults",
        "usersim.core.saferegex",
        "re2",
        "difflib",
        "logging",
    }
    assert not modules & lazy, sorted(modules & lazy)
    assert not [m for m in modules if m.startswith("usersim.lang")], sorted(
        m for m in modules if m.startswith("usersim.lang")
    )
    # ... while the checks the bank cases use are imported (the probe sees what validation loads)
    assert {"usersim.judges.checks.text", "usersim.judges.checks.final_state"} <= modules


def test_the_readings_probe_sees_them_when_a_case_needs_them(tmp_path):
    """A count pattern compiles through the case-regex engine and a persona's max reads quantities:
    those do import what the probe above says validate leaves out."""
    import os

    (tmp_path / "personas").mkdir()
    (tmp_path / "personas" / "budget-buyer.yaml").write_text(
        "id: budget-buyer\nname: Budget buyer\nidentity: a student\nlanguage: en\n"
        "goal: {description: buy a phone, required: [phone], constraints: {max: {price: $300}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "c.yaml").write_text(
        "id: R-01\ndimension: B1\ntitle: t\nmode: organic\nmax_turns: 3\npersona: budget-buyer\nlanguage: en\n"
        "input: {message: hi}\njudging:\n  scoring: {methods: [auto]}\n"
        "  checks:\n    - count: {pattern: 'phone', min: 1}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE_READINGS, "validate", str(tmp_path / "c.yaml")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "USERSIM_NO_CASE_CACHE": "1"},
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0, proc.stdout
    assert {"usersim.core.saferegex", "usersim.lang.quantity"} <= set(out["modules"])


# --- `usersim run`: what is imported before its first model request -------------------------------

# runs the command as the console script does; notes what was imported when the first chat request
# was handed to the wire (usersim's own client), then prints it
_PROBE_RUN = """
import json, sys
import usersim.llm.wire as wire
seen = {}
send = wire.WireClient.request
async def request(self, method, path, **kw):
    if path.endswith("chat/completions") and not seen:
        seen["loaded"] = sorted(sys.modules)
    return await send(self, method, path, **kw)
wire.WireClient.request = request
from usersim.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": seen.get("loaded")}))
"""

# what the run needs only after its first request: the conversation graph, the judges, the report
AFTER_FIRST = ["langgraph", "langchain_core", "langsmith", "tiktoken", "networkx", "openai"]
AFTER_FIRST_OURS = ["usersim.graphs.nodes", "usersim.judges.select", "usersim.reports.outcome"]


def _loaded_at_first_request(tmp_path: Path, ahead: str) -> list[str]:
    import os

    from tests.support.openai_stub import OpenAIStub

    args = ["run", "bench/case.yaml", "--agent", "openai:agent", "--simulator", "openai:sim"]
    args += ["--out", str(tmp_path / f"run-{ahead}"), "--no-progress", "--concurrency", "1"]
    with OpenAIStub() as stub:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "sk-probe",
            "USERSIM_NO_CACHE": "1",
            "USERSIM_SKIP_MODEL_CHECK": "1",
            "USERSIM_FIRST_REQUEST_AHEAD": ahead,
        }
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE_RUN, *args], capture_output=True, text=True, cwd=REPO, env=env
        )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] in (0, 1) and out["loaded"], proc.stderr[-2000:]
    return out["loaded"]


def test_a_runs_first_request_leaves_before_the_graph_judges_and_report_are_imported(tmp_path):
    loaded = _loaded_at_first_request(tmp_path, "1")
    packages = {m.split(".")[0] for m in loaded}
    assert packages & set(AFTER_FIRST) == set(), sorted(packages & set(AFTER_FIRST))
    assert set(loaded) & set(AFTER_FIRST_OURS) == set()


def test_without_sending_ahead_the_graph_is_imported_before_the_first_request(tmp_path):
    """The check above can fail: with USERSIM_FIRST_REQUEST_AHEAD=0 the graph's node sends it."""
    loaded = _loaded_at_first_request(tmp_path, "0")
    assert "langgraph" in {m.split(".")[0] for m in loaded} and "usersim.graphs.nodes" in loaded


def test_the_run_command_and_the_runner_import_no_graph():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, usersim.cli.run, usersim.graphs.runner, usersim.api; "
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain_core'}))"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )  # fmt: skip
    assert proc.stdout.strip() == "[]", proc.stderr[-2000:]
