"""The environment a recorded conversation's tools ran against, taken from a case or suite file
(`usersim import --environment`): its environment, policy, context, language, system prompt and
tools, paths relative to the folder the drafted cases go to; with --redact-pii, its rows through the
same Redactor as the conversations."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.environment import Environment
from usersim.cases.loader import _read_with_includes, include_roots
from usersim.cases.relocate import relocate
from usersim.lang.pii import Redactor

# Keys of an environment source file (a case or suite) that the drafted cases take over.
_ENV_KEYS = ("environment", "policy", "context", "language", "system_prompt", "tools")


class EnvSource(BaseModel):
    """The environment a conversation's tools ran against, read from a case or suite file."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    data: dict[str, Any] = Field(description="The source's environment keys, paths relative to out_dir.")
    env: Environment | None = Field(default=None, description="The environment, loaded.")

    @classmethod
    def read(cls, path: Path, out_dir: Path) -> EnvSource:
        raw, _ = _read_with_includes(path, include_roots(path.parent))
        picked = {k: copy.deepcopy(raw[k]) for k in _ENV_KEYS if k in raw}
        env = None
        if isinstance(picked.get("environment"), dict):
            env = Environment.model_validate(picked["environment"], context={"case_dir": path.parent})
        return cls(data=relocate(picked, path.parent, out_dir), env=env)

    def redacted(self, redactor: Redactor, state_file: str) -> tuple[EnvSource, dict[str, Any]]:
        """The source with its environment's rows through `redactor` (a row's `name`, `email`,
        `address` ... whole by kind, pii.yaml `fields`), so the recorded calls with placeholders
        run against rows holding the same placeholders; and the rows to write to `state_file`
        (relative to out_dir), which the drafted cases then reference."""
        if self.env is None or not isinstance(self.env.state, dict):
            return self, {}
        redactor.learn_value(self.env.state, fields=True)
        redactor.learn_value(self.env.state_updates, fields=True)
        state = redactor.redact_value(self.env.state, fields=True)
        updates = redactor.redact_value(self.env.state_updates, fields=True)
        data = copy.deepcopy(self.data)
        data["environment"] = {**data["environment"], "state": state_file}
        if updates:
            data["environment"]["state_updates"] = updates
        env = self.env.model_copy(update={"state": state, "state_updates": updates})
        return EnvSource(data=data, env=env), state

    def tool_names(self) -> set[str]:
        from usersim.cases.environment import build_tools

        return set(build_tools(self.env)) if self.env is not None else set()
