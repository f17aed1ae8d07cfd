"""The transcript filter script, run under node against a minimal stand-in DOM (skipped without node)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "usersim" / "reports" / "page.html"

_HARNESS = """
const recs = %(recs)s.map(r => ({dataset: {status: r.status, dimension: r.dim}, textContent: r.text,
                                 style: {display: ""}}));
const els = {}, listeners = {};
for (const id of ["f-status", "f-dim", "f-text", "f-count"]) {
  els[id] = {value: "", textContent: "", addEventListener: (ev, fn) => { listeners[id] = fn; }};
}
global.document = {getElementById: id => els[id] || null, querySelectorAll: () => recs};
global.location = {hash: ""};
global.window = {addEventListener: () => {}};
%(script)s
const shown = () => recs.map((r, i) => r.style.display === "none" ? null : i).filter(i => i !== null);
const out = {all: shown(), count: els["f-count"].textContent};
els["f-status"].value = "failed"; listeners["f-status"](); out.failed = shown();
els["f-status"].value = ""; els["f-dim"].value = "C5"; listeners["f-dim"](); out.c5 = shown();
els["f-dim"].value = ""; els["f-text"].value = "  SEAFOOD "; listeners["f-text"](); out.text = shown();
out.textCount = els["f-count"].textContent;
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_filter_by_status_dimension_and_text(tmp_path):
    page = PAGE.read_text(encoding="utf-8")
    script = page[page.index("<script>") + len("<script>") : page.index("</script>")]
    recs = [
        {"status": "passed", "dim": "B1", "text": "B1-EI-01 flights"},
        {"status": "failed", "dim": "B1", "text": "B1-CL-01 asked nothing"},
        {"status": "failed", "dim": "C5", "text": "C5-EI-01 forgot the Seafood allergy"},
    ]
    js = tmp_path / "filter.js"
    js.write_text(_HARNESS % {"recs": json.dumps(recs), "script": script}, encoding="utf-8")
    out = json.loads(subprocess.run(["node", str(js)], capture_output=True, text=True, check=True).stdout)
    assert out == {
        "all": [0, 1, 2],
        "count": "3 / 3",
        "failed": [1, 2],
        "c5": [2],
        "text": [2],
        "textCount": "1 / 3",
    }
