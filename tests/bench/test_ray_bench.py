"""The Ray bench's clocks (bench/part_scale.py): a span from the stub's arrival times (the model
server saw every request on one clock), CPU in a window from
/proc samples, a process's own CPU from /proc. Nothing is timed."""

from __future__ import annotations

import os

import pytest

from bench.part_scale import cpu_between, idle_span, proc_cpu, stub_span


def test_the_span_runs_from_the_first_request_to_the_last_reply():
    # three waves of 1 s: the last request arrives at 12.0, its reply leaves at 13.0
    assert stub_span([10.0, 10.01, 11.0, 11.02, 12.0], 1.0) == (10.0, 13.0)
    assert stub_span([5.5, 5.0], 0.0) == (5.0, 5.5)  # arrival order does not matter


def test_a_run_the_stub_never_saw_has_no_span():
    with pytest.raises(RuntimeError, match="no model request"):
        stub_span([], 1.0)


def test_cpu_in_a_window_never_leaves_part_of_it_out():
    samples = [(0.0, 1.0), (1.0, 1.5), (2.0, 2.5), (3.0, 3.0), (4.0, 3.2)]
    assert cpu_between(samples, 1.0, 3.0) == 1.5  # exactly on samples
    assert cpu_between(samples, 1.5, 2.5) == 1.5  # widened to the samples around the window
    assert cpu_between(samples, -1.0, 9.0) == 2.2  # beyond the samples: all of them
    assert cpu_between([], 0.0, 1.0) is None


def test_a_process_own_cpu_grows_with_its_work_and_a_gone_process_has_none():
    before = proc_cpu(os.getpid())
    assert before is not None
    sum(i * i for i in range(3_000_000))  # some CPU of this process
    assert proc_cpu(os.getpid()) > before  # type: ignore[operator]
    assert proc_cpu(2**22 + 12345) is None  # beyond pid_max: no such process


def test_the_idle_bound_of_a_span_is_its_busiest_worker_or_all_cpu_over_the_cores():
    one = {"workers": [{"cpu_s": 9.6}], "driver_cpu_s_in_span": 0.6, "stub_cpu_s_in_span": 2.2}
    two = {
        "workers": [{"cpu_s": 5.8}, {"cpu_s": 6.0}],
        "driver_cpu_s_in_span": 0.8,
        "stub_cpu_s_in_span": 2.1,
    }
    assert idle_span(one, 2) == 9.6  # one worker is one thread: its CPU is the floor
    assert idle_span(two, 2) == pytest.approx(7.35)  # 14.7 s of CPU on 2 cores
    assert idle_span(two, 4) == 6.0  # enough cores: the busiest worker again
    assert idle_span({"workers": []}, 2) is None  # a run without Ray workers
