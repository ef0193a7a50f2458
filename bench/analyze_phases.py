"""Where ``analyze --json`` and ``breakdown --json`` spend their CPU: one figure per step.

``bench/analyze.py`` and ``bench/breakdown.py`` say whether the commands meet issue 24's bounds;
this script says which step misses and by how much. Each run is a fresh process of the command
itself, as the console script runs it, with a clock on its steps (``bench/_phase_clock.py``: the
command's own functions wrapped where its module calls them), and each step's CPU time (user +
system) is read as it ends:

* start     — the interpreter's start, up to the clock's first line;
* imports   — ``tui.cli.main`` and ``_import_command``: the command's modules, with the garbage
              collector paused and the code cache as the command has them;
* args      — click's parsing of the arguments, up to the command's first step;
* load      — ``load_or_fail``: the session read and its window and policy resolved;
* cost      — (analyze) the command's ``priced``, before its replay; (breakdown)
              ``session_cost_rows`` after the breakdown, as the command runs them;
* replay    — (analyze) the command's ``replayed``: the policy's replay (mock summaries offline);
* report    — (analyze) the command's ``diagnosed``: the diagnosis and the report (sub-agents
              included);
* breakdown — (breakdown) ``breakdown_rows`` with the command's default estimator;
* json      — the command's JSON bytes and their write to ``/dev/null``;
* exit      — the rest, from the process's whole CPU time (``wait4``): the command's return,
              the output's flush, the code cache's write, the exit.

The figures are those of the run of least CPU of ``--runs`` processes, so that they add up to
that run's CPU, the figure ``bench/analyze.py`` takes for the whole command (each step's best
over the runs, as this script took before, added up to less than any run: on a busy machine a
step's best and another's come from different runs). They are shown in seconds and as a multiple
of the floor (the bare ``orjson.loads`` loop of ``bench/analyze.py``, best of three, in this
process); the line ends with their sum against the command's bound for the shape (``analyze``:
3 × the floor with big outputs, 5 × with many small messages; ``breakdown``: 5 ×) and how far
above or below it the sum is. With ``--callgrind``, one more run under valgrind's callgrind
(``PYTHONHASHSEED=0``) gives each step's instructions, which this machine's load does not move.

Run: ``.venv/bin/python bench/analyze_phases.py [FILE ...] [--runs 3] [--mb 100] [--keep DIR]
[--command analyze|breakdown] [--shape small|big] [--callgrind]`` (``--shape``: the bound of
given files); without files it measures the four shapes ``bench/analyze.py`` generates, as
``make bench`` runs it. Prints figures only: a missed bound is ``bench/analyze.py``'s to report.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
from _phase_clock import HOOKS, LAST_STEP, steps

ROOT = Path(__file__).resolve().parents[1]

CLOCK = ROOT / "bench" / "_phase_clock.py"
"""The measured process: the command as the console script runs it, with a clock on its steps."""

COMMANDS = tuple(HOOKS)
"""The commands measured (each command's steps: :func:`_phase_clock.steps`)."""


def measured(path: Path, command: str) -> dict[str, float]:
    """Each step's CPU seconds in one fresh ``COMMAND --json PATH`` process (output thrown
    away, as ``bench/analyze.py`` runs it); they add up to the process's CPU time (``wait4``)."""
    from analyze import _environment as environment

    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(CLOCK), command, "--json", str(path)],
            stdout=sink,
            stderr=subprocess.PIPE,
            env=environment(),
            cwd=ROOT,
        )
        errors = proc.stderr.read() if proc.stderr else b""
        _pid, status, usage = os.wait4(proc.pid, 0)
    if proc.stderr:
        proc.stderr.close()
    lines = errors.splitlines()
    if os.waitstatus_to_exitcode(status) not in (0, 1) or not lines:
        raise RuntimeError(f"the measured run of {path.name} failed: {errors.decode()[-400:]}")
    figures: dict[str, float] = orjson.loads(lines[-1])
    figures[LAST_STEP] = usage.ru_utime + usage.ru_stime - sum(figures.values())
    return figures


