"""compare.html (and report.html) rendered by real headless Chromium: the forest plot's rows, the
suite diamond, the side-by-side transcripts at the first divergence, and the parts only the page's
own JavaScript builds (the changed-cases list, the case count, the verdict filter's state).

Chromium is the one USERSIM_CHROMIUM names, else `chromium` on PATH (the Debian package, which
`make test` installs through scripts/test-services.sh). Without it the test fails, unless
USERSIM_OPTIONAL_SKIP=1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

from tests.reports.factory import record
from tests.reports.test_compare import run, talk
from usersim.core.verdict import Verdict
from usersim.reports.compare import compare_records, write_comparison
from usersim.reports.html import write_report
from usersim.reports.summary import build_summary


def chromium() -> str:
    named = os.environ.get("USERSIM_CHROMIUM")
    if named:
        if Path(named).is_file() and os.access(named, os.X_OK):
            return named
        pytest.fail(f"USERSIM_CHROMIUM={named} is not an executable file")
    found = shutil.which("chromium")
    if found:
        return found
    if os.environ.get("USERSIM_OPTIONAL_SKIP") == "1":
        pytest.skip("chromium is not installed (USERSIM_OPTIONAL_SKIP=1)")
    pytest.fail(
        "headless Chromium is needed and none is on PATH: run `make test-services` (what `make test` "
        "runs first; it installs Debian's chromium), or set USERSIM_CHROMIUM (or USERSIM_OPTIONAL_SKIP=1)"
    )


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM after the page's scripts ran, as Chromium serialises it."""
    res = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert res.returncode == 0 and "<html" in res.stdout, res.stderr[-2000:]
    return res.stdout


def records_pair():
    ok = [Verdict(judge="keywords", verdict="pass", reason="found", criterion="keywords {all: [confirmed]}")]
    bad = [
        Verdict(judge="keywords", verdict="fail", reason="missing", criterion="keywords {all: [confirmed]}")
    ]
    a, b = [], []
    for r in range(10):  # REG-01: a consistent drop, diverging at turn 2
        a.append(
            record(
                "REG-01",
                status="passed",
                repeat=r,
                verdicts=ok,
                transcript=talk(("hi", "hello"), ("book", "confirmed")),
            )
        )
        b.append(
            record(
                "REG-01",
                status="failed",
                repeat=r,
                verdicts=bad,
                transcript=talk(("hi", "hello"), ("book", "no <script>alert(1)</script>")),
            )
        )
    a += run({"NOISE-01|0": "failed", "NOISE-01|1": "passed"})  # one flip each way: within noise
    b += run({"NOISE-01|0": "passed", "NOISE-01|1": "failed"})
    a += run({"SAME-01|0": "passed"})
    b += run({"SAME-01|0": "passed"})
    return a, b


def test_compare_html_renders_the_forest_plot_and_the_scripted_parts(tmp_path):
    a, b = records_pair()
    comparison = compare_records(a, b, links=("../a/report.html", "report.html"))
    _, page = write_comparison(tmp_path, comparison, a, b)
    static = page.read_text(encoding="utf-8")
    assert not re.search(r'(src|href)="https?:', static)  # self-contained: nothing fetched
    dom = dump_dom(page, tmp_path / "profile")

    rows = re.findall(r'<g class="forest-row ([\w-]+)" data-case="([^"]+)"[^>]*data-verdict="([^"]+)"', dom)
    assert sorted((case, verdict) for _, case, verdict in rows) == [
        ("NOISE-01", "within noise"),
        ("REG-01", "significantly worse"),
        ("SAME-01", "no change"),
    ]
    assert ("row-worse", "REG-01", "significantly worse") in rows
    assert re.search(r'<g class="suite" data-delta="-[\d.]+">', dom)

    # built by the page's script from the forest rows: only the cases that changed
    jump = re.findall(r'<li class="jump-item"><a href="#div-([\w-]+)">([^<]+)</a></li>', dom)
    assert jump == [
        ("REG-01", "REG-01: significantly worse (-100.0)"),
        ("NOISE-01", "NOISE-01: within noise (+0.0)"),
    ]
    assert re.search(r'<span id="c-count" class="muted">3 / 3 cases</span>', dom)

    # side by side at the first divergence: message #3 (turn 2) highlighted on both sides
    block = dom[dom.index('id="div-REG-01"') :]
    block = block[: block.index('id="div-', 10)] if 'id="div-' in block[10:] else block
    assert block.count('class="msg assistant diverged"') == 2
    assert "confirmed" in block and "no &lt;script&gt;alert(1)&lt;/script&gt;" in block
    assert 'href="../a/report.html#r' in block and "first differs at message #3, turn 2" in unescape(block)
    assert "regression: 1 case(s) significantly worse" in unescape(dom)


def test_report_html_filter_count_is_built_in_the_browser(tmp_path):
    recs = [record("B1-EI-01", status="passed"), record("B1-CL-01", status="failed")]
    page = write_report(tmp_path / "report.html", recs, build_summary(recs, {"run_id": "r"}))
    dom = dump_dom(page, tmp_path / "profile")
    assert re.search(r'<span id="f-count" class="muted">2 / 2</span>', dom)
    assert dom.count('<details class="rec"') == 2
