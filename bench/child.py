"""One harness in a process of its own, for the parts that measure a whole process (its CPU, wall
and peak RSS from the parent's wait4): `python bench/child.py HARNESS COUNT CONCURRENCY OUT PROMPTS`.

HARNESS is `usersim` (usersim.arun), `openevals` or `bare_json` (bench/harnesses.py); PROMPTS the
JSON of bench.harnesses.Prompts (bench.harnesses.dump_prompts). It plays `COUNT` conversations,
`CONCURRENCY` at once, and prints one JSON line: {"wall_s": the conversations' wall, imports
excluded}. OPENAI_BASE_URL (the stub's tagged URL) comes from the parent.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import harnesses as h  # noqa: E402


def play(harness: str, prompts: h.Prompts, count: int, concurrency: int, out: Path) -> Any:
    if harness == "usersim":
        return h.usersim_conversations(count, concurrency, out)
    if harness == "openevals":
        return h.openevals_conversations(prompts, count, concurrency)
    if harness == "bare_json":
        return h.bare_json_conversations(prompts, count, concurrency)
    raise SystemExit(f"bench/child.py: unknown harness {harness!r} (usersim, openevals, bare_json)")


def main(argv: list[str]) -> None:
    harness, count, concurrency, out, prompts_file = argv[:5]
    prompts = h.load_prompts(prompts_file)
    t0 = time.perf_counter()
    asyncio.run(play(harness, prompts, int(count), int(concurrency), Path(out)))
    print(json.dumps({"wall_s": time.perf_counter() - t0}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