def instructions(path: Path, command: str) -> dict[str, int]:
    """Each step's instructions in one ``COMMAND --json PATH`` process under callgrind (string
    hashing fixed, as ``PYTHONHASHSEED=0``): a profile part per step, the clock's reading of
    ``time.process_time`` ending each."""
    from analyze import _environment as environment

    folder = Path(tempfile.mkdtemp(prefix="ctxscope-bench-callgrind-"))
    env = {**environment(), "PYTHONHASHSEED": "0"}
    clocked = [sys.executable, str(CLOCK), command, "--json", str(path)]
    try:  # (a run first with the same string hashing: the code cache holds what it compiles)
        subprocess.run(clocked, capture_output=True, env=env, cwd=ROOT, check=False)
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--dump-before=time_process_time",
                f"--callgrind-out-file={folder / 'cg.out'}",
                *clocked,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=ROOT,
            check=False,
        )
        parts = sorted(folder.glob("cg.out.*"), key=lambda part: int(part.suffix[1:]))
        counts = [_summary(part) for part in [*parts, folder / "cg.out"]]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    names = steps(command)
    if len(counts) != len(names):
        raise RuntimeError(f"{len(counts)} profile parts for the {len(names)} steps {names}")
    return dict(zip(names, counts, strict=True))


def _summary(part: Path) -> int:
    """The instruction count of one callgrind profile part (its ``summary:`` line)."""
    with open(part, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"{part} holds no summary line")


def line_of(path: Path, shape: str, command: str, runs: int, *, counted: bool = False) -> str:
    """One file's figures: the steps of the run of least CPU (they add up to that run's whole
    CPU), × the floor, and their sum against the bound; with ``counted``, each step's
    instructions too (:func:`instructions`)."""
    from analyze import FLOOR_RATIO_BOUND, SMALL_FLOOR_RATIO_BOUND, floor
    from breakdown import FLOOR_RATIO_BOUND as BREAKDOWN_BOUND

    floor_cpu = min(floor(path)[1] for _ in range(3))
    runs_made = sorted((measured(path, command) for _ in range(runs)), key=_whole)
    best = runs_made[0]
    total = _whole(best)
    if command == "breakdown":
        bound = BREAKDOWN_BOUND
    else:
        bound = SMALL_FLOOR_RATIO_BOUND if shape == "small" else FLOOR_RATIO_BOUND
    allowed = bound * floor_cpu
    parts = ", ".join(
        f"{name} {value:.3f} ({value / floor_cpu:.1f}×)" for name, value in best.items()
    )
    over = total - allowed
    verdict = f"{over:.3f} s above" if over > 0 else f"{-over:.3f} s below"
    others = ", ".join(f"{_whole(run):.3f}" for run in runs_made[1:])
    lines = [
        f"{command} --json {path.name} ({shape}, {path.stat().st_size / 1e6:.0f} MB; "
        f"floor {floor_cpu:.3f} s CPU):",
        f"    {parts}",
        f"    sum {total:.3f} s = {total / floor_cpu:.1f}× the floor (the run of least CPU of "
        f"{runs}{'; the others ' + others + ' s' if others else ''}); bound {bound:g}× = "
        f"{allowed:.3f} s: {verdict}",
    ]
    if counted:
        counts = instructions(path, command)
        each = ", ".join(f"{name} {count / 1e6:,.1f}" for name, count in counts.items())
        lines.append(f"    instructions (M): {each}; sum {sum(counts.values()) / 1e6:,.1f}")
    return "\n".join(lines)


def _whole(figures: dict[str, float]) -> float:
    """A run's whole CPU: the sum of its steps."""
    return sum(figures.values())


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
        choices=COMMANDS,
        action="append",
        help="the command to measure (default: both)",
    )
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="each step's instructions too (one more run under valgrind's callgrind)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from analyze import SHAPES, generated, load_average, private_cache

    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-analyze-phases-"))
    folder.mkdir(parents=True, exist_ok=True)
    private_cache(folder)
    try:
        commands = args.command or list(COMMANDS)
        print(f"CPU seconds per step, the run of least CPU of {args.runs} ({load_average()})")
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
                print(line_of(path, shape, command, args.runs, counted=args.callgrind), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
