"""Detail-pane benchmark: one 50 MB message (one line, or a million short ones) in the TUI.

The app runs headless (``App.run_test``) on a built session whose one tool output is 50 MB.
The message is selected, its token count is awaited, then keys are pressed in the detail pane
(``m`` for more of the message, page down, end, home). Figures:

* **peak RSS** of the process (``VmHWM``) — bound < 1 GB (one such message once made the
  pane grow to 5.1 GB);
* **rows kept** by the pane at most, against its cache (``CACHE_ROWS``);
* **per key**, from the press to the app being idle again (including the measuring the pane does
  after the frame, so an upper bound on what a user waits for) — printed, no bound: wall-clock on
  a shared machine.

Run: ``.venv/bin/python bench/detail.py [--quick]``. Exits 1 when a bound is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.model.session import Session  # noqa: E402
from tests.support.builders import SessionBuilder  # noqa: E402
from tests.support.tui_harness import open_session, quiet_app, settle  # noqa: E402
from tui.widgets.detail import DetailPane  # noqa: E402
from tui.widgets.strip_window import CACHE_ROWS  # noqa: E402

RSS_BOUND_MB = 1024.0
SIZE = (120, 40)
KEYS = ["m"] * 12 + ["pagedown"] * 6 + ["end", "home", "down", "up"]


def status_mb(field: str) -> float:
    """A figure of ``/proc/self/status`` in MB (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def session_with(kind: str, size: int) -> Session:
    if kind == "one line":
        output = "x" * size
    else:
        line = "2026-03-01 10:00:00 build step finished without errors\n"
        output = line * (size // len(line))
    return (
        SessionBuilder()
        .user("show me the build log")
        .tool("bash", output, {"command": "cat build.log"})
        .reply("done", context=6_000)
        .session(window=200_000)
    )


async def run(kind: str, size: int) -> dict[str, float]:
    session = session_with(kind, size)
    app = quiet_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_session(pilot, session)
        screen.select_message(2)
        await settle(pilot)
        pane = screen.query_one(DetailPane)
        pane.focus()
        started = time.perf_counter()
        while pane._slow is None and time.perf_counter() - started < 120:  # the token count
            await pilot.pause(0.1)
        counted_s = time.perf_counter() - started
        held = pane.held_rows
        times: list[float] = []
        for key in KEYS:
            t0 = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            times.append(time.perf_counter() - t0)
            held = max(held, pane.held_rows)
        return {
            "count_s": counted_s,
            "key_median_ms": statistics.median(times) * 1000,
            "key_max_ms": max(times) * 1000,
            "held": held,
            "rss_mb": status_mb("VmRSS"),
            "peak_mb": status_mb("VmHWM"),
        }


def row(name: str, value: str, bound: str, ok: bool | None) -> str:
    verdict = "" if ok is None else ("ok" if ok else "MISSED")
    return f"  {name:<40} {value:>14}   {bound:<18} {verdict}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 MB messages instead of 50 MB")
    args = parser.parse_args()
    size = 5_000_000 if args.quick else 50_000_000
    ok = True
    print(f"detail pane, one message of {size / 1e6:.0f} MB, terminal {SIZE[0]}x{SIZE[1]}")
    for kind in ("one line", "many lines"):
        figures = asyncio.run(run(kind, size))
        peak_ok = figures["peak_mb"] < RSS_BOUND_MB
        held_ok = figures["held"] <= CACHE_ROWS
        ok = ok and peak_ok and held_ok
        print(f"{kind}:")
        print(
            row(
                "peak RSS (VmHWM)",
                f"{figures['peak_mb']:.0f} MB",
                f"< {RSS_BOUND_MB:.0f} MB",
                peak_ok,
            )
        )
        print(
            row(
                "rows kept by the pane, at most",
                f"{figures['held']:,.0f}",
                f"<= {CACHE_ROWS:,}",
                held_ok,
            )
        )
        print(row("token count of the message", f"{figures['count_s']:.1f} s", "", None))
        print(row("key to idle, median", f"{figures['key_median_ms']:.0f} ms", "", None))
        print(row("key to idle, slowest", f"{figures['key_max_ms']:.0f} ms", "", None))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
