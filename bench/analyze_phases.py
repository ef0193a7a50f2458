"""Where ``analyze --json`` and ``breakdown --json`` spend their CPU: one figure per step.

``bench/analyze.py`` and ``bench/breakdown.py`` say whether the commands meet issue 24's bounds;
this script says which step misses and by how much. Each run is a fresh process that does what
the command does, in its order, with the command's own functions, and times each step (CPU,
user + system):

* imports   — the command's modules (``tui.cli.main`` and ``_import_command``, with the garbage
              collector paused and the code cache as the command has them);
* load      — ``load_or_fail``: the session read and its window and policy resolved;
* cost      — ``session_cost`` (analyze: the command's ``priced``, before its replay; breakdown:
              ``session_cost_rows`` after the breakdown, as the command runs them);
* replay    — (analyze) the command's ``replayed``: the policy's replay (mock summaries offline);
* report    — (analyze) the command's ``diagnosed``: the diagnosis and the report (sub-agents
              included);
* breakdown — (breakdown) ``breakdown_rows`` with the command's default estimator;
* json      — the command's JSON bytes and their write to ``/dev/null``;
* rest      — the process's CPU outside those steps (interpreter start, this script's argument
              parsing, exit).

Each step's figure is its least CPU over ``--runs`` processes (a step's best run, so the steps'
sum may be below the best whole run), shown in seconds and as a multiple of the floor (the
bare ``orjson.loads`` loop of ``bench/analyze.py``, best of three, in this process). The line
ends with the steps' sum against the command's bound for the shape (``analyze``: 3 × the floor
with big outputs, 5 × with many small messages; ``breakdown``: 5 ×) and how far above or below
it the sum is.

Run: ``.venv/bin/python bench/analyze_phases.py [FILE ...] [--runs 3] [--mb 100] [--keep DIR]
[--command analyze|breakdown] [--shape small|big]`` (``--shape``: the bound of given files);
without files it measures the four shapes ``bench/analyze.py`` generates, as ``make bench``
runs it. Prints figures only: a missed bound is ``bench/analyze.py``'s to report.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]

STEPS = {
    "analyze": ("imports", "load", "cost", "replay", "report", "json"),
    "breakdown": ("imports", "load", "breakdown", "cost", "json"),
}
"""The steps timed for each command, in its order."""


class Clock:
    """CPU seconds (user + system) of consecutive steps: each :meth:`lap` ends one."""

    def __init__(self) -> None:
        self.figures: dict[str, float] = {}
        self._start = time.process_time()

    def lap(self, name: str) -> None:
        now = time.process_time()
        self.figures[name] = now - self._start
        self._start = now


def one_run(path: Path, command: str) -> dict[str, float]:
    """The CPU seconds of each step of ``COMMAND --json PATH`` in this process (a fresh one)."""
    clock = Clock()
    sys.argv = ["ctxscope", command, "--json", str(path)]
    sys.path.insert(0, str(ROOT))
    from tui.cli.main import _import_command

    _import_command(command)
    from tui.cli.commands._session import load_or_fail

    if command == "analyze":
        _analyze(path, clock, load_or_fail)
    else:
        _breakdown(path, clock, load_or_fail)
    return clock.figures


def _analyze(path: Path, clock: Clock, load_or_fail: Callable[..., Any]) -> None:
    from core.insights.diagnosis import MARGIN
    from tui.cli.commands.analyze import diagnosed, priced, replayed, write_json

    clock.lap("imports")
    session, policy = load_or_fail("analyze", str(path), window=None, policy_spec=None)
    clock.lap("load")
    cost = priced(session)
    clock.lap("cost")
    result = replayed(session, policy)
    clock.lap("replay")
    _diagnosis, report = diagnosed(session, result, MARGIN, cost)
    clock.lap("report")
    stdout = sys.stdout
    with open(os.devnull, "w") as sys.stdout:
        try:
            write_json(report)
        finally:
            sys.stdout = stdout
    clock.lap("json")


def _breakdown(path: Path, clock: Clock, load_or_fail: Callable[..., Any]) -> None:
    from core.gc_pause import gc_paused
    from core.insights.breakdown import breakdown_rows
    from core.insights.cost import session_cost_rows
    from core.model.tokens import DEFAULT_ESTIMATOR
    from tui.cli.commands.breakdown import keep_until_exit, report_json

    clock.lap("imports")
    session, _policy = load_or_fail("breakdown", str(path), window=None, policy_spec=None)
    clock.lap("load")
    result, rows = breakdown_rows(session, estimator=DEFAULT_ESTIMATOR)
    clock.lap("breakdown")
    with gc_paused():
        cost, per_call, other_calls = session_cost_rows(session)
    clock.lap("cost")
    with open(os.devnull, "wb") as sink:
        sink.write(report_json(result, cost, (rows, per_call, other_calls)))
        sink.write(b"\n")
    keep_until_exit(session, rows, per_call)  # (as the command: its heap is not torn down)
    clock.lap("json")


def measured(path: Path, command: str) -> tuple[dict[str, float], float]:
    """Each step's CPU seconds in a fresh process, and that process's whole CPU time."""
    from analyze import _environment as environment

    proc = subprocess.Popen(
        [sys.executable, __file__, "--one", str(path), "--command", command],
        stdout=subprocess.PIPE,
        env=environment(),
        cwd=ROOT,
    )
    out = proc.stdout.read() if proc.stdout else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the measured run of {path.name} failed")
    return orjson.loads(out), usage.ru_utime + usage.ru_stime


def line_of(path: Path, shape: str, command: str, runs: int) -> str:
    """One file's figures: each step's best CPU, × the floor, and the sum against the bound."""
    from analyze import FLOOR_RATIO_BOUND, SMALL_FLOOR_RATIO_BOUND, floor
    from breakdown import FLOOR_RATIO_BOUND as BREAKDOWN_BOUND

    floor_cpu = min(floor(path)[1] for _ in range(3))
    best = dict.fromkeys((*STEPS[command], "rest"), float("inf"))
    for _ in range(runs):
        steps, whole = measured(path, command)
        for name in STEPS[command]:
            best[name] = min(best[name], steps[name])
        best["rest"] = min(best["rest"], whole - sum(steps.values()))
    total = sum(best.values())
    if command == "breakdown":
        bound = BREAKDOWN_BOUND
    else:
        bound = SMALL_FLOOR_RATIO_BOUND if shape == "small" else FLOOR_RATIO_BOUND
    allowed = bound * floor_cpu
    parts = ", ".join(f"{name} {best[name]:.3f} ({best[name] / floor_cpu:.1f}×)" for name in best)
    over = total - allowed
    verdict = f"{over:.3f} s above" if over > 0 else f"{-over:.3f} s below"
    return (
        f"{command} --json {path.name} ({shape}, {path.stat().st_size / 1e6:.0f} MB; "
        f"floor {floor_cpu:.3f} s CPU):\n"
        f"    {parts}\n"
        f"    sum {total:.3f} s = {total / floor_cpu:.1f}× the floor; bound {bound:g}× = "
        f"{allowed:.3f} s: {verdict}"
    )


def shape_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments of a script that measures given files or the generated shapes (this one,
    ``bench/load_phases.py``): files, ``--runs``, ``--mb``, ``--keep``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("files", nargs="*", type=Path, help="default: the generated shapes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=int, default=100, help="size of the generated files")
    parser.add_argument("--keep", type=Path, help="generate the files here and keep them")
    return parser


def main() -> int:
    parser = shape_arguments(__doc__.splitlines()[0])
    parser.add_argument(
        "--shape",
        choices=("small", "big"),
        default="small",
        help="the bound of the given files' shape",
    )
    parser.add_argument(
        "--command",
        choices=tuple(STEPS),
        action="append",
        help="the command to measure (default: both)",
    )
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:  # (a measured run: nothing of the bench imported before it)
        sys.stdout.buffer.write(orjson.dumps(one_run(args.one, args.command[0])))
        sys.stdout.flush()
        os._exit(0)  # (as the command ends: without tearing its heap down)
    sys.path.insert(0, str(ROOT / "bench"))
    from analyze import SHAPES, generated, load_average, private_cache

    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-analyze-phases-"))
    folder.mkdir(parents=True, exist_ok=True)
    private_cache(folder)
    try:
        commands = args.command or list(STEPS)
        print(f"CPU seconds per step, best of {args.runs} ({load_average()})")
        if args.files:
            files = [(path, args.shape) for path in args.files]
        else:
            files = [
                (generated(folder, name, args.mb, make), shape)
                for (_fmt, shape), (name, make) in SHAPES.items()
            ]
        for path, shape in files:
            for command in commands:
                measured(path, command)  # (the warm-up: bytecode and the price memo written)
                print(line_of(path, shape, command, args.runs), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
