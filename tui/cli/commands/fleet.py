"""``ctxscope fleet [PATH...]``: one row per session, fullest first, over many sessions.

PATH may be session files, folders (searched for session files) or globs; without one, every
session discovery finds on this machine. Each session is loaded and replayed under its agent's
own preset in parallel processes (``--jobs``, default one per core); the table is sorted by the
peak's share of the window. Rows are cached by path, size and modification time in
``$XDG_CACHE_HOME/ctxscope``, so a second run over unchanged files only reads the cache
(``--no-cache`` analyses everything again and stores nothing). ``--json`` prints
:class:`core.fleet.survey.FleetReport`. A session that cannot be read is a row with its error.

Exit status 0; 1 when the analysis of a session crashed (a bug in ctxscope: its row says so);
2 when no path names a session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from rich.table import Table
from rich.text import Text

from core.fleet.session_rows import FleetRow
from core.fleet.survey import FleetReport, crashed, fleet
from core.model.json_text import model_json
from core.model.terminal_text import safe
from core.model.write_numbers import compact_tokens, counted
from tui.cli.commands._session import fail, progress_reporter
from tui.cli.render import stdout_console
from tui.cli.table_column import Column
from tui.cli.table_fit import dropped_note, fit_table
from tui.figures import (
    COMPACTIONS_COLUMN,
    COST_COLUMN,
    LAST_MESSAGE_COLUMN,
    NEAR_SHARE,
    OVERFLOW_COLUMN,
    PEAK_COLUMN,
    SHARE_COLUMN,
    local_minute,
    row_compactions,
    row_cost,
    row_overflow,
    row_peak,
    row_share,
    share_level,
)

SHARE_STYLES = {"over": "red", "near": "yellow", "": ""}
"""The colour of a peak's share of the window, by :func:`tui.figures.share_level`."""


@click.command(name="fleet")
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Sessions analysed at once, each in its own process (default: one per core).",
)
@click.option(
    "--no-cache", is_flag=True, help="Analyse every session again; read and store no cache."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema v1).")
def fleet_command(paths: tuple[str, ...], jobs: int | None, no_cache: bool, as_json: bool) -> None:
    """Analyse many sessions (default: all on this machine) and list them fullest first."""
    with _progress() as update:
        report = fleet(paths, jobs=jobs, use_cache=not no_cache, progress=update)
    if not report.rows:  # the problems in one line (printed once, not again above it)
        fail("fleet", "; ".join(report.problems) or "no session found on this machine")
    for problem in report.problems:
        click.echo(f"ctxscope fleet: {safe(problem)}", err=True)
    if as_json:
        sys.stdout.write(model_json(report) + "\n")
        _exit_on_crash(report)
        return
    console = stdout_console()  # COLUMNS, else the terminal, else 80 when piped
    common = _common_folder(report.rows)
    if common:
        console.print(Text(f"sessions under {safe(common)}", style="dim"), soft_wrap=True)
    table, dropped = fleet_table(report.rows, common, width=console.width)
    console.print(table)
    console.print(Text(total_line(report), style="bold"))
    if dropped:
        console.print(Text(dropped_note(dropped, console.width), style="dim"))
    _exit_on_crash(report)


def _exit_on_crash(report: FleetReport) -> None:
    """Exit with status 1 when an analysis crashed (the rows say where; the run is not clean)."""
    crashes = sum(1 for row in report.rows if crashed(row))
    if crashes:
        click.echo(
            f"ctxscope fleet: {crashes} session(s) could not be analysed because of a bug in "
            "ctxscope (their rows say which)",
            err=True,
        )
        sys.exit(1)


@contextmanager
def _progress() -> Iterator[Callable[[int, int, str], None] | None]:
    with progress_reporter("analysing sessions") as update:
        if update is None:
            yield None
            return

        def step(done: int, total: int, _path: str) -> None:
            update(done, total)

        yield step


FLEET_COLUMNS = (
    Column(PEAK_COLUMN, 1, "right"),
    Column(SHARE_COLUMN, 1, "right"),
    Column("window", 2, "right"),
    Column("agent", 9, wrap=True, min_width=11),
    Column("model", 6, wrap=True, min_width=12),
    Column("calls", 7, "right"),
    Column(COMPACTIONS_COLUMN, 3, wrap=True, min_width=11),
    Column(OVERFLOW_COLUMN, 5, wrap=True, min_width=8),
    Column("reproduced", 10, "right"),
    Column(COST_COLUMN, 4, "right"),
    Column(LAST_MESSAGE_COLUMN, 8, wrap=True, min_width=10),
    Column("session", 1, wrap=True, min_width=16),
)
"""The fleet's columns; at a narrow terminal the largest ``priority`` goes first: reproduced,
then the agent, last message, calls, model, overflow, cost, compactions and window. Peak, its
share and the session always stay."""


def fleet_table(
    rows: list[FleetRow], common: str = "", width: int = 100_000
) -> tuple[Table, list[str]]:
    """The fleet as a table that fits ``width`` columns (one row per session), and the
    headers left out to fit it."""
    return fit_table(FLEET_COLUMNS, [_cells(row, common) for row in rows], width, box=None)


def _cells(row: FleetRow, common: str) -> list[str | Text]:
    name = safe(os.path.relpath(row.path, common) if common else row.path)
    if row.error is not None:
        return ["", "", "", "", "", "", "", "", "", "", "", Text(f"{name}: {row.error}", "red")]
    agent = (row.agent or "?") + (f" {row.version}" if row.version else "")
    return [
        row_peak(row),
        Text(row_share(row.peak_share), SHARE_STYLES[share_level(row.peak_share)]),
        (compact_tokens(row.window_tokens) if row.window_tokens else "?")
        + (f" {row.window_source}" if row.window_source != "recorded" else ""),
        agent,
        (row.model or "?") + (f" ({row.provider})" if row.provider else ""),
        str(row.calls),
        row_compactions(row),
        Text(row_overflow(row), "red"),
        f"{row.reproduced}/{row.automatic}" if row.automatic else "",
        row_cost(row),
        local_minute(row.last_message_at) if row.last_message_at else "",
        f"{name} (sub-agent of {row.parent_session_id})" if row.parent_session_id else name,
    ]


def _common_folder(rows: list[FleetRow]) -> str:
    folders = [os.path.dirname(os.path.abspath(row.path.partition("#")[0])) for row in rows]
    try:
        return os.path.commonpath(folders) if len(folders) > 1 else ""
    except ValueError:
        return ""


def total_line(report: FleetReport) -> str:
    """The run in one line: how many, from where, how full."""
    near = sum(1 for r in report.rows if r.peak_share is not None and r.peak_share >= NEAR_SHARE)
    overflowed = sum(1 for r in report.rows if r.overflowed)
    errors = sum(1 for r in report.rows if r.error is not None)
    line = (
        f"{counted(len(report.rows), 'session')} ({report.cached} from the cache, {report.analysed} "
        f"analysed) in {report.seconds:.1f} s; {near} reached {NEAR_SHARE:.0%} of their window, "
        f"{overflowed} overflowed"
    )
    return line + (f"; {errors} could not be read" if errors else "")
