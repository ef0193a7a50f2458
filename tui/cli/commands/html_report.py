"""``ctxscope report PATH -o OUT.html``: one session as a self-contained HTML page.

The session is replayed and diagnosed as ``analyze`` does (the recording agent's preset unless
``--policy`` names another) and written by :func:`core.reports.html.render_html`: the gauge as an
SVG chart, the overflow diagnosis, the compactions and the thresholds, with nothing the page has
to fetch. OUT is written atomically and never over an existing file without ``--force``; ``-o -``
writes to standard output. Exit status 0; 2 for unusable input or an OUT that cannot be written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from core.insights.diagnosis import diagnose
from core.model.terminal_text import safe
from core.output_file import OutputRefused, destination, write_new
from core.reports.analyze import analysis_report
from core.reports.html import render_html
from tui.cli.commands._options import replay_options
from tui.cli.commands._session import fail, load_or_fail, replay_with_progress, replayer_of


@click.command(name="report")
@replay_options
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="OUT.html",
    help="The page to write ('-' for standard output).",
)
@click.option("--force", is_flag=True, help="Overwrite OUT when it exists.")
def report(
    path: str, policy_spec: str | None, window: int | None, output: str, force: bool
) -> None:
    """Write the session at PATH as one self-contained HTML page."""
    target = None if output == "-" else Path(output)
    if target is not None:
        try:
            destination(target, force)
        except OutputRefused as exc:
            fail("report", str(exc))
    session, policy = load_or_fail("report", path, window=window, policy_spec=policy_spec)
    result = replay_with_progress(session, policy)
    diagnosis = diagnose(session, result)
    analysis = analysis_report(
        session, result, diagnosis, replayer_of(session).inferred_threshold()
    )
    # a file name that is not UTF-8 shows as \udcff escapes rather than ending the command
    page = render_html(session, result, analysis).encode("utf-8", "backslashreplace")
    if target is None:
        sys.stdout.buffer.write(page)
        sys.stdout.buffer.flush()
        return
    try:
        write_new(target, page, overwrite=force)
    except OutputRefused as exc:
        fail("report", str(exc))
    except OSError as exc:
        fail("report", f"{target}: cannot write ({exc.strerror or exc})")
    click.echo(f"wrote {safe(str(target))} ({len(page):,} bytes)", err=True)
