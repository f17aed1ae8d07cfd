"""pytest plugin (entry point `pytest11`): a `usersim` fixture for agent teams' own test suites.

    def test_refund(usersim):
        r = usersim.run("cases/refund.yaml", agent=my_agent)
        assert r.passed

`usersim.run` here writes each run under the test's tmp_path, and a failing `assert r.passed`
shows the verdict reasons and the transcript of every conversation that did not pass.

`r.passed` is the gate `usersim run` exits on (usersim.core.gate). `pytest --usersim-strict` (or
`usersim_strict = true` in the ini file) makes it strict, as `usersim run --strict`: an unjudged
conversation fails the test too. `r.passed(strict=True)` asks for it in one test.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

STRICT_HELP = "usersim: unjudged conversations fail the gate (r.passed is False), as `usersim run --strict`."


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--usersim-strict` on the command line, `usersim_strict` in the ini file."""
    parser.addoption("--usersim-strict", action="store_true", default=None, help=STRICT_HELP)
    parser.addini("usersim_strict", STRICT_HELP, type="bool", default=False)


def strict_option(config: pytest.Config) -> bool:
    """The command-line flag if given, else the ini value."""
    flag = config.getoption("--usersim-strict")
    return bool(config.getini("usersim_strict")) if flag is None else bool(flag)


class UsersimFixture:
    """`usersim.run(...)` bound to one test: runs land in its tmp_path, with the session's strictness."""

    def __init__(self, tmp_path: Path, strict: bool = False) -> None:
        self.tmp_path = tmp_path
        self.strict = strict
        self.results: list[Any] = []

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        kwargs.setdefault("out", self.tmp_path / f"usersim-run-{len(self.results) + 1}")
        kwargs.setdefault("strict", self.strict)
        return kwargs

    def run(self, cases: Any, **kwargs: Any) -> Any:
        from usersim.api import run

        result = run(cases, **self._options(kwargs))
        self.results.append(result)
        return result

    async def arun(self, cases: Any, **kwargs: Any) -> Any:
        from usersim.api import arun

        result = await arun(cases, **self._options(kwargs))
        self.results.append(result)
        return result


@pytest.fixture
def usersim(tmp_path: Path, pytestconfig: pytest.Config) -> UsersimFixture:
    """Run usersim cases against your agent inside a test; see the module docstring."""
    return UsersimFixture(tmp_path, strict=strict_option(pytestconfig))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    """When a test that ran usersim fails, add each non-passing run's gate decision, its
    conversations' verdict reasons and transcripts to the failure report."""
    outcome = yield
    report = outcome.get_result()
    fixture = getattr(item, "funcargs", {}).get("usersim")
    if report.when == "call" and report.failed and isinstance(fixture, UsersimFixture):
        for i, result in enumerate(fixture.results, start=1):
            if not result.passed:
                report.sections.append((f"usersim run {i}: verdicts and transcripts", result.explain()))
