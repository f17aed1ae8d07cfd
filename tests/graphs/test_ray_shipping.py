"""What a Ray worker is sent and what it sends back (graphs.ray_worker), played in this process: a
case goes once and trials follow by its key, the persona resolved where the case file is, and each
record comes back as its JSON with the report's transcript section already made, the very section
the driver would render from the stored record, in one compressed reply small enough for Ray to
hand back inline."""

from __future__ import annotations

import asyncio
import json

import pytest

from usersim.cases.loader import find_case
from usersim.core.record import RunRecord
from usersim.graphs.plan import RunPlan
from usersim.graphs.ray_dispatch import MAX_BATCH
from usersim.graphs.ray_worker import INLINE_BYTES, TrialWorker, inline_batch, pack, seal, unseal
from usersim.graphs.runner import RunConfig, run_trials
from usersim.graphs.trials import plan_trials
from usersim.reports.html_transcript import section

# two static cases (each run as skill groups A and B) and an organic telecom one with a persona and tools
IDS = ["B1-CL-01", "B1-EI-01", "C2-TD-04"]
CLOCK = {"run_id", "started_at", "duration_s", "timeline"}


def _play(worker: TrialWorker, trials, cases, sections=False):
    async def go():
        try:
            return unseal(await worker.run(trials, cases, sections))
        finally:
            await worker.close()

    return asyncio.run(go())


def _shipment(trials, cfg):
    """The driver's side: a key per distinct case, and each case with its persona resolved."""
    plan = RunPlan.of(cfg)
    keys: dict[int, int] = {}
    cases = {}
    for t in trials:
        if id(t.case) not in keys:
            keys[id(t.case)] = len(keys)
            cases[keys[id(t.case)]] = (t.case, plan.persona(t.case) if t.case.persona else None)
    return keys, cases


def _same(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in CLOCK}


@pytest.fixture
def trials():
    return plan_trials([find_case(i) for i in IDS], repeats=2, seed=7)


def test_a_case_goes_once_then_trials_by_its_key_and_the_records_are_a_local_runs(tmp_path, trials):
    cfg = RunConfig(seed=7, progress=False)
    keys, cases = _shipment(trials, cfg)
    worker = TrialWorker(cfg, "run-1")
    first, rest = trials[:3], trials[3:]
    sent_first = {k: v for k, v in cases.items() if k in {keys[id(t.case)] for t in first}}

    async def go():
        a = unseal(await worker.run([pack(t, keys[id(t.case)]) for t in first], sent_first))
        # the second call carries only the cases the worker was not sent
        b = unseal(
            await worker.run(
                [pack(t, keys[id(t.case)]) for t in rest],
                {k: v for k, v in cases.items() if k not in sent_first},
            )
        )
        await worker.close()
        return a + b

    replies = asyncio.run(go())
    assert [made for _, made in replies] == [None] * len(trials)  # no sections asked for
    remote = [json.loads(text) for text, _ in replies]
    local = asyncio.run(run_trials(trials, cfg, tmp_path / "local", {"run_id": "run-1"}))
    want = {r.id: r.model_dump(mode="json") for r in local}
    assert [r["id"] for r in remote] == [t.id for t in trials]
    for r in remote:
        assert r["transcript"] == want[r["id"]]["transcript"]
        assert _same(r) == _same(want[r["id"]]), r["id"]
    assert worker.stats()["conversations"] == len(trials)


def test_a_worker_held_case_is_not_needed_again_and_an_unknown_key_is_a_harness_bug(trials):
    cfg = RunConfig(progress=False)
    worker = TrialWorker(cfg, "run-2")
    static = next(t for t in trials if not t.case.persona)

    async def go():
        await worker.run([pack(static, 0)], {0: (static.case, None)})
        again = unseal(await worker.run([pack(static, 0)], {}))  # held since the first call
        with pytest.raises(KeyError):
            await worker.run([pack(static, 1)], {})
        await worker.close()
        return again

    ((text, made),) = asyncio.run(go())
    assert RunRecord.model_validate_json(text).case_id == static.case.id and made is None


