"""Fleet benchmark: ``ctxscope fleet`` over 200 sessions, in one process, in two, and cached.

Generates (deterministically, in a temporary folder) 200 sessions of the four agents — Claude
Code, Codex, pi (JSON Lines) and opencode (exports) — from 100 KB to 20 MB, their sizes spread
evenly on a log scale (about 750 MB in all). The sample sessions' writers render, for each agent,
two long days of small requests with their own compactions and usage (``sample_sessions/``);
each benchmark session is a prefix of one of them cut at the size it should have (a whole
number of lines; for an opencode export, of messages), so it is a session as the agent had
written it so far.

Then it runs the command as a user does, ``ctxscope fleet DIR --json`` in a fresh process with
its output thrown away, and measures the wall time of:

* ``--jobs 1 --no-cache`` — every session analysed in one process: bound, at least
  :data:`SERIAL_BOUND_MB_S` MB/s (the sessions' bytes over the wall time; the same over the
  CPU time is printed beside it);
* ``--jobs 2`` with an empty cache — bound: at most 0.6 × the first;
* the same again, every row now in the cache — bound: at most 5 % of the one before.

Then, in one more fresh process, each step of a row (:func:`core.fleet.survey.analyse`'s own
functions: ``load_session``, ``native_replay``, ``row_cost``, ``session_figures``) is timed in CPU
seconds over every session, per agent, beside a bare ``orjson`` parse of the same files (the
floor): which step keeps ``--jobs 1`` under its bound, and by how much (issue 24, item 6).

The first two are run twice, alternately, and the better of each pair counts (the machine is
shared; a run that another job slowed says nothing about ours). Each run's CPU time (the command
and its pool processes) is printed beside its wall time, with the load average: when other jobs
hold the cores, the wall time of ``--jobs 2`` cannot halve however little the work costs. Run: ``.venv/bin/python bench/fleet.py [--sessions 200] [--keep DIR] [--steps-only]``
(``--steps-only``: the steps alone, no ``ctxscope fleet`` run); exits 1 when a bound is missed.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import itertools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sample_sessions"))
sys.path.insert(1, str(ROOT))

import _claude as C  # noqa: E402
import _codex as X  # noqa: E402
import _opencode as O  # noqa: E402
import _pi as PI  # noqa: E402
import _project as P  # noqa: E402
import _scenarios as S  # noqa: E402
import generate as G  # noqa: E402

SMALLEST = 100_000
LARGEST = 20_000_000
SERIAL_BOUND_MB_S = 100.0
"""``--jobs 1 --no-cache``: megabytes (10^6 bytes) of sessions analysed per second, at least."""
PARALLEL_BOUND = 0.6
CACHED_BOUND = 0.05
PROMPTS = {"claude-code": 1_700, "codex": 1_700, "pi": 2_600, "opencode": 1_500}
"""User requests in each agent's long sessions, which the benchmark sessions are cut from: enough
for over 20 MB."""
AGENTS = ("claude-code", "codex", "pi", "opencode")


def _clock(seed: int) -> tuple[random.Random, P.Clock]:
    rng = random.Random(seed)
    return rng, P.Clock(rng, G.epoch_ms("2026-03-16T07:58:41Z") + seed * 86_400_000)


def _jsonl(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def long_claude(seed: int) -> bytes:
    rng, clock = _clock(seed)
    writer = C.ClaudeWriter(rng, clock, session_id=C.new_uuid(rng), branch="main", slug=None)
    writer.render(S.long_session(seed, PROMPTS["claude-code"]).events)
    return _jsonl(writer.lines)


def long_codex(seed: int) -> bytes:
    rng, clock = _clock(seed)
    writer = X.CodexWriter(rng, clock, session_id=X.uuid7(clock.ms, rng), summary=S.CODEX_SUMMARY)
    writer.render(S.long_session(seed, PROMPTS["codex"]).events)
    return _jsonl(writer.lines)


def long_pi(seed: int) -> bytes:
    rng, clock = _clock(seed)
    writer = PI.PiWriter(rng, clock, session_id=C.new_uuid(rng), summary=S.PI_SUMMARY)
    writer.start()
    writer.render(S.long_session(seed, PROMPTS["pi"]).events)
    return _jsonl(writer.lines)


def long_opencode(seed: int) -> O.OpencodeWriter:
    rng, clock = _clock(seed)
    writer = O.OpencodeWriter(rng, clock, title="A long day", summary=S.OPENCODE_SUMMARY)
    writer.render(S.long_session(seed, PROMPTS["opencode"]).events)
    return writer


def line_prefix(data: bytes, size: int) -> bytes:
    """The whole lines of ``data`` that fit in ``size`` bytes (at least the first two)."""
    cut = data.rfind(b"\n", 0, size)
    second = data.find(b"\n", data.find(b"\n") + 1)
    return data[: max(cut, second) + 1]


class OpencodeCutter:
    """Exports of the first messages of a long opencode session, of a given size."""

    def __init__(self, writer: O.OpencodeWriter) -> None:
        self.info = writer.info()
        self.messages = writer.messages
        self.ends = list(itertools.accumulate(len(O.dumps_pretty(m)) for m in self.messages))
        whole = len(O.dumps_pretty({"info": self.info, "messages": self.messages}))
        self.scale = whole / self.ends[-1]  # nested one level deeper, each line is indented more

    def __call__(self, size: int) -> bytes:
        keep = max(2, bisect.bisect_right(self.ends, size / self.scale))
        return (
            O.dumps_pretty({"info": self.info, "messages": self.messages[:keep]}) + "\n"
        ).encode()


def sizes(count: int) -> list[int]:
    """``count`` sizes from SMALLEST to LARGEST, evenly spread on a log scale."""
    ratio = LARGEST / SMALLEST
    return [round(SMALLEST * ratio ** (i / max(count - 1, 1))) for i in range(count)]


def generate(folder: Path, count: int) -> tuple[int, dict[str, int]]:
    """Write the benchmark sessions into ``folder``; their total bytes and count per agent."""
    folder.mkdir(parents=True, exist_ok=True)
    cutters: dict[str, list[Callable[[int], bytes]]] = {}
    for agent in AGENTS:
        cutters[agent] = []
        for seed in (1, 2):
            started = time.perf_counter()
            cutter: Callable[[int], bytes]
            if agent == "opencode":
                cutter = OpencodeCutter(long_opencode(seed))
            else:
                data = {"claude-code": long_claude, "codex": long_codex, "pi": long_pi}[agent](seed)
                cutter = functools.partial(line_prefix, data)
            cutters[agent].append(cutter)
            longest = len(cutter(10**10))
            print(
                f"  rendered a long {agent} session ({longest / 1e6:.1f} MB) in "
                f"{time.perf_counter() - started:.1f} s"
            )
    order = random.Random(17)
    total = 0
    per_agent = dict.fromkeys(AGENTS, 0)
    for index, size in enumerate(sizes(count)):
        agent = AGENTS[index % len(AGENTS)]
        cut = cutters[agent][order.randrange(2)]
        data = cut(size)
        suffix = ".json" if agent == "opencode" else ".jsonl"
        (folder / agent).mkdir(exist_ok=True)
        (folder / agent / f"session-{index:03d}{suffix}").write_bytes(data)
        total += len(data)
        per_agent[agent] += 1
    return total, per_agent


class Run(NamedTuple):
    """One run of the command."""

    seconds: float
    """Wall time."""
    cpu_seconds: float
    """CPU time of the command and its pool processes (user + system), sampled from /proc."""
    report: dict[str, Any]
    """What ``--json`` printed."""


def fleet_run(folder: Path, cache: Path, *args: str) -> Run:
    """``ctxscope fleet FOLDER --json ARGS`` in a fresh process."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, "-m", "tui", "fleet", str(folder), "--json", *args]
    cpu: dict[int, float] = {}
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output)
        while process.poll() is None:
            _sample_cpu(process.pid, cpu)
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        if process.returncode != 0:
            raise subprocess.CalledProcessError(process.returncode, command)
        output.seek(0)
        report = json.loads(output.read())
    return Run(seconds, sum(cpu.values()), report)


