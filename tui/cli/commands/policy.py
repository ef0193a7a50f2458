"""``ctxscope policy``: look at a policy, or write one out as TOML to start your own.

``policy show NAME|FILE`` prints every field with its value and its help text (the field's own
documentation, the same text the TUI's policy panel shows); ``policy dump NAME|FILE`` prints it
as TOML that ``--policy FILE.toml`` loads back; ``policy list`` names the presets. A bad policy
file exits with status 2 and one line naming the file and the field.
"""

from __future__ import annotations

import sys

import click

from core.policy import PRESETS
from tui.cli.commands._session import resolve_policy_or_fail


@click.group(name="policy")
def policy() -> None:
    """Show, dump or list policies."""


@policy.command(name="show")
@click.argument("spec", metavar="NAME|FILE.toml")
def show(spec: str) -> None:
    """Every field of a preset or TOML policy, with its value and help text."""
    from tui.cli.render import policy_table, stdout_console  # (``dump`` draws no table)

    stdout_console().print(policy_table(resolve_policy_or_fail("policy show", spec)))


@policy.command(name="dump")
@click.argument("spec", metavar="NAME|FILE.toml")
def dump(spec: str) -> None:
    """The policy as TOML (``ctxscope policy dump pi > my.toml``, then edit and load it back)."""
    sys.stdout.write(resolve_policy_or_fail("policy dump", spec).to_toml())


@policy.command(name="list")
def list_presets() -> None:
    """Name the built-in presets (and ``inferred``), each with what it models."""
    from rich.table import Table

    from tui.cli.render import stdout_console

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for name, preset in PRESETS.items():
        grid.add_row(name, preset.description)
    grid.add_row(
        "inferred",
        "the recording agent's preset with the threshold the session's own compactions show "
        "(worked out from the session: analyze, replay, compare and the TUI take it)",
    )
    stdout_console().print(grid)
