"""TUI benchmark: opening a big session, moving through it, changing a limit (the README's bounds).

Everything runs headless (``App.run_test``) on Claude Code files generated deterministically in a
folder (``--keep`` keeps them): many small messages (100 MB ≈ 105,000 messages) and fewer, big
tool outputs, at 100 and 200 MB (``--quick``: 10 MB). Figures, for each size:

* **first screen** — from starting the app on the file to the first frame that shows the session
  (its first part, usable, while the rest is read): bound ≤ 0.5 s (small messages).
* **whole session replayed and painted** — to the first frame showing every message with the
  replay's result, as a ratio to ``load_session`` of the same file alone: bound ≤ 2 ×.
* **peak RSS** — of the process that opened the file (run in a child process of its own, so the
  other measurements do not count): bound ≤ 2.5 × the file.
* **keys** — with the small-message session loaded and replayed, the time from a key press
  (down, page down, end, up, home) to the frame that shows its result: bound p95 ≤ 50 ms.
* **limit change** — on the same session, from a policy change (as the policy panel posts it) to
  the frame that shows the new highlights and gauge: bound p95 ≤ 200 ms over 7 changes.

"A frame" is the compositor update Textual hands to the driver; the benchmark also renders it to
the escape sequences a terminal would receive, so that cost is included. Wall-clock times on a
shared machine include waiting for a core: the load average is printed.

Run: ``.venv/bin/python bench/tui_app.py [--keep DIR] [--quick] [--mb 100 --mb 200]
[--only open|keys|limit]``. Exits 1 when a bound is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import load_session  # noqa: E402
from core.model.session import Usage, replace  # noqa: E402
from core.policy import Policy, get_preset  # noqa: E402
from tests.support.claude_jsonl import ClaudeTranscript  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _tui_phases import Phases, phase_rows  # noqa: E402

FIRST_SCREEN_BOUND_S = 0.5
WHOLE_RATIO_BOUND = 2.0
RSS_RATIO_BOUND = 2.5
KEY_P95_BOUND_MS = 50.0
LIMIT_P95_BOUND_MS = 200.0
SIZE = (120, 34)
KEYS_POLICY = "seed"
"""Policy of the key benchmark (chars/4; the figure is about drawing, not about the replay)."""

# -- a deterministic Claude Code transcript ---------------------------------------------------------

_WORDS = [
    "def",
    "class",
    "return",
    "self",
    "value",
    "result",
    "items",
    "config",
    "session",
    "message",
    "token",
    "window",
    "context",
    "import",
    "from",
    "await",
    "async",
    "for",
    "while",
    "if",
    "else",
    "try",
    "except",
    "raise",
    "yield",
    "lambda",
    "None",
    "True",
    "False",
    "path",
    "file",
    "line",
    "offset",
    "buffer",
    "chunk",
    "parse",
    "load",
    "write",
    "read",
    "open",
    "close",
    "count",
    "total",
    "index",
    "usage",
    "input",
    "output",
    "cache",
    "limit",
    "budget",
    "prune",
    "split",
    "summary",
    "compact",
    "policy",
    "replay",
    "tool",
    "call",
]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _output(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    n = 1
    while total < size:
        line = f"{n:>5}→    {_sentence(rng, 3, 10)}"
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines)


def generate_claude(path: Path, target_bytes: int, *, small: bool, seed: int = 5) -> None:
    """Write about ``target_bytes`` of Claude Code JSONL: turns of prompt, tool call, result, reply.

    ``small``: ~1 KB per message (100 MB ≈ 100,000 messages); otherwise tool outputs of 5-60 KB
    (100 MB ≈ 10,000 messages).
    """
    rng = random.Random(seed)
    transcript = ClaudeTranscript(
        session_id="0b5e7c1a-4d3f-4a8e-9c2b-1f6d8e0a7b35",
        cwd="/home/dev/src/bench",
        version="2.1.39",
        git_branch="main",
    )
    parent: str | None = None
    written = 0
    turn = 0
    with open(path, "wb") as f:
        while written < target_bytes:
            uid = f"{turn:08x}-0000-4000-8000-000000000001"
            call_uid, result_uid, reply_uid = (uid[:-1] + digit for digit in "234")
            stamp = f"2026-03-{1 + turn // 40000:02d}T{(turn // 1500) % 24:02d}:{(turn // 25) % 60:02d}:{turn % 60:02d}.000Z"
            prompt = 20_000 + (turn % 1500) * 110
            user = transcript.user(uid, parent, stamp, f"step {turn}: " + _sentence(rng, 8, 30))
            call_id = f"toolu_{turn:012d}"
            size = rng.randint(300, 1500) if small else rng.randint(5_000, 60_000)
            output = _output(rng, size)
            usage = Usage(
                input=3,
                cache_write=rng.randint(100, 900),
                cache_read=prompt,
                output=rng.randint(20, 400),
            )
            call = transcript.assistant(
                call_uid,
                uid,
                stamp,
                _sentence(rng, 5, 25),
                usage=usage,
                message_id=f"msg_{turn:012d}a",
                request_id=f"req_{turn:012d}a",
                tool_use=(call_id, "Bash", {"command": f"pytest -k {rng.choice(_WORDS)}"}),
            )
            result = transcript.tool_result(
                result_uid, call_uid, stamp, call_id, output, shown=output[:200]
            )
            reply = transcript.assistant(
                reply_uid,
                result_uid,
                stamp,
                _sentence(rng, 10, 60),
                usage=replace(usage, cache_read=prompt + size // 4),
                message_id=f"msg_{turn:012d}b",
                request_id=f"req_{turn:012d}b",
            )
            parent = reply_uid
            for record in (user, call, result, reply):
                line = orjson.dumps(record) + b"\n"
                f.write(line)
                written += len(line)
            turn += 1


# -- measuring frames -------------------------------------------------------------------------------


class FrameClock:
    """Records when the app hands a frame to the driver, and what the frame shows.

    ``probe`` is evaluated at each frame (after it is rendered to the escape sequences a
    terminal would receive), so "the first frame that shows X" is exact, whatever the event
    loop was doing in between.
    """

    def __init__(self, app: Any) -> None:
        self.frames: list[tuple[float, bool]] = []
        self.thread_cpu: list[float] = []
        """The interface thread's CPU time at each frame (``time.thread_time``): what it did,
        apart from waiting for the interpreter or for a core."""
        self.probe: Callable[[], bool] = lambda: False
        self._shown: asyncio.Event | None = None
        original = app._display
        console = app.console

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is not None:
                render = getattr(renderable, "render_segments", None)
                if render is not None:
                    render(console)  # what a terminal would be sent
                shown = self.probe()
                self.frames.append((time.perf_counter(), shown))
                self.thread_cpu.append(time.thread_time())
                if shown and self._shown is not None:
                    self._shown.set()

        app._display = display

    def thread_cpu_at(self, t: float) -> float:
        """The interface thread's CPU time at the frame of time ``t``."""
        for (when, _shown), cpu in zip(self.frames, self.thread_cpu, strict=True):
            if when == t:
                return cpu
        return time.thread_time()

    def first_frame_after(self, t0: float) -> float | None:
        for t, _shown in self.frames:
            if t >= t0:
                return t
        return None

    async def wait_frame_after(
        self, t0: float, condition: Callable[[], bool], timeout: float = 120.0
    ) -> float:
        """The time of the first frame after ``t0`` that shows ``condition``.

        The wait is an event the frame hook sets, not a poll: a polling loop on the UI thread
        would take the interpreter from the loader and replay threads it is timing.
        """
        seen = len(self.frames)
        self._shown = asyncio.Event()
        self.probe = condition
        try:
            await asyncio.wait_for(self._shown.wait(), timeout)
            for t, shown in self.frames[seen:]:
                if t >= t0 and shown:
                    return t
            raise TimeoutError("no frame")
        finally:
            self.probe = lambda: False
            self._shown = None


