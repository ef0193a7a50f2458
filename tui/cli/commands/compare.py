"""``ctxscope compare``: replay one session under several policies, side by side.

Default: all six presets (seed, opencode, codex, pi, claude-code, copilot-cli). One row per
policy: its threshold, the peak context, compactions, overflows, tokens truncated / pruned /
summarised, summary and tail tokens, and how its compactions line up with the recorded ones. ``--json``
prints :class:`core.replay.CompareResult` (schema v1). Exit status 0, or 2 for unusable input.
"""

from __future__ import annotations

import sys

import click

from core.model.json_text import model_json
from core.policy import PRESETS
from core.replay import INFERRED
from core.replay import compare as compare_policies
from tui.cli.commands._options import session_argument, window_option
from tui.cli.commands._session import (
    load_or_fail,
    load_policy_for,
    progress_reporter,
    replayer_of,
    resolve_policy_or_fail,
)


@click.command(name="compare")
@session_argument
@click.option(
    "--policy",
    "-p",
    "policy_specs",
    multiple=True,
    metavar="NAME|FILE.toml",
    help="A policy to compare (repeat the option; default: all six presets).",
)
@window_option
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON (schema v1).")
def compare(path: str, policy_specs: tuple[str, ...], window: int | None, as_json: bool) -> None:
    """Replay the session at PATH under several policies and compare them."""
    specs = list(policy_specs) or list(PRESETS)
    for spec in specs:
        if spec != INFERRED:
            resolve_policy_or_fail("compare", spec)  # a bad one fails before the session loads
    session, _first = load_or_fail("compare", path, window=window, policy_spec=specs[0])
    policies = [load_policy_for(session, spec) for spec in specs]
    with progress_reporter("replaying") as update:
        result = compare_policies(session, policies, progress=update, replayer=replayer_of(session))
    if as_json:
        sys.stdout.write(model_json(result) + "\n")
        return
    # rich's rendering only for the table: --json starts without it
    from tui.cli.render import compare_table, notes_block, session_header, stdout_console

    console = stdout_console()
    console.print(session_header(session))
    console.print()
    console.print(compare_table(result, console.width))
    if result.notes:
        console.print(notes_block(result.notes))
