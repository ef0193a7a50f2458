"""``ctxscope sessions``: list the agent sessions found on this machine, newest first.

Looks where Claude Code, Codex, pi and opencode keep their sessions (honouring
``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``PI_CODING_AGENT_DIR`` / ``PI_CODING_AGENT_SESSION_DIR``
and ``XDG_DATA_HOME``). Nothing is parsed in full; titles come from a small head of each file,
the date from a small tail (the session's last timestamp; ``~`` marks the file's modification
time where it records none).
"""

from __future__ import annotations

import json

import click

from core.formats.discovery import DiscoveredSession, discover_sessions
from core.model.write_numbers import format_bytes
from tui.cli.table_column import Column


def as_json(found: list[DiscoveredSession]) -> str:
    """The JSON document ``--json`` prints: a list of session objects (documented schema)."""
    rows = [
        {
            "path": s.path,
            "format": s.format.value,
            "project": s.project,
            "modified": s.modified_iso,
            "modified_epoch": s.modified,
            "session_time": s.when_iso if s.last_active is not None else None,
            "session_time_epoch": s.last_active,
            "size_bytes": s.size_bytes,
            "title": s.title,
            "session_id": s.session_id,
            "parent_session_id": s.parent_session_id,
        }
        for s in found
    ]
    return json.dumps(rows, indent=2, ensure_ascii=False)


SESSION_COLUMNS = (
    Column("date", 1),
    Column("format", 3),
    Column("size", 4, "right"),
    Column("project", 5, wrap=True, min_width=12, max_width=40),
    Column("title", 2, wrap=True, min_width=12, max_width=60, ellipsis=True),
    Column("path", 1, wrap=True, min_width=16),
)
"""The columns of ``ctxscope sessions``; at a narrow terminal the project goes first, then the
size, the format and the title; the date and the path always stay."""


@click.command(name="sessions")
@click.option("--json", "as_json_output", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Show only the N newest sessions.",
)
def sessions(as_json_output: bool, limit: int | None) -> None:
    """List the Claude Code, Codex, pi, opencode and Copilot CLI sessions found on this machine."""
    found = discover_sessions(limit=limit)
    if as_json_output:
        click.echo(as_json(found))
        return
    if not found:
        click.echo("No sessions found (looked in the folders of Claude Code, Codex, pi,")
        click.echo("opencode and Copilot CLI).")
        return
    from tui.cli.render import stdout_console
    from tui.cli.table_fit import dropped_note, fit_table

    rows = [
        [
            ("" if s.last_active is not None else "~") + s.when_iso[:16].replace("T", " "),
            s.format.value,
            format_bytes(s.size_bytes, missing="-"),
            s.project or "",
            ("└ " if s.parent_session_id else "") + (s.title or ""),
            s.path,
        ]
        for s in found
    ]
    console = stdout_console()  # COLUMNS, else the terminal, else 80 when piped
    table, dropped = fit_table(SESSION_COLUMNS, rows, console.width, box=None)
    console.print(table)
    if dropped:
        console.print(dropped_note(dropped, console.width))
    if any(s.last_active is None for s in found):
        click.echo("~ date: the file's modification time (the session records no time of its own)")
