"""pytest plugin (entry point `pytest11`): a `usersim` fixture for agent teams' own test suites.

    def test_refund(usersim):
        r = usersim.run("cases/refund.yaml", agent=my_agent)
        assert r.passed

`usersim.run` here writes each run under the test's tmp_path, and a failing `assert r.passed`
shows the verdict reasons and the transcript of every conversation that did not pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


class UsersimFixture:
    """`usersim.run(...)` bound to one test: runs land in its tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.results: list[Any] = []

    def run(self, cases: Any, **kwargs: Any) -> Any:
        from usersim.api import run

        kwargs.setdefault("out", self.tmp_path / f"usersim-run-{len(self.results) + 1}")
        result = run(cases, **kwargs)
        self.results.append(result)
        return result

    async def arun(self, cases: Any, **kwargs: Any) -> Any:
        from usersim.api import arun

        kwargs.setdefault("out", self.tmp_path / f"usersim-run-{len(self.results) + 1}")
        result = await arun(cases, **kwargs)
        self.results.append(result)
        return result


@pytest.fixture
def usersim(tmp_path: Path) -> UsersimFixture:
    """Run usersim cases against your agent inside a test; see the module docstring."""
    return UsersimFixture(tmp_path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]):
    """When a test that ran usersim fails, add each non-passing conversation's verdict reasons and
    transcript to the failure report."""
    outcome = yield
    report = outcome.get_result()
    fixture = getattr(item, "funcargs", {}).get("usersim")
    if report.when == "call" and report.failed and isinstance(fixture, UsersimFixture):
        for i, result in enumerate(fixture.results, start=1):
            if not result.passed:
                report.sections.append((f"usersim run {i}: verdicts and transcripts", result.explain()))
