"""Run one analysis per session over many sessions, in parallel processes.

:func:`map_sessions` calls ``worker(path)`` for every path and yields ``(path, result)`` as each
one finishes. With ``jobs=1`` it runs in this process; otherwise in a pool of ``jobs`` processes
started with ``forkserver`` where the platform has it (a clean process forked from a server that
has already imported the worker's module: quick to start, and safe to use from a program that
runs threads, as the TUI does), else ``spawn``. The biggest sessions are started first, so that
the last one to finish is a small one and no process waits idle at the end.

The worker must be a module-level function (it is pickled by name) that never raises for a bad
session: it returns a result describing the error instead (one that raises all the same gets
``on_crash(path, message)``). Should a process of the pool die (a crash, the out-of-memory
killer), the pool cannot say which session it was running: the unfinished sessions go to a fresh
pool, and if that one dies too, each of its unfinished sessions runs alone, so that only the one
that kills its process gets ``on_crash(path, message)`` as its result. That costs a process per
session for the rest of the run, which only a session that crashes twice brings about.

``stop`` makes a run end early (the session picker's background analysis, when the user leaves):
it is asked between sessions and, while the pool works, every :data:`STOP_POLL_S`; once it says
so, no session starts any more and the pool's processes are ended, so that nothing keeps a core
busy (nor the program from exiting) for a session nobody waits for.

A program that has captured ``sys.stderr`` (a Textual app does, while it owns the terminal) can
run a pool too: multiprocessing's helper process is started without the capture, and the pool's
processes write nothing onto the terminal (their output goes to ``os.devnull``).
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

ResultT = TypeVar("ResultT")

STOP_POLL_S = 0.1
"""How often a pool run asks ``stop`` while it waits for a session to finish."""
StopFn = Callable[[], bool]


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def map_sessions(
    paths: Sequence[str],
    worker: Callable[[str], ResultT],
    *,
    jobs: int,
    on_crash: Callable[[str, str], ResultT],
    sizes: dict[str, int] | None = None,
    stop: StopFn | None = None,
) -> Iterator[tuple[str, ResultT]]:
    """``(path, worker(path))`` for every path, in the order they finish (see the module
    docstring). ``sizes`` (bytes per path) orders the work biggest first; ``stop`` ends the run
    early."""
    order = sorted(paths, key=lambda p: -(sizes or {}).get(p, 0))
    stopped = stop or _never
    if jobs <= 1 or len(order) <= 1:
        for path in order:
            if stopped():
                return
            yield path, worker(path)
        return
    left = yield from _pool_round(order, worker, min(jobs, len(order)), on_crash, stopped)
    if left and not stopped():  # a process died: the sessions it did not finish get a fresh pool
        left = yield from _pool_round(left, worker, min(jobs, len(left)), on_crash, stopped)
    for path in left:  # it died again: each alone, so that only the culprit is blamed
        if stopped():
            return
        alone = yield from _pool_round([path], worker, 1, on_crash, stopped)
        if alone and not stopped():
            yield path, on_crash(path, "the analysis process died (out of memory, or a crash)")


def _never() -> bool:
    return False


def _pool_round(
    pending: list[str],
    worker: Callable[[str], ResultT],
    jobs: int,
    on_crash: Callable[[str, str], ResultT],
    stop: StopFn,
) -> Generator[tuple[str, ResultT], None, list[str]]:
    """Run ``pending`` in one pool, yielding results; return the paths left unfinished when a
    process of the pool died (concurrent.futures cannot tell which one it was running)."""
    module = getattr(worker, "__module__", None)
    left: list[str] = []
    poll = None if stop is _never else STOP_POLL_S
    captured = _output_captured()
    if captured:
        _start_resource_tracker()
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=_context(module),
        initializer=_silence_output if captured else None,
    ) as pool:
        _start_all_at_once(pool)
        futures: dict[Future[ResultT], str] = {}
        for number, path in enumerate(pending):
            try:
                futures[pool.submit(worker, path)] = path
            except (BrokenProcessPool, RuntimeError, ValueError):
                # a process died while the rest were being submitted (CPython may then say
                # "semaphore or lock released too many times"): the rest go to the next round
                left.extend(pending[number:])
                break
        try:
            while futures:
                if stop():
                    _end(pool)
                    return []
                finished, _ = wait(futures, timeout=poll, return_when=FIRST_COMPLETED)
                for future in finished:
                    path = futures.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        left.append(path)
                        continue
                    except Exception as exc:  # the worker's own bug: that session's row says so
                        result = on_crash(path, f"the analysis failed: {type(exc).__name__}: {exc}")
                    yield path, result
        except GeneratorExit:  # the caller stopped reading: start nothing more, finish the rest
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return left


def _start_all_at_once(pool: ProcessPoolExecutor) -> None:
    """Make ``pool`` start all its processes at the first submit, before any session is handed
    out, as it does under the ``fork`` method, instead of one more at each submit while none is
    idle. Started one at a time, a process can be starting while another dies of its session:
    CPython 3.11 then ends the processes it knows, the new one is added after, waits idle for
    work that never comes, and the pool's break handling waits for it to exit — forever (seen in
    the test suite, about once in a thousand pools that lose a process)."""
    if hasattr(pool, "_safe_to_dynamically_spawn_children"):  # (private, CPython 3.9 to 3.14)
        pool._safe_to_dynamically_spawn_children = False


def _end(pool: ProcessPoolExecutor) -> None:
    """Start nothing more and end the processes at work (their sessions are not waited for)."""
    working = list((pool._processes or {}).values())  # (no public way before Python 3.14)
    pool.shutdown(wait=False, cancel_futures=True)  # (which forgets the processes)
    for process in working:
        process.terminate()


def _context(module: str | None) -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        if module:
            context.set_forkserver_preload([module])
        return context
    return multiprocessing.get_context("spawn")


def _output_captured() -> bool:
    """This program's ``sys.stderr`` is not its file descriptor 2 but a capture (a Textual app's
    has the descriptor -1; a test runner's, none)."""
    try:
        return sys.stderr is None or sys.stderr.fileno() < 0
    except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation is both)
        return True


def _start_resource_tracker() -> None:
    """multiprocessing's resource tracker is a process started with ``sys.stderr``'s descriptor
    among the ones it keeps; -1 makes that fail ("bad value(s) in fds_to_keep"). Started while
    ``sys.stderr`` has none, it inherits descriptor 2 all the same."""
    from multiprocessing import resource_tracker

    captured, sys.stderr = sys.stderr, io.StringIO()
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


def _silence_output() -> None:
    """In a pool process of a program that owns the terminal: nothing written to it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