def test_each_sent_section_is_the_one_the_driver_would_render_from_the_stored_record(trials):
    cfg = RunConfig(progress=False)
    keys, cases = _shipment(trials, cfg)
    replies = _play(
        TrialWorker(cfg, "run-3"), [pack(t, keys[id(t.case)]) for t in trials], cases, sections=True
    )
    assert len(replies) == len(trials)
    kinds = set()
    for text, made in replies:
        stored = RunRecord.model_validate_json(text)
        kinds.add(stored.mode)
        assert made is not None and made == section(stored), stored.id
        assert stored.id in made and stored.status in made
    assert kinds == {"static", "organic"}


def test_organic_conversations_with_sections_come_back_whole_in_batches_ray_hands_back_inline():
    """MAX_BATCH organic conversations (persona, tools, five turns) with their sections weigh most of
    a megabyte as JSON and HTML, which Ray would put in the object store; sealed, a batch of as
    many as `inline_batch` allows for what they weighed stays under its inline limit, and they
    unseal to the texts the worker made."""
    cfg = RunConfig(seed=3, progress=False)
    organic = plan_trials([find_case("C2-TD-04")], repeats=MAX_BATCH, seed=3)
    keys, cases = _shipment(organic, cfg)
    replies = _play(TrialWorker(cfg, "run-4"), [pack(t, keys[id(t.case)]) for t in organic], cases, True)
    assert [json.loads(text)["id"] for text, _ in replies] == [t.id for t in organic]
    assert all(made == section(RunRecord.model_validate_json(text)) for text, made in replies)
    plain = sum(len(text.encode()) + len((made or "").encode()) for text, made in replies)
    assert plain > 3 * INLINE_BYTES, plain

    fits = inline_batch(len(seal(replies)) / len(replies), MAX_BATCH)
    assert 2 <= fits < MAX_BATCH, fits  # several a call, not all eight of these
    for start in range(0, len(replies), fits):
        part = replies[start : start + fits]
        assert len(seal(part)) < INLINE_BYTES, (fits, len(seal(part)))
        assert unseal(seal(part)) == part


def test_a_batch_is_one_trial_when_one_record_alone_is_past_the_inline_limit_and_never_more_than_asked():
    assert inline_batch(INLINE_BYTES * 2, MAX_BATCH) == 1
    assert inline_batch(0, MAX_BATCH) == MAX_BATCH
    assert inline_batch(INLINE_BYTES / 10, 3) == 3
    assert inline_batch(INLINE_BYTES / 10, MAX_BATCH) == 8  # 0.8 x 10 of them, a fifth spare


def test_the_drivers_persona_is_used_where_the_persona_file_is_missing_and_each_conversation_copies_it(
    tmp_path, monkeypatch
):
    """A persona given by a path beside the case need not exist on the worker: the driver resolved
    it; two conversations of one batch each get their own copy (an event changing one's persona
    leaves the other's alone)."""
    case = find_case("C2-TD-04")
    persona = RunPlan().persona(case).model_copy(update={"id": "resolved-by-the-driver"})
    moved = case.model_copy(
        update={"persona": "personas/not-on-this-worker.yaml", "file": tmp_path / "c.yaml"}
    )
    two = plan_trials([moved], repeats=2)
    seen = []
    real = RunPlan.persona
    monkeypatch.setattr(RunPlan, "persona", lambda self, c: seen.append(real(self, c)) or seen[-1])
    replies = _play(
        TrialWorker(RunConfig(progress=False), "run-4"), [pack(t, 0) for t in two], {0: (moved, persona)}
    )
    records = [RunRecord.model_validate_json(text) for text, _ in replies]
    assert [r.error for r in records] == [None, None]
    assert [r.persona for r in records] == ["resolved-by-the-driver"] * 2
    assert len(seen) == 2 and seen[0] is not seen[1]


def test_a_case_whose_persona_the_driver_could_not_resolve_is_recorded_by_the_worker(tmp_path):
    case = find_case("C2-TD-04")
    moved = case.model_copy(update={"persona": "personas/nowhere.yaml", "file": tmp_path / "c.yaml"})
    (trial,) = plan_trials([moved])
    ((text, _),) = _play(
        TrialWorker(RunConfig(progress=False), "run-5"), [pack(trial, 0)], {0: (moved, None)}
    )
    record = RunRecord.model_validate_json(text)
    assert record.status == "error" and "nowhere.yaml" in (record.error or ""), record.error
