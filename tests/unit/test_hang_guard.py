"""The suite's hang guard (``tests/support/hang.py``) counts CPU, not wall time: slow work that
keeps working passes on a busy machine; work that spins or blocks fails."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.hang import within


def _spend(cpu_seconds: float) -> None:
    """Spend ``cpu_seconds`` of this thread's CPU."""
    end = time.thread_time() + cpu_seconds
    while time.thread_time() < end:
        pass


def test_work_that_takes_longer_than_its_budget_in_wall_time_but_not_in_cpu_passes() -> None:
    """As on a machine whose cores are busy: the work is given the CPU in short turns."""

    def slow_but_working() -> str:
        for _ in range(8):
            time.sleep(0.2)  # (another process has the core)
            _spend(0.01)
        return "done"

    started = time.monotonic()
    assert within(1.0, slow_but_working) == "done"
    assert time.monotonic() - started > 1.0  # (a wall-time budget of 1 s would have failed it)


def test_work_that_spins_fails_once_it_has_spent_its_budget() -> None:
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            _spend(0.01)

    try:
        with pytest.raises(AssertionError, match="spun"):
            within(0.3, spin)
    finally:
        stop.set()


def test_work_that_blocks_fails_once_it_has_spent_nothing_for_the_idle_time() -> None:
    go = threading.Event()
    try:
        with pytest.raises(AssertionError, match="blocked"):
            within(30.0, go.wait, idle_seconds=0.5)
    finally:
        go.set()


def test_the_work_s_cpu_counts_when_it_hands_it_to_threads_of_its_own() -> None:
    stop = threading.Event()

    def spin_in_a_thread() -> None:
        def spin() -> None:
            while not stop.is_set():
                _spend(0.01)

        helper = threading.Thread(target=spin, daemon=True)
        helper.start()
        helper.join()

    try:
        with pytest.raises(AssertionError, match="spun"):
            within(0.3, spin_in_a_thread, idle_seconds=30.0)
    finally:
        stop.set()


def test_the_work_s_result_and_its_exception_come_back() -> None:
    assert within(5.0, lambda: 42) == 42

    def fail() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        within(5.0, fail)
