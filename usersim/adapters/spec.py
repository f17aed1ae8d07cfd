"""Parsing agent SPEC strings: `scheme:body?key=value&key=value`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qsl

from usersim.adapters.base import AgentError
from usersim.core.registry import did_you_mean


def split_spec(spec: str, scheme: str, allowed: set[str]) -> tuple[str, dict[str, str]]:
    """('body', {options}) of `scheme:body?opt=v`; unknown options are an error with a suggestion."""
    prefix = scheme + ":"
    if not spec.startswith(prefix) or len(spec) == len(prefix):
        raise AgentError(f"Agent spec '{spec}' needs a name after '{prefix}', e.g. '{prefix}NAME'")
    body, _, query = spec[len(prefix) :].partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    for key in options:
        if key not in allowed:
            raise AgentError(
                f"Unknown option '{key}' in agent spec '{spec}'.{did_you_mean(key, allowed)} "
                f"Options: {', '.join(sorted(allowed))}"
            )
    return body, options


def float_option(spec: str, options: dict[str, str], key: str) -> float | None:
    """A numeric option or None; a non-number is an error naming the spec."""
    if key not in options or options[key] == "":
        return None
    try:
        return float(options[key])
    except ValueError:
        raise AgentError(f"Option '{key}={options[key]}' in agent spec '{spec}' must be a number") from None


def bool_option(options: dict[str, str], key: str, default: bool) -> bool:
    if key not in options:
        return default
    return options[key].strip().lower() not in {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ModelOptions:
    """The endpoint and sampling options every OpenAI-style agent SPEC takes."""

    base_url: str | None
    api_key_env: str | None
    temperature: float | None
    max_tokens: int | None
    timeout: float | None


def model_options(spec: str, options: dict[str, str]) -> ModelOptions:
    """base_url, api_key_env (which must be set), temperature, max_tokens and timeout of a SPEC."""
    api_key_env = options.get("api_key_env") or None
    if api_key_env and not os.environ.get(api_key_env):
        raise AgentError(f"Agent spec '{spec}': environment variable {api_key_env} is not set")
    max_tokens = float_option(spec, options, "max_tokens")
    return ModelOptions(
        base_url=options.get("base_url") or None,
        api_key_env=api_key_env,
        temperature=float_option(spec, options, "temperature"),
        max_tokens=int(max_tokens) if max_tokens else None,
        timeout=float_option(spec, options, "timeout"),
    )
