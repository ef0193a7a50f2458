"""``ctxscope fidelity PATH...``: does each agent's own preset reproduce its recorded compactions?

PATH may be session files, folders (searched for session files) or globs. For every session, the
preset of the agent that recorded it replays it; every recorded compaction is a row (its trigger
and the evidence for it, the recorded and replayed calls, the figure the check saw and the
threshold it used), then the threshold intervals per agent, version, provider, model and window,
and the total line "automatic compactions reproduced at the same call: N/M": a prediction, the
threshold from each agent's rule, never from the compactions scored. ``--learn`` adds, per
compaction, the outcome under the threshold learned from the *other* sessions given of the same
agent version, provider, model and window (leave-one-out), naming them. ``--json`` prints
:class:`core.reports.fidelity.FidelityReport`. Exit status 0; 1 with ``--fail-under P`` when fewer
than P percent were reproduced; 2 when no path names a session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from core.insights.named_figures import RECORDING_CHECK
from core.model.json_text import model_json
from core.model.terminal_text import safe
from core.reports.fidelity import FidelityEntry, FidelityReport, ThresholdGroup, fidelity_report
from tui.cli.commands._session import fail, progress_reporter

if TYPE_CHECKING:  # (``--json`` draws nothing: the table's code imports rich and the renderer)
    from rich.table import Table
    from rich.text import Text

_OUTCOME_STYLE = {"same": "green", "earlier": "yellow", "later": "yellow", "missed": "red"}


@click.command(name="fidelity")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema v1).")
@click.option(
    "--fail-under",
    type=click.FloatRange(min=0, max=100),
    default=None,
    metavar="P",
    help="Exit with status 1 when fewer than P percent of the automatic compactions are "
    "reproduced at the same call.",
)
@click.option(
    "--learn",
    is_flag=True,
    help="Also replay each session with the threshold learned from the other sessions given of "
    "the same agent version, provider and model (leave-one-out), and say which taught it.",
)
def fidelity(paths: tuple[str, ...], as_json: bool, fail_under: float | None, learn: bool) -> None:
    """Replay each session under its agent's own preset and check it compacts where the agent did."""
    with _progress() as update:
        report = fidelity_report(paths, progress=update, learn=learn)
    if not report.sessions:
        reasons = "; ".join(error.error for error in report.errors) or "no session found"
        fail("fidelity", reasons)
    if as_json:
        sys.stdout.write(model_json(report) + "\n")
    else:
        _print(report)
    if fail_under is not None and report.share * 100 < fail_under:
        sys.exit(1)


@contextmanager
def _progress() -> Iterator[Callable[[int, int, str], None] | None]:
    with progress_reporter("replaying sessions") as update:
        if update is None:
            yield None
            return

        def step(done: int, total: int, _path: str) -> None:
            update(done, total)

        yield step


def _print(report: FidelityReport) -> None:
    from rich.text import Text

    from tui.cli.render import COMPACTION_LEGEND, compaction_block, stdout_console

    console = stdout_console()
    by_file: dict[str, list[FidelityEntry]] = {}
    for entry in report.entries:
        by_file.setdefault(entry.file, []).append(entry)
    common = os.path.commonpath([os.path.dirname(f) for f in by_file]) if by_file else ""
    if common:
        console.print(Text(f"sessions under {common}", style="dim"), soft_wrap=True)
    for file, entries in by_file.items():
        console.print(_file_header(os.path.relpath(file, common or None), entries[0]))
        for entry in entries:
            console.print(
                compaction_block(
                    entry.row, entry.figures, threshold=True, recording_check=entry.recording_check
                )
            )
        for entry in entries:
            if entry.row.trigger_evidence:
                note = f"  #{entry.row.recorded_index} {entry.row.trigger}: {entry.row.trigger_evidence}"
                console.print(Text(note, style="dim"))
            if entry.learned is not None:
                console.print(_learned_line(entry, common))
        console.print()
    if report.groups:
        console.print(_groups_table(report.groups))
    for error in report.errors:  # one line each on stderr, the name escaped (fleet and export too)
        line = error.error if error.error.startswith(error.file) else f"{error.file}: {error.error}"
        click.echo(f"ctxscope fidelity: {safe(line)}", err=True)
    if report.entries:
        console.print(Text(COMPACTION_LEGEND, style="dim"))
    console.print(Text(report.total_line(), style="bold"))


def _learned_line(entry: FidelityEntry, common: str) -> Text:
    from rich.text import Text

    from tui.cli.render import tokens

    learned = entry.learned
    assert learned is not None
    delta = f" {learned.call_delta:+d}" if learned.call_delta else ""
    sources = ", ".join(os.path.relpath(f, common or None) for f in learned.learned_from)
    text = Text(
        f"  #{entry.row.recorded_index} learned {tokens(learned.threshold)} from {sources}: "
    )
    text.append(learned.outcome + delta, style=_OUTCOME_STYLE.get(learned.outcome, ""))
    return text


def _file_header(file: str, entry: FidelityEntry) -> Text:
    from rich.text import Text

    from tui.cli.render import tokens

    agent = entry.agent + (f" {entry.version}" if entry.version else "")
    model = (entry.model or "model not recorded") + (
        f" on {entry.provider}" if entry.provider else ""
    )
    window = f"window {tokens(entry.window)} ({entry.window_source})"
    text = Text(file, style="bold")
    text.append(f"\n  {agent} · {model} · {window}", style="")
    return text


def _groups_table(groups: list[ThresholdGroup]) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from tui.cli.render import tokens

    table = Table(
        title="threshold intervals (agent, version, model, window)",
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("agent", overflow="fold")
    table.add_column("model", overflow="fold")  # (names and figures wrap, never cut)
    table.add_column("window", justify="right", no_wrap=True)
    table.add_column(f"interval ({RECORDING_CHECK.name})", overflow="fold")
    for group in groups:
        agent = group.agent + (f" {group.version}" if group.version else "")
        model = (group.model or "?") + (f" ({group.provider})" if group.provider else "")
        style = "red" if group.conflict else ""
        table.add_row(agent, model, tokens(group.window), Text(group.note, style=style))
    return table


def _call(call: int | None) -> str:
    return "-" if call is None else str(call)