def _sample_cpu(root: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds of ``root`` and of every process below it, as /proc shows them
    now (the pool's processes are the forkserver's children, which no rusage of ours counts)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = (int(fields[11]) + int(fields[12])) / tick
    for pid, spent in times.items():
        ancestor = pid
        while ancestor not in (root, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == root:
            seen[pid] = max(seen.get(pid, 0.0), spent)


def _load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200, help="how many sessions")
    parser.add_argument("--keep", type=Path, help="generate the sessions here and keep them")
    parser.add_argument(
        "--steps-only", action="store_true", help="time the steps of a row, not the command"
    )
    parser.add_argument("--steps-of", type=Path, help=argparse.SUPPRESS)  # (the measured process)
    args = parser.parse_args()
    if args.steps_of is not None:
        print(json.dumps(step_seconds(args.steps_of)))
        return 0
    work = Path(tempfile.mkdtemp(prefix="ctxscope-fleet-bench-"))
    folder = args.keep or work / "sessions"
    try:
        if not folder.exists() or not any(folder.rglob("session-*")):
            started = time.perf_counter()
            total, per_agent = generate(folder, args.sessions)
            print(
                f"generated {args.sessions} sessions ({per_agent}), {total / 1e6:.0f} MB, "
                f"in {time.perf_counter() - started:.0f} s"
            )
        files = sorted(p for p in folder.rglob("session-*") if p.is_file())
        sizes_mb = [p.stat().st_size / 1e6 for p in files]
        print(
            f"{len(files)} sessions, {sum(sizes_mb):.0f} MB, from {min(sizes_mb):.2f} to "
            f"{max(sizes_mb):.1f} MB; cores {os.cpu_count()}; load average {_load()}"
        )
        if args.steps_only:
            print(steps_report(folder, sum(sizes_mb)))
            return 0
        serial, parallel, cached = measure(folder, work)
        print(f"load average after: {_load()}")
        steps = steps_report(folder, sum(sizes_mb))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    status = report(serial, parallel, cached, sum(sizes_mb))
    print(steps)
    return status


def measure(folder: Path, work: Path) -> tuple[Run, float, float]:
    serial: list[Run] = []
    parallel: list[float] = []
    cached = math.inf
    for attempt in range(2):
        one = fleet_run(folder, work / f"unused-{attempt}", "--jobs", "1", "--no-cache")
        serial.append(one)
        _show("--jobs 1 --no-cache", one, "analysed")
        cache = work / f"cache-{attempt}"
        two = fleet_run(folder, cache, "--jobs", "2")
        parallel.append(two.seconds)
        _show("--jobs 2, empty cache", two, "analysed")
        again = fleet_run(folder, cache, "--jobs", "2")
        _show("--jobs 2, cached", again, "cached")
        cached = min(cached, again.seconds)
        errors = [row["path"] for row in two.report["rows"] if row.get("error")]
        assert not errors, f"sessions that failed: {errors[:3]}"
    return min(serial, key=lambda run: run.seconds), min(parallel), cached


def _show(name: str, run: Run, counted: str) -> None:
    print(
        f"  {name}: {run.seconds:.2f} s wall, {run.cpu_seconds:.1f} s CPU "
        f"({run.report[counted]} {counted.replace('cached', 'from the cache')}); "
        f"load average {_load()}"
    )


def report(serial_run: Run, parallel: float, cached: float, megabytes: float) -> int:
    serial = serial_run.seconds
    rate = megabytes / serial
    rate_cpu = megabytes / serial_run.cpu_seconds if serial_run.cpu_seconds else math.inf
    rows = [
        (
            "--jobs 1 (no cache)",
            f"{serial:.1f} s = {rate:.0f} MB/s (CPU: {rate_cpu:.0f})",
            f"≥ {SERIAL_BOUND_MB_S:.0f} MB/s",
            rate >= SERIAL_BOUND_MB_S,
        ),
        (
            "--jobs 2 ÷ --jobs 1",
            f"{parallel:.1f} s = {parallel / serial:.2f}×",
            f"≤ {PARALLEL_BOUND}×",
            parallel / serial <= PARALLEL_BOUND,
        ),
        (
            "second run, cached ÷ first",
            f"{cached:.2f} s = {cached / parallel:.1%}",
            f"≤ {CACHED_BOUND:.0%}",
            cached / parallel <= CACHED_BOUND,
        ),
    ]
    print(f"\n{'figure':<28} {'measured':<34} {'bound':<12} ok")
    for name, measured, bound, ok in rows:
        print(f"{name:<28} {measured:<34} {bound:<12} {'yes' if ok else 'NO'}")
    return 0 if all(ok for *_, ok in rows) else 1


STEPS = ("floor", "load", "replay", "cost", "figures")
"""The floor (a bare parse of the file), then a row's steps in :func:`core.fleet.survey.analyse`'s
order."""


def step_seconds(folder: Path) -> dict[str, dict[str, float]]:
    """CPU seconds of each step, summed per agent over the sessions in ``folder`` (in this
    process: run it in a fresh one), with the collector paused as the fleet's worker has it."""
    import orjson
    from _phase_clock import Clock

    from core.fleet.session_rows import session_figures
    from core.fleet.survey import native_replay, row_cost
    from core.formats import load_session
    from core.gc_pause import gc_paused

    totals = {agent: dict.fromkeys(("files", "megabytes", *STEPS), 0.0) for agent in AGENTS}
    for path in sorted(p for p in folder.rglob("session-*") if p.is_file()):
        clock = Clock()
        data = path.read_bytes()
        if path.suffix == ".json":
            orjson.loads(data)
        else:
            for line in data.splitlines():
                if line.strip():
                    orjson.loads(line)
        del data
        clock.lap("floor")
        with gc_paused(freeze=False):
            session = load_session(str(path))
            clock.lap("load")
            result, inferred = native_replay(session)
            clock.lap("replay")
            cost = row_cost(session)
            clock.lap("cost")
            session_figures(str(path), session, result, inferred, cost)
            clock.lap("figures")
            del session, result, inferred, cost
        figures = totals[path.parent.name]
        for step, spent in clock.figures.items():
            figures[step] += spent
        figures["files"] += 1
        figures["megabytes"] += path.stat().st_size / 1e6
    return totals


def steps_report(folder: Path, megabytes: float) -> str:
    """Each step's CPU per agent and in all, against the time ``--jobs 1``'s bound allows."""
    done = subprocess.run(
        [sys.executable, __file__, "--steps-of", str(folder)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    totals: dict[str, dict[str, float]] = json.loads(done.stdout)
    totals["all"] = {
        key: sum(figures[key] for figures in totals.values())
        for key in ("files", "megabytes", *STEPS)
    }
    lines = [
        f"\nCPU seconds of each step of a row, summed over the sessions (one process; load "
        f"average {_load()}):",
        f"{'agent':<12} {'files':>5} {'MB':>6} "
        + " ".join(f"{step:>8}" for step in STEPS)
        + f" {'steps':>8} {'MB/s':>6}",
    ]
    for agent, figures in totals.items():
        spent = sum(figures[step] for step in STEPS[1:])
        rate = figures["megabytes"] / spent if spent else math.inf
        lines.append(
            f"{agent:<12} {figures['files']:>5.0f} {figures['megabytes']:>6.0f} "
            + " ".join(f"{figures[step]:>8.2f}" for step in STEPS)
            + f" {spent:>8.2f} {rate:>6.0f}"
        )
    every = totals["all"]
    spent = sum(every[step] for step in STEPS[1:])
    allowed = megabytes / SERIAL_BOUND_MB_S
    lines.append(
        f"the bound ({SERIAL_BOUND_MB_S:.0f} MB/s) allows {allowed:.2f} s for {megabytes:.0f} MB; "
        f"the steps take {spent:.2f} s ({spent - allowed:+.2f} s), the load alone "
        f"{every['load']:.2f} s = {every['load'] / every['floor']:.1f} × the floor "
        f"({every['floor']:.2f} s)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
