"""Screenshots of the main screens: ``make screenshots`` (``python -m tui.screenshots``).

Drives the real app with Textual's Pilot at a fixed size on the committed sample sessions and
writes an SVG of each screen to ``screenshots/``, plus a PNG when ``rsvg-convert`` is installed
(``apt-get install librsvg2-bin fonts-firacode``; without it the PNGs are skipped with a note).

The pictures are deterministic: fixed sample files, a fixed list of "discovered" sessions with
fixed times, no live tail, the mock LLM, cursor blink off, notifications cleared, and the one
wall-clock figure (how long a compaction took) hidden.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from core.discovery import DiscoveredSession
from core.models import SourceFormat
from core.policy import get_preset
from tui.app import CtxscopeApp

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_sessions"
OUT = REPO / "screenshots"
SIZE = (120, 36)
"""Terminal size of every screenshot (columns, rows)."""
FIXED_TIME = 1_773_480_000.0
"""2026-03-14: the picker's dates never change."""
ENDLESS_GROUPS = frozenset({"live"})

OVERFLOW = SAMPLES / "claude-code" / "overflow.jsonl"
COMPACTED = SAMPLES / "claude-code" / "compacted.jsonl"

_PICKER_ROWS = (
    ("claude-code/overflow.jsonl", SourceFormat.CLAUDE_CODE, "CI has been red on and off…"),
    ("claude-code/compacted.jsonl", SourceFormat.CLAUDE_CODE, "per-app delivery cache"),
    ("claude-code/long.jsonl", SourceFormat.CLAUDE_CODE, "a long day of small requests"),
    (
        "codex/rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl",
        SourceFormat.CODEX,
        "add filters to the orders API",
    ),
    ("pi/session.jsonl", SourceFormat.PI, "config refactor"),
    ("opencode/export.json", SourceFormat.OPENCODE, 'fix "Invalid Date" in the dashboard'),
    ("ctxscope/long.jsonl", SourceFormat.CTXSCOPE, "6,000 messages"),
)


def discovered_samples() -> list[DiscoveredSession]:
    """The committed samples as the picker would list them (fixed times, newest first)."""
    found = []
    for k, (relative, fmt, title) in enumerate(_PICKER_ROWS):
        path = SAMPLES / relative
        if path.exists():
            found.append(
                DiscoveredSession(
                    path=str(path),
                    format=fmt,
                    project="/home/dev/src/parcelhub",
                    modified=FIXED_TIME - k * 5400,
                    size_bytes=path.stat().st_size,
                    title=title,
                )
            )
    return found


async def settle(pilot: Pilot[None], rounds: int = 60) -> None:
    """Wait until every finite worker is done and the messages they posted are handled."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        busy = [w for w in app.workers if w.group not in ENDLESS_GROUPS and w.is_running]
        if not busy:
            await pilot.pause(0.05)
            if not [w for w in app.workers if w.group not in ENDLESS_GROUPS and w.is_running]:
                break
        else:
            await app.workers.wait_for_complete(busy)
    await pilot.pause()


async def keys(pilot: Pilot[None], *pressed: str) -> None:
    """Press keys one at a time, letting each one's work finish."""
    for key in pressed:
        await pilot.press(key)
        await settle(pilot)


Steps = Callable[[Pilot[None]], Awaitable[None]]


@dataclass(frozen=True)
class Shot:
    """One screenshot: a name, the app to start and what to do before the picture."""

    name: str
    title: str
    make_app: Callable[[], CtxscopeApp]
    steps: Steps
    theme: str = "textual-dark"


def _session_app(path: Path, policy: str | None = None) -> Callable[[], CtxscopeApp]:
    def make() -> CtxscopeApp:
        chosen = get_preset(policy) if policy else None
        return CtxscopeApp(str(path), discover=lambda: [], live=False, policy=chosen)

    return make


async def _nothing(pilot: Pilot[None]) -> None:
    await settle(pilot)


async def _session_steps(pilot: Pilot[None]) -> None:
    # select the first message after the first compaction's cut: the list shows that
    # compaction's head (above) and tail (below), the gauge the call where it fired
    from tui.screens.compaction import cut_of
    from tui.screens.session import SessionScreen

    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen) and screen.state is not None
    result = screen.state.result
    if result is not None:
        first = next((e for e in result.events if e.kind == "compact"), None)
        if first is not None:
            screen.select_message(cut_of(first))
    await settle(pilot)


async def _overflow_end(pilot: Pilot[None]) -> None:
    await keys(pilot, "G")


async def _policy_steps(pilot: Pilot[None]) -> None:
    from tui.widgets.policy_panel import PolicyPanel

    await keys(pilot, "G", "p")
    panel = pilot.app.screen.query_one(PolicyPanel)
    await panel.open_sections("truncation")
    await settle(pilot)
    field = panel.field_widget("truncation.max_bytes")
    field.focus()
    await settle(pilot)
    await keys(pilot, "ctrl+u", *"12000")
    await pilot.pause(0.3)  # the panel's debounce, then the replay it starts
    await settle(pilot)


