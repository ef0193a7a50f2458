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

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from core.model.json_text import model_json
from core.reports.fidelity import fidelity_report
from tui.cli.commands._session import fail, progress_reporter


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
        from tui.cli.commands.fidelity_tables import print_fidelity

        print_fidelity(report)
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
