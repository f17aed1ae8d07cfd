"""The run plan: a run's specs parsed once, typed, before any conversation.

`RunConfig` is what the user asked for (strings, as the CLI and the API take them); `RunPlan` is
what every conversation uses: the agent (a SPEC, or a callable handed to the Python API, held here
rather than in a global table), the judge models as a list, the judge configuration, and one place
that resolves a case's persona (once per case and run; each conversation gets its own copy).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from usersim.adapters.base import AgentUnderTest, load_agent
from usersim.adapters.python_fn import PythonFunctionAgent
from usersim.cases.schema import Case
from usersim.core.secrets import redact
from usersim.judges.base import JudgeConfig


class CallableAgent(PythonFunctionAgent):
    """A plain callable `(messages, tools) -> reply` as the agent, handed over in process."""

    def __init__(self, fn: Callable[..., Any], spec: str) -> None:
        self.spec = spec
        self.fn = fn


@dataclass
class RunPlan:
    """The parsed specs of one run."""

    agent_spec: str = "reference"
    agent_callable: Callable[..., Any] | None = None
    judge_models: list[str] = field(default_factory=list)
    judge_samples: int = 1
    extra_judges: list[str] = field(default_factory=list)
    _personas: dict[int, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_options(
        cls,
        judge_model: str | None,
        judge_samples: int,
        extra_judges: list[str],
        *,
        agent: str = "reference",
        agent_callable: Callable[..., Any] | None = None,
    ) -> RunPlan:
        """From RunConfig's strings: `judge_model` holds one SPEC or several comma-joined (an ensemble)."""
        from usersim.judges.llm import judge_specs, parse_judge_spec

        models = judge_specs(judge_model)
        for spec in models:
            parse_judge_spec(spec)  # unknown ?options and bad sizes raise ValueError here, once
        return cls(
            agent_spec=agent,
            agent_callable=agent_callable,
            judge_models=models,
            judge_samples=judge_samples,
            extra_judges=list(extra_judges),
        )

    @classmethod
    def of(cls, cfg: Any) -> RunPlan:
        """The plan of a RunConfig (graphs.runner)."""
        return cls.from_options(
            cfg.judge_model,
            cfg.judge_samples,
            cfg.extra_judges,
            agent=cfg.agent,
            agent_callable=cfg.agent_callable,
        )

    def load_agent(self) -> AgentUnderTest:
        """The agent under test: the handed-over callable, or the SPEC's adapter (AgentError if bad)."""
        if self.agent_callable is not None:
            return CallableAgent(self.agent_callable, self.agent_spec)
        return load_agent(self.agent_spec)

    @property
    def judge_config(self) -> JudgeConfig:
        """The judges' configuration (JudgeConfig keeps the ensemble comma-joined, as judges read it)."""
        return JudgeConfig(
            judge_model=",".join(self.judge_models) or None,
            judge_samples=self.judge_samples,
            extra_judges=self.extra_judges,
        )

    @property
    def judge_model_label(self) -> str | None:
        """The judge models as recorded (secrets redacted), or None without a judge model."""
        return redact(",".join(self.judge_models)) if self.judge_models else None

    def persona(self, case: Case) -> Any:
        """The case's resolved persona, resolved once per case in this plan; a fresh copy each call
        (a conversation's persona may be varied or changed by events without touching the others).
        A persona that does not resolve raises each time (the trial records the error)."""
        key = id(case)
        if key not in self._personas:
            from usersim.personas.loader import resolve_persona

            self.adopt_persona(case, resolve_persona(case))
        _case, persona, blob = self._personas[key]
        return pickle.loads(blob) if blob is not None else persona.model_copy(deep=True)

    def adopt_persona(self, case: Case, persona: Any) -> None:
        """Take `persona` as `case`'s resolved persona (a Ray worker gets it from the driver, where
        the persona file is): `persona(case)` then gives copies of it."""
        try:  # a copy is unpickled from these bytes: a third of a pydantic deep copy's CPU
            blob: bytes | None = pickle.dumps(persona, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - anything unpicklable inside: deep copies then
            blob = None
        self._personas[id(case)] = (case, persona, blob)  # keep the case: its id stays unique
