"""Options shared by the commands that replay a session (analyze, replay, compare)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

session_argument = click.argument("path", type=click.Path(dir_okay=True))

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


def replay_options(command: F) -> F:
    """PATH, ``--policy`` and ``--window``: what a command replaying one session under one policy
    takes (in that order in ``--help``)."""
    return session_argument(policy_option(window_option(command)))