async def _settle(pilot: Any, ignore: tuple[str, ...] = ("live",)) -> None:
    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        busy = [w for w in app.workers if w.group not in ignore and w.is_running]
        if not busy:
            break
        await app.workers.wait_for_complete(busy)
    await pilot.pause()


async def _replayed(pilot: Any) -> None:
    """Settle until the session screen shows a replay result (on a loaded machine the replay
    may not have started when the loader's worker ends)."""
    from tui.screens.session import SessionScreen

    for _ in range(2000):
        await _settle(pilot)
        screen = pilot.app.screen
        state = getattr(screen, "state", None)
        if (
            isinstance(screen, SessionScreen)
            and state is not None
            and (state.result is not None or state.replay_error is not None)
        ):
            return
        await pilot.pause(0.05)


# -- the three benchmarks ---------------------------------------------------------------------------


def time_load(path: Path, runs: int = 2) -> tuple[float, float, int, float]:
    """(first, best, message count, best CPU time) of ``runs`` loads of ``path`` in this
    process."""
    times = []
    cpu = []
    count = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        c0 = time.process_time()
        session = load_session(path)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        count = len(session.messages)
        del session
    return times[0], min(times), count, min(cpu)


def _vm(field: str) -> int:
    """A field of this process's ``/proc/self/status``, in bytes (0 when unknown)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


async def bench_open(path: Path, messages: int, *, phases: bool = False) -> dict[str, float]:
    """Times of the first frames showing the session's first part, all its ``messages``, and
    all of them with the replay's result; the peak RSS of the process by then. ``phases``: the
    CPU of each thread by step too (:mod:`_tui_phases`)."""
    from tui.app import CtxscopeApp
    from tui.screens.session import SessionScreen

    split = Phases() if phases else None
    if split is not None:
        split.install()

    baseline = _vm("VmRSS")
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    ui_cpu0 = time.thread_time()
    app = CtxscopeApp(str(path), discover=lambda: [], live=False, policy=get_preset(KEYS_POLICY))
    clock = FrameClock(app)
    async with app.run_test(size=SIZE) as pilot:

        def shown() -> bool:
            screen = app.screen
            return (
                isinstance(screen, SessionScreen)
                and screen.state is not None
                and screen.message_list.row_count > 0
            )

        def whole() -> bool:
            screen = app.screen
            return (
                isinstance(screen, SessionScreen)
                and screen.state is not None
                and not screen.partial
                and screen.state.message_count == messages
                and screen.message_list.row_count > 0
            )

        def replayed() -> bool:
            screen = app.screen
            return (
                whole()
                and isinstance(screen, SessionScreen)
                and screen.state is not None
                and screen.state.result is not None
                and not screen.replaying
            )

        t_session = await clock.wait_frame_after(t0, shown)
        t_whole = t_session if whole() else await clock.wait_frame_after(t0, whole)
        t_replayed = t_whole if replayed() else await clock.wait_frame_after(t0, replayed)
        cpu_replayed = time.process_time() - cpu0
        ui_cpu_replayed = clock.thread_cpu_at(t_replayed) - ui_cpu0
        t_first = clock.first_frame_after(t0) or t_session
        screen = app.screen
        load_in_app = screen.load_seconds if isinstance(screen, SessionScreen) else None
        replay_in_app = screen.replay_seconds if isinstance(screen, SessionScreen) else None
        await _settle(pilot)
    peak_rss = float(_vm("VmHWM"))  # (before the read alone below)
    extra: dict[str, float] = {}
    if split is not None:
        split.load_alone(str(path))
        extra = split.figures(clock.frames, clock.thread_cpu_at, ui_cpu0, t_whole, t_replayed)
    return extra | {
        "replay_in_app": replay_in_app or 0.0,
        "cpu_replayed": cpu_replayed,
        "ui_cpu_replayed": ui_cpu_replayed,
        "first_frame": t_first - t0,
        "session_frame": t_session - t0,
        "whole_frame": t_whole - t0,
        "replayed_frame": t_replayed - t0,
        "load_in_app": load_in_app or 0.0,
        "peak_rss": peak_rss,
        "baseline_rss": float(baseline),
    }


def open_in_child(path: Path, messages: int, *, phases: bool = False) -> dict[str, float]:
    """:func:`bench_open` in a process of its own (its peak RSS is the app's alone)."""
    out = subprocess.run(
        [sys.executable, __file__, "--child-open", str(path), str(messages)]
        + (["--phases"] if phases else []),
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = orjson.loads(out.stdout.strip().splitlines()[-1])
    return figures


async def bench_keys(path: Path, presses: int, policy: str) -> dict[str, list[float]]:
    from textual import events

    from tui.app import CtxscopeApp
    from tui.screens.session import SessionScreen

    app = CtxscopeApp(str(path), discover=lambda: [], live=False, policy=get_preset(policy))
    clock = FrameClock(app)
    timings: dict[str, list[float]] = {"down": [], "pagedown": [], "end": [], "up": [], "home": []}
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)  # loaded and replayed
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        assert screen.state.result is not None, screen.state.replay_error
        listing = screen.message_list
        driver = app._driver
        assert driver is not None
        plan: list[str] = []
        for _ in range(presses):
            plan += ["down", "down", "pagedown", "down", "up"]
        plan += ["end", "home"] * max(1, presses // 4)
        for key in plan:
            before = (listing.cursor_row, listing.scroll_y, screen.detail.message_index)
            t0 = time.perf_counter()
            event = events.Key(key, None)
            event.set_sender(app)
            driver.send_message(event)

            def moved(before: tuple[Any, ...] = before) -> bool:
                now = (listing.cursor_row, listing.scroll_y, screen.detail.message_index)
                return now != before and now[2] == listing.selected_message

            t1 = await clock.wait_frame_after(t0, moved)
            timings[key].append((t1 - t0) * 1000)
            await pilot.pause()
        message_count = screen.state.message_count
    timings["_count"] = [float(message_count)]
    return timings


def _limit_changes() -> list[tuple[str, Callable[[Policy], None]]]:
    def lines(n: int) -> Callable[[Policy], None]:
        def change(policy: Policy) -> None:
            policy.truncation.max_lines = n

        return change

    def reserve(n: int) -> Callable[[Policy], None]:
        def change(policy: Policy) -> None:
            policy.compaction.reserve_tokens = n

        return change

    def protect(n: int) -> Callable[[Policy], None]:
        def change(policy: Policy) -> None:
            policy.pruning.protect_turns = n

        return change

    return [
        ("truncation.max_lines 2000 → 200", lines(200)),
        ("truncation.max_lines 200 → 40", lines(40)),
        ("truncation.max_lines 40 → 400", lines(400)),
        ("compaction.reserve_tokens → 40,000", reserve(40_000)),
        ("compaction.reserve_tokens → 10,000", reserve(10_000)),
        ("pruning.protect_turns 2 → 4", protect(4)),
        ("truncation.max_lines 400 → 2000", lines(2000)),
    ]


async def bench_limit(path: Path) -> list[tuple[str, float, int, float]]:
    from tui.app import CtxscopeApp
    from tui.screens.session import SessionScreen
    from tui.widgets.policy_panel import PolicyPanel

    policy = get_preset("seed")
    app = CtxscopeApp(str(path), discover=lambda: [], live=False, policy=policy)
    clock = FrameClock(app)
    rows: list[tuple[str, float, int, float]] = []
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        state = screen.state
        assert state.result is not None, state.replay_error
        for label, change in _limit_changes():
            new = state.policy.model_copy(deep=True)
            change(new)
            t0 = time.perf_counter()
            cpu0 = time.process_time()
            screen.on_policy_panel_changed(PolicyPanel.Changed(new))

            def redrawn(new: Policy = new) -> bool:
                return (
                    state.result is not None and state.result.policy == new and not screen.replaying
                )

            t1 = await clock.wait_frame_after(t0, redrawn)
            cpu = (time.process_time() - cpu0) * 1000  # every thread's, to about the frame
            compactions = state.result.summary.compactions if state.result else 0
            rows.append((label, (t1 - t0) * 1000, compactions, cpu))
            await _settle(pilot)
    return rows


# -- report -----------------------------------------------------------------------------------------


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, round(0.95 * len(ordered)) - 1)
    return ordered[k]


def row(name: str, value: str, bound: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    return f"  {name:<46} {value:>24}   {bound:<14} {verdict}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="generate the files here and keep them")
    parser.add_argument("--quick", action="store_true", help="10 MB files, fewer key presses")
    parser.add_argument(
        "--mb", type=int, action="append", help="file size in MB (repeatable; default 100 and 200)"
    )
    parser.add_argument(
        "--only",
        choices=("open", "keys", "limit"),
        action="append",
        help="run only this part (repeatable; default: all three)",
    )
    parser.add_argument(
        "--phases",
        action="store_true",
        help="under each open, the CPU of each thread by step (diagnostic: the figures stay)",
    )
    parser.add_argument(
        "--child-open", nargs=2, metavar=("PATH", "MESSAGES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child_open:
        figures = asyncio.run(
            bench_open(Path(args.child_open[0]), int(args.child_open[1]), phases=args.phases)
        )
        print(orjson.dumps(figures).decode())
        return 0
    parts = set(args.only or ("open", "keys", "limit"))
    sizes = [10] if args.quick else (args.mb or [100, 200])
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-tui-"))
    folder.mkdir(parents=True, exist_ok=True)
    presses = 8 if args.quick else 30
    ok = True
    lines = _Printer()
    lines.append(f"ctxscope TUI benchmark (cores: {os.cpu_count()}, {_load_average()})")
    lines.append(row("figure", "measured", "bound", None))
    try:
        for mb in sizes:
            small = _generated(folder / f"claude-small-messages-{mb}.jsonl", mb, small=True)
            big = _generated(folder / f"claude-big-outputs-{mb}.jsonl", mb, small=False)
            if "open" in parts:
                for path, label in ((small, "small messages"), (big, "big tool outputs")):
                    ok &= _report_open(
                        lines, path, label, bounded=path is small, phases=args.phases
                    )
            if "keys" in parts:
                ok &= _report_keys(lines, small, presses)
            if "limit" in parts:
                ok &= _report_limit(lines, small)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    lines.append(f"  ({_load_average()} at the end)")
    return 0 if ok else 1


def _load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def _generated(path: Path, mb: int, *, small: bool) -> Path:
    if not path.exists():
        partial = path.with_name(path.name + ".partial")
        generate_claude(partial, mb * 1_000_000, small=small)
        partial.rename(path)
    return path


def _report_open(
    lines: _Printer, path: Path, label: str, *, bounded: bool, phases: bool = False
) -> bool:
    """Open ``path`` in a child process: the first screen, the whole session replayed and
    painted against ``load_session`` alone, the peak RSS. The bounds apply to the small-message
    file; the big-output one is printed beside it."""
    first_load_s, load_s, count, load_cpu = time_load(path)
    opened = open_in_child(path, count, phases=phases)
    size = path.stat().st_size
    session_s = opened["session_frame"]
    replayed_s = opened["replayed_frame"]
    ratio = replayed_s / load_s if load_s else float("inf")
    rss = opened["peak_rss"]
    first_ok = session_s <= FIRST_SCREEN_BOUND_S
    ratio_ok = ratio <= WHOLE_RATIO_BOUND
    rss_ok = rss / size <= RSS_RATIO_BOUND
    lines.append(f"  open {size / 1e6:.0f} MB, {count:,} messages ({label}; {_load_average()})")
    lines.append(
        row(
            "    load_session alone: first, best of 2",
            f"{first_load_s:.2f}, {load_s:.2f} s",
            "",
            None,
        )
    )
    lines.append(
        row("    load_session in the app's worker", f"{opened['load_in_app']:.2f} s", "", None)
    )
    lines.append(
        row("    first frame (progress bar)", f"{opened['first_frame'] * 1000:.0f} ms", "", None)
    )
    lines.append(
        row(
            "    first frame with the session (first screen)",
            f"{session_s:.2f} s",
            f"≤ {FIRST_SCREEN_BOUND_S} s" if bounded else "",
            first_ok if bounded else None,
        )
    )
    lines.append(
        row("    first frame with every message", f"{opened['whole_frame']:.2f} s", "", None)
    )
    lines.append(
        row("    replay in the app's worker", f"{opened['replay_in_app']:.2f} s", "", None)
    )
    lines.append(
        row(
            "    ... replayed and painted / load_session",
            f"{replayed_s:.2f} s = {ratio:.2f} x",
            f"≤ {WHOLE_RATIO_BOUND} x" if bounded else "",
            ratio_ok if bounded else None,
        )
    )
    lines.append(
        row(
            "    ... CPU time to that frame / load_session's",
            f"{opened['cpu_replayed']:.2f} s = {opened['cpu_replayed'] / load_cpu:.2f} x",
            "",
            None,
        )
    )
    lines.append(
        row(
            "    ... of which the interface thread's",
            f"{opened['ui_cpu_replayed']:.2f} s",
            "",
            None,
        )
    )
    lines.append(
        row(
            "    peak RSS of the app",
            f"{rss / 1e6:.0f} MB = {rss / size:.2f} x file",
            f"≤ {RSS_RATIO_BOUND} x file" if bounded else "",
            rss_ok if bounded else None,
        )
    )
    for name, value in phase_rows(opened):
        lines.append(row(f"      {name}", value, "", None))
    return (first_ok and ratio_ok and rss_ok) or not bounded


def _report_keys(lines: _Printer, small: Path, presses: int) -> bool:
    ok = True
    timings = asyncio.run(bench_keys(small, presses, KEYS_POLICY))
    count = int(timings.pop("_count")[0])
    everything = [t for values in timings.values() for t in values]
    lines.append(
        f"  keys with {count:,} messages loaded and replayed under {KEYS_POLICY} "
        f"({len(everything)} presses)"
    )
    for key, values in timings.items():
        if values:
            good = p95(values) < KEY_P95_BOUND_MS
            ok &= good
            lines.append(
                row(
                    f"    {key}: p95 (median {statistics.median(values):.1f} ms, n={len(values)})",
                    f"{p95(values):.1f} ms",
                    f"< {KEY_P95_BOUND_MS:.0f} ms",
                    good,
                )
            )
    good = p95(everything) < KEY_P95_BOUND_MS
    ok &= good
    lines.append(
        row(
            "    all keys: p95",
            f"{p95(everything):.1f} ms",
            f"< {KEY_P95_BOUND_MS:.0f} ms",
            good,
        )
    )

    return ok


def _report_limit(lines: _Printer, path: Path) -> bool:
    results = asyncio.run(bench_limit(path))
    count = len(load_session(path).messages)
    lines.append(f"  limit change on {count:,} messages (policy seed; highlights + gauge redrawn)")
    for label, ms, _compactions, cpu in results:
        lines.append(row(f"    {label}", f"{ms:.0f} ms (CPU {cpu:.0f} ms)", "", None))
    worst = p95([ms for _, ms, _, _ in results])
    lines.append(
        row("    p95 of the CPU times", f"{p95([r[3] for r in results]):.0f} ms", "", None)
    )
    good = worst <= LIMIT_P95_BOUND_MS
    lines.append(row("    p95", f"{worst:.0f} ms", f"≤ {LIMIT_P95_BOUND_MS:.0f} ms", good))
    return good


class _Printer:
    """Prints each row as soon as it is measured (a long run shows its progress)."""

    def append(self, line: str) -> None:
        print(line, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
