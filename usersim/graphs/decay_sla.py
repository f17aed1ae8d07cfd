"""Business SLAs for decay curves (seed 003: "客服 Agent ≥ 80% @ 10 轮"), read from a case file's
or a suite file's `sla:` list, or a bundled suite by name (usersim/cases/suites/sla/<name>.yaml:
customer_service, data_analysis, companion)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from usersim.cases.schema import SlaThreshold
from usersim.core.yamlfile import FileProblems, Problem, read_yaml, validation_problems

BUNDLED = Path(__file__).resolve().parents[1] / "cases" / "suites" / "sla"


class SlaFile(BaseModel):
    """The part of a case or suite file the decay sweep reads."""

    model_config = ConfigDict(extra="ignore")

    sla: list[SlaThreshold] = Field(default_factory=list, description="The SLAs.")


def bundled_names() -> list[str]:
    return sorted(p.stem for p in BUNDLED.glob("*.yaml"))


def sla_path(ref: str) -> Path:
    """The file `ref` names: a path, or the name of a bundled SLA suite."""
    path = Path(ref)
    if path.is_file():
        return path
    bundled = BUNDLED / f"{ref}.yaml"
    if bundled.is_file():
        return bundled
    from usersim.core.registry import did_you_mean

    names = bundled_names()
    raise FileNotFoundError(
        f"--sla {ref}: no such file, and not a bundled SLA suite.{did_you_mean(ref, set(names))} "
        f"Bundled: {', '.join(names)}"
    )


def load_sla(ref: str) -> list[tuple[SlaThreshold, str]]:
    """(SLA, file) for every entry of the file's `sla:` list (a case file's includes applied).
    Raises FileProblems naming file:line: field for a bad entry, or a file without any SLA."""
    path = sla_path(ref)
    data, lines = read_yaml(path)
    if isinstance(data, dict) and "include" in data:
        from usersim.cases.loader import load_case

        items = load_case(path).sla  # a case file: its includes (a shared suite) give the sla
    else:
        try:
            items = SlaFile.model_validate(data if isinstance(data, dict) else {"sla": data}).sla
        except ValidationError as exc:
            raise FileProblems(validation_problems(path, exc, lines, SlaFile)) from None
    if not items:
        raise FileProblems([Problem(str(path), 1, "sla", "no SLA in this file (expected a `sla:` list)")])
    return [(s, str(path)) for s in items]