async def _compaction_steps(pilot: Pilot[None]) -> None:
    await keys(pilot, "G", "c")
    await pilot.pause(0.3)
    await settle(pilot)


async def _overflow_steps(pilot: Pilot[None]) -> None:
    await keys(pilot, "o")


SHOTS: tuple[Shot, ...] = (
    Shot(
        "picker",
        "ctxscope: pick a session",
        lambda: CtxscopeApp(discover=discovered_samples, live=False),
        _nothing,
    ),
    Shot(
        "session",
        "ctxscope: session, gauge and the first compaction's head/tail",
        _session_app(COMPACTED, "seed"),
        _session_steps,
    ),
    Shot(
        "session-light",
        "ctxscope: the overflow sample at its last call (light theme)",
        _session_app(OVERFLOW),
        _overflow_end,
        theme="textual-light",
    ),
    Shot(
        "policy-panel",
        "ctxscope: editing the policy (truncation.max_bytes)",
        _session_app(OVERFLOW),
        _policy_steps,
    ),
    Shot(
        "compaction",
        "ctxscope: compaction run now (mock LLM)",
        _session_app(OVERFLOW, "seed"),
        _compaction_steps,
    ),
    Shot(
        "overflow",
        "ctxscope: why the session overflowed",
        _session_app(OVERFLOW),
        _overflow_steps,
    ),
)


def _freeze(app: CtxscopeApp) -> None:
    """Remove what changes from run to run: blinking cursors and notifications."""
    for screen in app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False
    app.clear_notifications()


def _svg_for_rasterizers(svg: str) -> str:
    # Rich writes spaces as &#160; at the start of text runs; librsvg drops a leading one unless
    # whitespace is preserved, which shifts text one cell left in the PNG.
    return svg.replace("<svg ", '<svg xml:space="preserve" ', 1)


async def take(shot: Shot, out: Path, size: tuple[int, int] = SIZE) -> Path:
    """Run ``shot`` at ``size`` and write its SVG into ``out``; returns the SVG's path."""
    from tui.screens.compaction import CompactionScreen

    CompactionScreen.SHOW_TIMINGS = False
    app = shot.make_app()
    async with app.run_test(size=size) as pilot:
        app.theme = shot.theme
        await settle(pilot)
        await shot.steps(pilot)
        _freeze(app)
        await pilot.pause(0.1)
        await settle(pilot)
        svg = app.export_screenshot(title=shot.title)
    path = out / f"{shot.name}.svg"
    path.write_text(_svg_for_rasterizers(svg), encoding="utf-8")
    return path


def to_png(svg: Path, converter: str) -> Path | None:
    """Convert ``svg`` next to itself with rsvg-convert; None (and a message) on failure."""
    png = svg.with_suffix(".png")
    done = subprocess.run(
        [converter, "--format=png", "--output", str(png), str(svg)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"  {svg.name}: rsvg-convert failed: {done.stderr.strip()}", file=sys.stderr)
        return None
    return png


def _fixed_timezone() -> None:
    """Dates on screen are local time: pin the zone so every machine draws the same."""
    os.environ["TZ"] = "UTC"
    if hasattr(time, "tzset"):
        time.tzset()


def main(argv: list[str] | None = None) -> int:
    """Write every screenshot (or the ones named) to screenshots/."""
    _fixed_timezone()
    parser = argparse.ArgumentParser(prog="python -m tui.screenshots", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"only these ({', '.join(s.name for s in SHOTS)})")
    parser.add_argument("--out", type=Path, default=OUT, help="folder (default: screenshots/)")
    parser.add_argument(
        "--size",
        default=f"{SIZE[0]}x{SIZE[1]}",
        help="terminal COLUMNSxROWS (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    missing = [p for p in (OVERFLOW, COMPACTED) if not p.exists()]
    if missing:
        names = ", ".join(str(p.relative_to(REPO)) for p in missing)
        print(
            f"screenshots: sample sessions missing ({names}); run `make samples`", file=sys.stderr
        )
        return 1
    try:
        columns, rows = (int(part) for part in args.size.lower().split("x"))
    except ValueError:
        print(
            f"screenshots: --size wants COLUMNSxROWS, e.g. 80x24, not {args.size}", file=sys.stderr
        )
        return 2
    wanted = [s for s in SHOTS if not args.names or s.name in args.names]
    unknown = set(args.names) - {s.name for s in SHOTS}
    if unknown:
        print(f"screenshots: no such screenshot: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    converter = shutil.which("rsvg-convert")
    if converter is None:
        print(
            "screenshots: rsvg-convert not found, so only SVGs are written "
            "(apt-get install librsvg2-bin fonts-firacode for PNGs)",
            file=sys.stderr,
        )
    for shot in wanted:
        svg = asyncio.run(take(shot, args.out, (columns, rows)))
        png = to_png(svg, converter) if converter else None
        written = f"{svg.relative_to(REPO) if svg.is_relative_to(REPO) else svg}"
        print(f"{shot.name:<14} {written}" + (f" + {png.name}" if png else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
