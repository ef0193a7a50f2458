"""Many sessions in parallel processes: every path gets a result, in any order; a process that
dies takes only its own session down."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from core.fleet.session_pool import map_sessions


def _length(path: str) -> int:
    """A worker: runs in a pool process (this module is imported there by name)."""
    if path == "dies":
        os._exit(3)  # as the out-of-memory killer would end it
    if path == "raises":
        raise ValueError("a bug")
    return len(path)


def _crashed(path: str, message: str) -> int:
    return -1 if "died" in message else -2


def test_every_path_gets_its_result_in_one_process_or_many() -> None:
    paths = [f"session-{'x' * n}" for n in range(7)]
    for jobs in (1, 2):
        results = dict(map_sessions(paths, _length, jobs=jobs, on_crash=_crashed))
        assert results == {path: len(path) for path in paths}


def test_biggest_first_in_one_process() -> None:
    sizes = {"a": 1, "bb": 30, "ccc": 20}
    order = [
        path
        for path, _ in map_sessions(list(sizes), _length, jobs=1, on_crash=_crashed, sizes=sizes)
    ]
    assert order == ["bb", "ccc", "a"]


def test_a_dying_process_is_its_sessions_error_and_the_others_go_on() -> None:
    paths = ["one", "dies", "three", "raises", "fifth"]
    results = dict(map_sessions(paths, _length, jobs=2, on_crash=_crashed))
    assert results == {"one": 3, "dies": -1, "three": 5, "raises": -2, "fifth": 5}


def test_every_process_is_started_before_any_session_is_handed_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process started while another dies is never ended by CPython 3.11's break handling,
    which then waits for it forever: the pool's processes all start at the first submit, before
    its manager thread hands out work."""
    started: list[bool] = []  # per process started: was work being handed out already?
    spawn = ProcessPoolExecutor._spawn_process  # type: ignore[attr-defined]  # (private)

    def watched(pool: Any) -> None:
        started.append(pool._executor_manager_thread is not None)
        spawn(pool)

    monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", watched)
    paths = ["one", "dies", "three", "raises", "fifth"]
    results = dict(map_sessions(paths, _length, jobs=3, on_crash=_crashed))
    assert results == {"one": 3, "dies": -1, "three": 5, "raises": -2, "fifth": 5}
    assert len(started) >= 3  # the first pool's three, then the rounds after the death
    assert not any(started)


def _sleepy(path: str) -> int:
    """A worker that takes far longer for ``slow`` than any test waits."""
    if path.startswith("slow"):
        time.sleep(600)
    return len(path)


def _until_the_first_result(jobs: int) -> list[str]:
    seen: list[str] = []
    paths = ["quick", "slow-1", "slow-2", "slow-3"]
    for path, _ in map_sessions(
        paths, _sleepy, jobs=jobs, on_crash=_crashed, stop=lambda: bool(seen)
    ):
        seen.append(path)
    return seen


def test_stop_ends_the_run_and_its_processes() -> None:
    for jobs in (1, 2):
        # it returns: the slow sessions are neither started (one process) nor waited for
        assert _until_the_first_result(jobs) == ["quick"]
