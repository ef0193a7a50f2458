"""Options shared by the commands that replay a session (analyze, replay, compare)."""

from __future__ import annotations

import click

policy_option = click.option(
    "--policy",
    "-p",
    "policy_spec",
    default=None,
    metavar="NAME|FILE.toml",
    help="Policy preset or TOML file (default: the preset of the agent that recorded the session).",
)

window_option = click.option(
    "--window",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Context window in tokens, for sessions that do not record one (or to override it).",
)
