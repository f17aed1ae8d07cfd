"""The bench's arithmetic (bench/metrics.py) on small known inputs: token accounting by role, the
reusable-prefix share, efficiency, thirds, the headline and the targets block. Nothing is timed."""

from __future__ import annotations

import pytest

from bench.harnesses import capture_prompts
from bench.metrics import (
    JUSTIFIED_EXTRA_CALLS,
    TARGETS,
    common_prefix,
    conversation_tokens,
    cpu_at,
    cpu_thirds,
    efficiency,
    headline,
    paired,
    reply_tokens,
    request_tokens,
    rss_in_run,
    slices,
    spread,
    steady_ends,
    stolen_share,
    targets,
    thirds,
    unjustified_calls,
)


def words(text: str) -> list[int]:
    """A toy encoder: one token per word (its hash), so counts are easy to check by eye."""
    return [hash(w) for w in text.split()]


def ex(model: str, *messages: tuple[str, str], reply: str = "ok fine", **body) -> dict:
    msgs = [{"role": r, "content": c} for r, c in messages]
    return {
        "model": model,
        "request": {"model": model, "messages": msgs, **body},
        "reply": {"content": reply},
    }


def test_a_request_costs_its_words_and_four_tokens_of_framing_per_message():
    body = {"messages": [{"role": "system", "content": "be a user"}, {"role": "user", "content": "hi"}]}
    assert len(request_tokens(body, words)) == (3 + 4) + (1 + 4)
    # tools come first: a change in them changes the whole prefix
    tooled = request_tokens({**body, "tools": [{"name": "x"}]}, words)
    assert tooled[0] == "<|tools|>" and tooled[-len(request_tokens(body, words)) :] == request_tokens(
        body, words
    )


