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
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("date", no_wrap=True)
    table.add_column("format", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("project", overflow="fold", max_width=40)
    table.add_column("title", overflow="ellipsis", no_wrap=True, max_width=60)
    table.add_column("path", overflow="fold")
    for s in found:
        table.add_row(
            ("" if s.last_active is not None else "~") + s.when_iso[:16].replace("T", " "),
            s.format.value,
            format_bytes(s.size_bytes, missing="-"),
            s.project or "",
            ("└ " if s.parent_session_id else "") + (s.title or ""),
            s.path,
        )
    console = Console()
    if not console.is_terminal:
        console = Console(width=100_000)  # piped: one session per line, nothing folded
    console.print(table)
    if any(s.last_active is None for s in found):
        click.echo("~ date: the file's modification time (the session records no time of its own)")
