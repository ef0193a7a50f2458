"""What ``ctxscope fidelity`` draws: each session's recorded compactions against the replay's,
the thresholds learned from the other sessions, and the threshold intervals.

Apart from the command (:mod:`tui.cli.commands.fidelity`), which imports it where the report is
drawn: ``--json`` draws nothing, and starts without rich and the renderer.
"""

from __future__ import annotations

import os

import click
from rich import box
from rich.table import Table
from rich.text import Text

from core.insights.named_figures import RECORDING_CHECK
from core.model.terminal_text import safe
from core.reports.fidelity import FidelityEntry, FidelityReport, ThresholdGroup
from tui.cli.render import (
    COMPACTION_LEGEND,
    OUTCOME_STYLE,
    compaction_block,
    stdout_console,
    tokens,
)


def print_fidelity(report: FidelityReport) -> None:
    """The report as text: each session's compactions, the threshold intervals, the errors on
    stderr, and the total line."""
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
    learned = entry.learned
    assert learned is not None
    delta = f" {learned.call_delta:+d}" if learned.call_delta else ""
    sources = ", ".join(os.path.relpath(f, common or None) for f in learned.learned_from)
    text = Text(
        f"  #{entry.row.recorded_index} learned {tokens(learned.threshold)} from {sources}: "
    )
    text.append(learned.outcome + delta, style=OUTCOME_STYLE.get(learned.outcome, ""))
    return text


def _file_header(file: str, entry: FidelityEntry) -> Text:
    agent = entry.agent + (f" {entry.version}" if entry.version else "")
    model = (entry.model or "model not recorded") + (
        f" on {entry.provider}" if entry.provider else ""
    )
    window = f"window {tokens(entry.window)} ({entry.window_source})"
    text = Text(file, style="bold")
    text.append(f"\n  {agent} · {model} · {window}", style="")
    return text


def _groups_table(groups: list[ThresholdGroup]) -> Table:
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