def test_reply_tokens_count_text_and_tool_calls():
    assert reply_tokens({"content": "two words"}, words) == 2
    assert reply_tokens({"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}, words) == 2
    assert reply_tokens({}, words) == 0


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([], [1]) == 0


def test_prefix_share_is_per_role_and_token_weighted():
    system = ("system", "you are a user who wants a trip")  # 8 words -> 12 tokens
    log = [
        ex("sim", system, ("user", "hello")),  # first of its role: not counted in the share
        ex("agent", ("user", "plan it")),
        ex("sim", system, ("user", "hello"), ("assistant", "me"), ("user", "next")),
        ex("judge", ("user", "grade it")),
        ex("sim", ("system", "turn 3 you are a user"), ("user", "hello")),  # prefix broken at once
    ]
    out = conversation_tokens(log, words)
    sim = out["by_role"]["simulator"]
    first, second, third = 12 + 5, 12 + 5 + 5 + 5, (6 + 4) + 5
    assert sim["calls"] == 3 and sim["prompt_tokens"] == first + second + third
    # the second request reuses all of the first; the third only the framing "<|start|> system <|sep|>"
    assert sim["reusable_prefix_share"] == round((first + 3) / (second + third), 4)
    assert sim["reusable_prefix_min"] == round(3 / third, 4)
    assert out["by_role"]["agent"]["reusable_prefix_share"] is None  # one call: nothing to reuse
    assert out["by_role"]["judge"]["completion_tokens"] == 2
    assert out["total"]["calls"] == 5 and out["total"]["completion_tokens"] == 10
    assert out["total"]["tokens"] == out["total"]["prompt_tokens"] + 10


def test_unknown_models_are_not_counted():
    assert conversation_tokens([ex("__count__", ("user", "x"))], words)["total"]["calls"] == 0


def test_efficiency_is_ideal_waves_over_measured_wall():
    assert efficiency(10.0, 256, 128, 25.0) == 0.8  # 2 waves of 10 s in 25 s
    assert efficiency(10.0, 100, 128, 10.0) == 1.0  # one partial wave
    assert efficiency(2.0, 129, 128, 8.0) == 0.5  # 129 conversations need a second wave


def test_thirds_compare_the_pace_at_the_start_and_the_end():
    steady = thirds([i * 0.5 for i in range(30)])
    assert steady["first_third_s_per_1k"] == steady["last_third_s_per_1k"] == 500.0
    assert steady["slowdown"] == 1.0
    slowing = thirds(
        [i * 0.5 for i in range(10)] + [5 + i for i in range(10)] + [15 + 2 * i for i in range(10)]
    )
    assert slowing["slowdown"] == 4.0
    assert thirds([1.0, 2.0])["slowdown"] is None


def test_the_steady_part_leaves_out_the_first_wave_its_backlog_and_the_drain():
    # concurrency 3: the first wave ends together at 3.0; the second wave's ends come faster than the
    # run's pace while its backlog fills (0.2 s apart); the drain spreads the last three out
    ends = [3.0, 3.0, 3.0] + [3.2, 3.4, 3.6] + [4.0 + i for i in range(10)] + [15.0, 18.0, 24.0]
    assert steady_ends(list(reversed(ends)), 3) == [4.0 + i for i in range(10)]
    assert thirds(steady_ends(ends, 3))["slowdown"] == 1.0
    assert thirds(ends)["slowdown"] > 2  # every end: the burst and the drain read as a slowdown
    assert steady_ends(ends[:10], 3) == sorted(ends[:10])  # too short for a steady part: all of it
    assert steady_ends(ends, 0) == sorted(ends)


def test_rss_in_the_run_separates_what_stays_from_what_is_in_flight():
    ends = [float(i) for i in range(1, 31)]
    # 100 MB before the first end (the in-flight conversations), flat after it: nothing stays
    flat = rss_in_run(ends, [(0.0, 50.0)] + [(float(t), 100.0) for t in range(1, 32)])
    assert flat["rss_mb_at_ends"] == {"first": 100.0, "third": 100.0, "two_thirds": 100.0, "last": 100.0}
    assert flat["rss_growth_mb_per_1k_in_run"] == 0.0
    # 0.5 MB more per conversation ended: 500 MB per 1,000
    leak = rss_in_run(ends, [(float(t), 100.0 + 0.5 * t) for t in range(0, 32)])
    assert leak["rss_growth_mb_per_1k_in_run"] == 500.0
    assert rss_in_run(ends, [])["rss_growth_mb_per_1k_in_run"] is None


def test_cpu_at_an_instant_is_read_between_the_samples_around_it():
    samples = [(0.0, 1.0), (2.0, 2.0), (4.0, 4.0)]
    assert cpu_at(samples, 1.0) == 1.5
    assert cpu_at(samples, 3.0) == 3.0
    assert cpu_at(samples, -5.0) == 1.0 and cpu_at(samples, 9.0) == 4.0  # the nearest outside
    assert cpu_at([], 1.0) is None


def test_cpu_thirds_tell_a_costlier_conversation_from_a_busier_machine():
    ends = [float(i) for i in range(31)]  # one conversation ends per second all along
    # the process uses 0.5 CPU-s per second throughout: the same CPU per conversation
    steady = cpu_thirds(ends, [(float(t), 0.5 * t) for t in range(32)])
    assert steady["cpu_first_third_s_per_1k"] == steady["cpu_last_third_s_per_1k"] == 500.0
    assert steady["cpu_slowdown"] == 1.0
    assert steady["cores_first_third"] == steady["cores_last_third"] == 0.5
    # from second 15 on each conversation costs twice the CPU: a growing cost, not the machine
    growing = cpu_thirds(ends, [(float(t), 0.5 * t if t <= 15 else 7.5 + (t - 15)) for t in range(32)])
    assert growing["cpu_slowdown"] == 2.0
    assert growing["cores_last_third"] == 1.0
    assert cpu_thirds(ends[:4], [(0.0, 0.0), (1.0, 1.0)])["cpu_slowdown"] is None
    assert cpu_thirds(ends, [])["cpu_first_third_s_per_1k"] is None
    # the hypervisor took 0.4 of the machine's two CPUs in the last third only
    steal = [(float(t), 0.0 if t <= 20 else 0.8 * (t - 20)) for t in range(32)]
    stolen = cpu_thirds(ends, [(float(t), 0.5 * t) for t in range(32)], steal, cpus=2)
    assert stolen["stolen_first_third"] == 0.0 and stolen["stolen_last_third"] == 0.4
    assert stolen["cpu_slowdown"] == 1.0  # the same CPU per conversation: the machine, not usersim
    assert steady["stolen_first_third"] is None  # no steal samples: not known, not zero


def test_slices_show_where_in_the_run_a_conversation_got_costlier():
    ends = [float(i) for i in range(40)]
    # 0.5 CPU-s per conversation, 1.0 from second 30 on: only the last tenths cost more
    cpu = [(float(t), 0.5 * t if t <= 30 else 15 + (t - 30)) for t in range(41)]
    parts = slices(ends, cpu, parts=4)
    assert [p["cpu_s_per_1k"] for p in parts] == [500.0, 500.0, 500.0, 1000.0]
    assert [p["wall_s_per_1k"] for p in parts] == [1000.0] * 4
    assert parts[3]["cores"] == 1.0 and parts[0]["stolen_share"] is None
    assert slices(ends[:5], cpu, parts=4) == []  # fewer than 2 ends a part: no shape to show


def test_the_stolen_share_is_the_machines_cpu_time_given_to_other_guests():
    steal = [(0.0, 10.0), (10.0, 12.0)]  # 2 s stolen over 10 s of a 2-CPU machine
    assert stolen_share(steal, 0.0, 10.0, 2) == 0.1
    assert stolen_share(steal, 0.0, 5.0, 2) == 0.1  # read between the samples
    assert stolen_share([], 0.0, 10.0, 2) is None
    assert stolen_share(steal, 5.0, 5.0, 2) is None


def _m(value: float) -> dict:
    """A median with its spread, as the bench's per-round figures are stored."""
    return {"median": value, "min": value * 0.9, "max": value * 1.1}


def _parts(**over) -> dict:
    whole = {
        "usersim": {"cpu_ms_per_call": _m(3.5), "calls_by_model": {"agent": 5, "sim": 5, "judge": 2}},
        "usersim_cli": {"cpu_ms_per_call": _m(4.0)},
        "openevals": {"cpu_ms_per_call": _m(4.2), "calls_by_model": {"agent": 5, "sim": 4, "judge": 1}},
        "usersim_vs_openevals_wall_ms_per_turn": _m(0.7),
        "usersim_cli_vs_openevals_wall_ms_per_turn": _m(0.9),
    }
    warm = {
        "usersim": {"cpu_ms_per_call": _m(1.2)},
        "bare_json": {"cpu_ms_per_call": _m(0.4)},
        "usersim_vs_bare_json_cpu_ms_per_call": _m(3.0),
        "usersim_vs_openevals_wall_ms_per_turn": _m(0.3),
    }
    return {"whole_process": whole, "warm": warm, **over}


def test_a_spread_is_the_median_of_the_rounds_with_their_min_and_max():
    assert spread([3.0, 1.0, 2.0, 10.0, 2.5]) == {"median": 2.5, "min": 1.0, "max": 10.0}
    assert spread([]) == {"median": None, "min": None, "max": None}
    # paired: the ratio of each round's two figures, then their spread (not a ratio of medians)
    assert paired([2.0, 4.0, 9.0], [1.0, 8.0, 3.0]) == {"median": 2.0, "min": 0.5, "max": 3.0}


def test_extra_calls_are_unjustified_beyond_what_each_model_is_allowed():
    oe = {"agent": 5, "sim": 4, "judge": 1}
    assert unjustified_calls({"agent": 5, "sim": 5, "judge": 2}, oe) == 0  # the stop call, the fidelity judge
    assert unjustified_calls({"agent": 6, "sim": 5, "judge": 2}, oe) == 1  # an agent call nothing explains
    assert unjustified_calls({"agent": 5, "sim": 5, "judge": 3}, oe) == 1  # a second extra judge call
    assert unjustified_calls({"agent": 5, "sim": 4, "judge": 1}, oe) == 0  # none extra
    assert set(JUSTIFIED_EXTRA_CALLS) == {"sim", "judge"}


def test_headline_puts_the_whole_process_beside_the_warm_state():
    h = headline(_parts())
    assert (h["whole_process_cpu_ms_per_call"], h["warm_cpu_ms_per_call"]) == (3.5, 1.2)
    assert h["whole_process_vs_openevals_wall_per_turn"] == 0.7
    assert h["whole_process_cli_vs_openevals_wall_per_turn"] == 0.9
    assert (h["warm_vs_openevals_wall_per_turn"], h["usersim_vs_floor_cpu"]) == (0.3, 3.0)
    assert h["unjustified_extra_calls"] == 0
    assert "reason" in headline({})
    no_oe = _parts()
    del no_oe["whole_process"]["openevals"], no_oe["whole_process"]["usersim_vs_openevals_wall_ms_per_turn"]
    no_oe["whole_process"]["reason"] = "openevals not importable"
    h = headline(no_oe)
    assert h["unjustified_extra_calls"] is None and h["reason"] == "openevals not importable"


def test_targets_are_computed_from_the_measured_figures():
    parts = _parts(
        tokens={"usersim_vs_bare": 1.2, "usersim": {"by_role": {"agent": {"reusable_prefix_share": 0.95}}}},
        ray={"cpu_bound": None, "reason": "ray not importable (ImportError: no ray)"},
        concurrency_1s={"usersim": {"efficiency": _m(0.92)}, "usersim_vs_openevals_peak_rss": _m(1.6)},
        bench={"seconds": 1300.0},
    )
    parts["headline"] = headline(parts)
    rows = {r["item"]: r for r in targets(parts)}
    assert len(rows) == len(TARGETS) and {r["issue"] for r in rows.values()} == {27, 44}
    cpu = rows["CPU ms per model call, whole process (start to exit), 50 conversations"]
    assert (cpu["measured"], cpu["target"], cpu["met"]) == (3.5, "<= 3", False)
    assert rows["wall per simulated turn / openevals', whole process, paired rounds"]["met"] is True
    assert rows["efficiency at 1 s latency, C=128, 256 conversations"]["met"] is True
    assert rows["peak RSS at C=128 / openevals', paired rounds"]["met"] is False  # 1.6 > 1.5
    assert rows["calls per conversation beyond openevals' not justified"]["met"] is True
    assert rows["`make bench` wall s at its defaults"]["met"] is False  # 1300 s > 20 minutes
    warm = rows["harness CPU ms per model call, warm (graph, judges, store, report)"]
    assert (warm["measured"], warm["met"]) == (1.2, True)
    assert rows["tokens per judged conversation / bare loop"]["met"] is False
    assert rows["reusable prefix share, agent calls after turn 1"]["met"] is True
    sim = rows["reusable prefix share, simulator calls after turn 1"]
    assert sim["met"] is None and sim["reason"] == "not measured in this run"
    ray = rows["Ray throughput two worker nodes / one"]
    assert ray["met"] is None and ray["reason"].startswith("ray not importable")


@pytest.mark.parametrize("first_role", ["system", "user"])
def test_capture_takes_the_fixed_parts_of_usersims_requests(first_role):
    log = [
        ex("agent", (first_role, "sys prompt"), ("user", "hi"), tools=[{"type": "function"}], temperature=0),
        ex("sim", ("system", "persona"), ("assistant", "hi"), ("user", "note")),
        ex("agent", ("system", "other"), ("user", "hi")),
        ex("judge", ("user", "grade 1")),
        ex("judge", ("user", "grade 2")),
    ]
    p = capture_prompts(log)
    assert p.agent_system == ([{"role": "system", "content": "sys prompt"}] if first_role == "system" else [])
    assert p.agent_extra == {"tools": [{"type": "function"}], "temperature": 0}
    assert p.sim_system == "persona" and [j["messages"][0]["content"] for j in p.judges] == [
        "grade 1",
        "grade 2",
    ]
