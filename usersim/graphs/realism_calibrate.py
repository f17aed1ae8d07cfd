"""`usersim realism --calibrate`: tune each persona's behaviour traits until its simulated users
come within the human range (reports/realism.py), by coordinate descent over the knobs the
simulators honour.

Knobs, in order: verbosity (how much a turn says: the rule simulator's terse / chatty phrasing, the
LLM simulator's instruction), reveal_policy (facts given before they are asked for), cooperativeness
(questions answered per turn), patience (unhelpful turns before giving up). For each knob every
level is tried on every persona at once (one run per level, the persona's other knobs at their best
so far, `rounds` conversations per case), and each persona keeps the level whose conversations are
closest to the human ones (the smallest mean |standardized difference|, by at least MIN_GAIN). A persona
is compared with the human conversations of its own cases when there are at least MIN_PER_SIDE of
them, else with all the human conversations given (said in the result).

The tuned personas are written as new files (never over the originals); before and after are runs
with the same agent, simulator, seed and number of conversations, so they differ only in the traits.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from usersim.cases.schema import Case
from usersim.graphs.runner import make_config, run_suite
from usersim.personas.loader import resolve_persona
from usersim.personas.schema import Persona
from usersim.reports.realism import MIN_PER_SIDE, RealismReport, build_report, distribution, standardized
from usersim.reports.realism_measures import TRAITS, Measured, measure

LEVELS = ("low", "medium", "high")
KNOBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("verbosity", LEVELS),
    ("reveal_policy", ("when_asked", "gradually", "all_at_once")),
    ("cooperativeness", LEVELS),
    ("patience", LEVELS),
)
Setting = dict[str, str]
MIN_GAIN = 0.02  # a level must bring a persona this much closer to replace the one it has


@dataclass
class Calibration:
    before: RealismReport
    after: RealismReport
    settings: dict[str, tuple[Setting, Setting]]  # persona id -> (original, tuned)
    against: dict[str, str]  # persona id -> which human conversations it was compared with
    files: dict[str, Path] = field(default_factory=dict)  # persona id -> tuned file written
    runs: int = 0  # conversations simulated
    notes: list[str] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """The before / after table: one row per trait, then one per persona."""
        out: list[dict[str, Any]] = []
        after = {t.key: t for t in self.after.traits}
        for t in self.before.traits:
            a = after[t.key]
            out.append(
                {
                    "what": t.label,
                    "before": f"{t.status} ({_diff(t.difference, t.rate)})",
                    "after": f"{a.status} ({_diff(a.difference, a.rate)})",
                }
            )
        stuck = [t.label for t in self.after.traits if t.status == "outside"]
        if stuck:
            out.append(
                {
                    "what": "still outside",
                    "before": ", ".join(stuck),
                    "after": "no level of " + ", ".join(k for k, _ in KNOBS) + " brought them within range",
                }
            )
        for pid, (old, new) in self.settings.items():
            changed = [f"{k} {old[k]} → {new[k]}" for k in old if old[k] != new[k]]
            out.append(
                {
                    "what": f"persona {pid}",
                    "before": ", ".join(f"{k} {v}" for k, v in old.items()),
                    "after": "; ".join(changed) or "unchanged (no level came closer)",
                }
            )
        return out


def _diff(v: float | None, rate: bool) -> str:
    if v is None:
        return "—"
    return f"{v * 100:+.0f} pts" if rate else f"{v:+.2f}"


def setting_of(persona: Persona) -> Setting:
    t = persona.traits
    return {
        "verbosity": t.verbosity,
        "reveal_policy": persona.reveal_policy,
        "cooperativeness": t.cooperativeness,
        "patience": t.patience,
    }


def overrides(setting: Setting) -> dict[str, Any]:
    traits = {k: v for k, v in setting.items() if k != "reveal_policy"}
    return {"traits": traits, "reveal_policy": setting["reveal_policy"]}


def _with(case: Case, setting: Setting) -> Case:
    merged = copy.deepcopy(case.persona_overrides)
    ov = overrides(setting)
    merged["traits"] = {**merged.get("traits", {}), **ov["traits"]}
    merged["reveal_policy"] = ov["reveal_policy"]
    return case.model_copy(update={"persona_overrides": merged})


def score(sim: list[Measured], human: list[Measured]) -> float:
    """How far a persona's simulated conversations are from the human ones: the mean |standardized
    difference| over the traits both sides have values for (no minimum count: a persona may have a
    handful of conversations; the report's intervals judge the result). Smaller is closer."""
    gaps = []
    for trait in TRAITS:
        s = distribution([v for m in sim if (v := m.values.get(trait.key)) is not None])
        h = distribution([v for m in human if (v := m.values.get(trait.key)) is not None])
        if s.n and h.n and (d := standardized(s, h)) is not None:
            gaps.append(abs(d))
    return sum(gaps) / len(gaps) if gaps else float("inf")


async def _measure_run(
    cases: list[Case],
    settings: dict[str, Setting],
    persona_of: dict[str, str],
    cfg: dict[str, Any],
    out: Path,
) -> list[Measured]:
    run_cases = [_with(c, settings[persona_of[c.id]]) for c in cases]
    records = await run_suite(run_cases, make_config(**{**cfg, "progress": False}), out)
    by_id = {c.id: c for c in run_cases}
    personas = {c.id: resolve_persona(c) for c in run_cases}
    return [measure(r, by_id[r.case_id], personas[r.case_id], "simulated") for r in records]


async def calibrate(
    cases: list[Case],
    human: list[Measured],
    *,
    agent: str,
    simulator: str,
    rounds: int,
    out_dir: Path,
    seed: int = 0,
    human_run: str = "",
) -> Calibration:
    """Tune every persona of `cases` (organic cases with a persona) against `human`. The runs go
    under `out_dir` (its own scratch folder: emptied first)."""
    import shutil

    shutil.rmtree(out_dir, ignore_errors=True)
    organic = [c for c in cases if c.mode == "organic" and c.persona]
    personas = {c.id: resolve_persona(c) for c in organic}
    persona_of = {cid: p.id for cid, p in personas.items()}
    original: dict[str, Setting] = {}
    for p in personas.values():
        original.setdefault(p.id, setting_of(p))
    cfg = {"agent": agent, "simulator": simulator, "repeats": rounds, "seed": seed}
    against: dict[str, list[Measured]] = {}
    notes: dict[str, str] = {}
    for pid in original:
        own_cases = {cid for cid, p in persona_of.items() if p == pid}
        own = [m for m in human if m.case_id in own_cases]
        enough = len(own) >= MIN_PER_SIDE
        against[pid] = own if enough else human
        notes[pid] = (
            f"its own cases' {len(own)} human conversations"
            if enough
            else f"all {len(human)} human conversations (its own cases have {len(own)}, fewer than {MIN_PER_SIDE})"
        )
    best = {pid: dict(s) for pid, s in original.items()}
    n_runs = 0
    before = await _measure_run(organic, best, persona_of, cfg, out_dir / "before")
    n_runs += len(before)
    scores = {pid: score([m for m in before if persona_of[m.case_id] == pid], against[pid]) for pid in best}
    for knob, levels in KNOBS:
        for level in levels:
            trial = {pid: {**s, knob: level} for pid, s in best.items()}
            if all(trial[pid] == best[pid] for pid in best):
                continue
            measured = await _measure_run(organic, trial, persona_of, cfg, out_dir / f"{knob}-{level}")
            n_runs += len(measured)
            for pid in best:
                if trial[pid] == best[pid]:
                    continue
                s = score([m for m in measured if persona_of[m.case_id] == pid], against[pid])
                if s < scores[pid] - MIN_GAIN:
                    scores[pid], best[pid] = s, trial[pid]
    after = await _measure_run(organic, best, persona_of, cfg, out_dir / "after")
    n_runs += len(after)
    report_before = build_report(before, human, simulated_run=str(out_dir / "before"), human_run=human_run)
    report_after = build_report(after, human, simulated_run=str(out_dir / "after"), human_run=human_run)
    return Calibration(
        before=report_before,
        after=report_after,
        settings={pid: (original[pid], best[pid]) for pid in original},
        against=notes,
        runs=n_runs,
    )


def write_personas(calibration: Calibration, cases: list[Case], folder: Path) -> dict[str, Path]:
    """Each changed persona as a new file `folder/<id>.yaml`: its source file with the tuned
    traits (every other field as written there) and a comment naming its source. The original
    files are never written."""
    from usersim.core.yamlfile import read_text_file
    from usersim.personas.loader import find_persona

    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for case in cases:
        if not case.persona:
            continue
        source = find_persona(case.persona, case_file=case.file)
        data = yaml.safe_load(read_text_file(source)) or {}
        pid = str(data.get("id") or source.stem)
        if pid in written or pid not in calibration.settings:
            continue
        old, new = calibration.settings[pid]
        if old == new:
            continue
        ov = overrides(new)
        data["traits"] = {**(data.get("traits") or {}), **ov["traits"]}
        data["reveal_policy"] = ov["reveal_policy"]
        changed = ", ".join(f"{k} {old[k]} -> {new[k]}" for k in old if old[k] != new[k])
        path = folder / f"{pid}.yaml"  # (a persona file is named by its id)
        header = (
            f"# {source.name} tuned by `usersim realism --calibrate`: {changed}.\n"
            f"# Compared with {calibration.against.get(pid, 'the human conversations')}.\n"
        )
        path.write_text(header + yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        written[pid] = path
    calibration.files = written
    return written
