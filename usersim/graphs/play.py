"""`usersim play`: one conversation with a person in the user's seat, run, judged and stored like
any other record, appended to a run folder that collects such sessions.

Each session is the case's next repeat in OUT (`BANK-01|r0`, `BANK-01|r1`, ...), so a tester can
record ten human conversations on a case family into one folder, the set `usersim realism --human`
reads. A folder holds sessions against one agent only: their success rate is that agent's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from usersim.cases.schema import Case
from usersim.core.record import RunRecord, Variant
from usersim.core.secrets import redact
from usersim.graphs.outputs import write_outputs
from usersim.graphs.plan import RunPlan
from usersim.graphs.store import RunFolderError, RunStore, prepare_out_dir
from usersim.graphs.trials import Trial, derive_seed

if TYPE_CHECKING:
    from usersim.graphs.runner import RunConfig


def next_trial(case: Case, done: set[str], seed: int) -> Trial:
    """The case's first repeat not yet stored in the folder."""
    repeat = 0
    while f"{case.id}|{Variant(repeat=repeat).key()}" in done:
        repeat += 1
    variant = Variant(repeat=repeat)
    tid = f"{case.id}|{variant.key()}"
    return Trial(id=tid, case=case, variant=variant, seed=derive_seed(seed, tid), skills_on=None)


def session_meta(old: dict, cfg: RunConfig, out: Path, trial: Trial) -> dict:
    """The folder's run meta with this session's case added (the first session starts it)."""
    from usersim.graphs.runner import run_meta

    if old.get("agent") not in (None, redact(cfg.agent)):
        raise RunFolderError(
            f"{out} holds play sessions with the agent {old['agent']}, not {redact(cfg.agent)}: a folder's "
            "sessions share one agent (their success rate is its); choose another --out"
        )
    meta = old or run_meta(cfg, out, [])
    case = trial.case
    meta["repeats"] = max(int(meta.get("repeats") or 1), trial.variant.repeat + 1)  # sessions of one case
    meta["case_ids"] = list(dict.fromkeys([*meta.get("case_ids", []), case.id]))
    files = dict(meta.get("case_files", {}))
    if case.file:
        files[case.id] = str(case.file.resolve())  # rescore finds the case again
    meta["case_files"] = files
    meta["play"] = {"sessions": int(meta.get("play", {}).get("sessions", 0)) + 1}
    return meta


async def play_session(case: Case, cfg: RunConfig, out: Path) -> RunRecord:
    """Play `case` once (cfg.simulator_instance is the seat), store the record in OUT and rewrite
    OUT's results.jsonl, summary.json and report.html with every session the folder holds."""
    from usersim.graphs.trial_run import run_trial

    prepare_out_dir(out)
    store = RunStore(out / "results.sqlite")  # holds the folder's writer lock while it is open
    try:
        done = store.done_ids()
        trial = next_trial(case, done, cfg.seed)
        meta = session_meta(store.get_meta(), cfg, out, trial)
        record = await run_trial(trial, cfg, meta["run_id"], RunPlan.of(cfg))
        store.put(record, len(done))
        store.set_meta(meta)
        from usersim.llm.client import aclose_clients

        await aclose_clients()
        await asyncio.to_thread(write_outputs, out, store, meta)
    finally:
        store.close()
    return record
