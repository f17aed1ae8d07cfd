"""Token cost accounting from a price table (adapters/prices.yaml, overridable with USERSIM_PRICES)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from usersim.core.yamlfile import read_yaml, short

_DEFAULT = Path(__file__).with_name("prices.yaml")


@lru_cache(maxsize=4)
def _table(extra: str | None) -> dict[str, tuple[float, float]]:
    table: dict[str, tuple[float, float]] = {}
    for path in [_DEFAULT] + ([Path(extra)] if extra else []):
        data = read_yaml(path)[0] or {}  # safe loader: FileProblems with file:line
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a price table maps model -> [input_usd_per_1M, output_usd_per_1M]")
        for model, pair in data.items():
            if not (
                isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, (int, float)) for x in pair)
            ):
                raise ValueError(
                    f"{path}: {model}: expected [input_usd_per_1M, output_usd_per_1M], got {short(pair)}"
                )
            table[str(model)] = (float(pair[0]), float(pair[1]))
    return table


@lru_cache(maxsize=256)
def _price(extra: str | None, model: str) -> tuple[float, float]:
    # the longest table name the model starts with (dated snapshots use their family's price);
    # remembered: this ran a scan of the table on every model call
    table = _table(extra)
    price = table.get(model)
    if price is None:
        matches = [name for name in table if model.startswith(name)]
        price = table[max(matches, key=len)] if matches else (0.0, 0.0)
    return price


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """Estimated USD cost of one call; 0 for models not in the table."""
    price = _price(os.environ.get("USERSIM_PRICES"), model)
    return round((prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000, 8)
