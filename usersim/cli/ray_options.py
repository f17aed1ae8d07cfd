"""The `--ray*` options of `usersim run`: where the conversations run beyond this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

RAY_HELP = (
    "Run the conversations on Ray: local (Ray started in this process), auto (the cluster this "
    "machine belongs to) or an address (ray://HOST:10001, HOST:6379). The Ray workers (async "
    "actors, one per CPU of the cluster's nodes and at most --concurrency, unless --ray-actors) share "
    "--concurrency, the total of conversations at once; this process stores them. Needs the ray extra."
)


def ray_options(command: Any) -> Any:
    """--ray / --ray-actors / --ray-runtime-env on `usersim run`."""
    command = click.option(
        "--ray-runtime-env",
        "ray_runtime_env",
        default=None,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="A YAML or JSON file with the workers' Ray runtime_env (pip: [...], working_dir: ., "
        "env_vars: {...}): usersim-harness and the agent's modules where the cluster lacks them.",
    )(command)
    command = click.option(
        "--ray-actors",
        "ray_actors",
        default=None,
        type=click.IntRange(1),
        help="Ray workers to start, spread over the nodes, one CPU each (default: one per CPU, at most "
        "--concurrency). They share --concurrency, the total of conversations in flight.",
    )(command)
    return click.option("--ray", "ray_address", default=None, metavar="ADDRESS", help=RAY_HELP)(command)


def ray_config(
    address: str | None, actors: int | None, runtime_env: Path | None, concurrency: int | None = None
) -> dict[str, Any]:
    """RunConfig fields of the options; refuses before any work (exit 2) what cannot run."""
    if address is None:
        for value, name in ((actors, "--ray-actors"), (runtime_env, "--ray-runtime-env")):
            if value is not None:
                raise click.UsageError(f"{name} needs --ray")
        return {}
    if actors is not None and concurrency is not None and actors > concurrency:
        # each worker needs a conversation in flight; the message says what --concurrency means here
        raise click.UsageError(
            f"--ray-actors {actors} with --concurrency {concurrency}: with --ray, --concurrency is the "
            f"total of conversations in flight, split across the workers; give --concurrency {actors} or more"
        )
    from usersim.graphs.distributed import check_ray

    try:
        check_ray()
    except RuntimeError as exc:
        raise click.UsageError(str(exc)) from None
    return {"ray": address, "ray_actors": actors, "ray_runtime_env": _runtime_env(runtime_env)}


def _runtime_env(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    import yaml

    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint="--ray-runtime-env") from None
    if not isinstance(data, dict):
        raise click.BadParameter(
            f"{path}: a runtime_env is a mapping (pip, working_dir, env_vars ...), not {type(data).__name__}",
            param_hint="--ray-runtime-env",
        )
    if isinstance(data.get("working_dir"), str) and "://" not in data["working_dir"]:
        # relative to the file, as a user writes it beside the cases (Ray resolves it against the cwd)
        data["working_dir"] = str((path.parent / data["working_dir"]).resolve())
    return data
