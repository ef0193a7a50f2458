"""``ctxscope export PATH... --to DIR``: many sessions as Parquet files (sessions, calls,
compactions) for DuckDB, Polars or Spark.

PATH may be session files, folders or globs; without one, every session discovery finds on this
machine. The tables and their columns are described in :mod:`core.fleet.export` and the README.
Existing files in DIR are not overwritten without ``--force``. Exit status 0; 2 when no path
names a session, DIR cannot be written, or pyarrow is not installed.
"""

from __future__ import annotations

from pathlib import Path

import click

from core.model.terminal_text import safe
from core.model.write_numbers import counted
from tui.cli.commands._session import fail, progress_reporter


@click.command(name="export")
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@click.option(
    "--to",
    "to",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    metavar="DIR",
    help="Folder to write sessions.parquet, calls.parquet and compactions.parquet into.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Sessions analysed at once, each in its own process (default: one per core).",
)
@click.option("--force", is_flag=True, help="Overwrite the tables already in DIR.")
def export_command(paths: tuple[str, ...], to: Path, jobs: int | None, force: bool) -> None:
    """Export many sessions (default: all on this machine) as Parquet tables."""
    try:
        from core.fleet.export import ExportError, export
    except ImportError as exc:
        fail("export", f"needs pyarrow ({exc}): pip install 'ctxscope[export]'")
    with progress_reporter("exporting sessions") as update:
        step = None if update is None else lambda done, total, _path: update(done, total)
        try:
            summary = export(paths, to, jobs=jobs, overwrite=force, progress=step)
        except ExportError as exc:
            fail("export", str(exc))
    for problem in summary.problems:
        click.echo(f"ctxscope export: {safe(problem)}", err=True)
    unreadable = f" ({summary.errors} could not be read)" if summary.errors else ""
    click.echo(
        f"wrote {counted(summary.sessions, 'session')}{unreadable}, "
        f"{counted(summary.calls, 'call')} and {counted(summary.compactions, 'compaction')} "
        f"to {safe(str(to))}",
        err=True,
    )
