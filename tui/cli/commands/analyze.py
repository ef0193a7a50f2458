"""``ctxscope analyze``: why did this session overflow, and what would the policy have done?

Loads the session, replays it under a policy (the recording agent's own preset by default) and
prints the overflow diagnosis (the first call that overflowed or came within ``--margin`` of the
window, what filled the window since the last compaction, whether the threshold fired too late),
the replay summary and how the replay matched each recorded compaction.

Exit status: 0; 1 with ``--fail-on-overflow`` when the recording overflowed or the replay under
the policy does; 2 for unusable input (one line on standard error); 3 when the policy's live LLM
wrote no summary at all (every request failed).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from core.formats.subagents import child_paths
from core.insights.cost import SessionCost, session_cost
from core.insights.diagnosis import MARGIN, OverflowDiagnosis, diagnose
from core.insights.named_figures import (
    RECORDING_CHECK,
    compaction_figures,
    peak,
    recording_checks,
)
from core.model.session import Session
from core.reports.analyze import AnalysisReport, analysis_json_pieces, analysis_report
from tui.cli.commands._llm_watch import LLMWatch
from tui.cli.commands._options import replay_options
from tui.cli.commands._session import (
    load_or_fail,
    replay_with_progress,
    replayer_of,
    write_stdout_bytes,
)

if TYPE_CHECKING:
    from core.fleet.subagent_info import SubagentInfo
    from core.policy import Policy
    from core.replay.results import ReplayResult


def subagent_lines(subagents: list[SubagentInfo], parent: str | None) -> list[str]:
    """The text report's lines on the session's parent and its sub-agents."""
    lines = [f"a sub-agent of session {parent}"] if parent else []
    for info in subagents:
        if info.error is not None:
            lines.append(f"sub-agent {info.path}: {info.error}")
            continue
        peak = f"{info.peak_tokens:,}" if info.peak_tokens is not None else "?"
        where = (
            f", between calls {info.parent_calls[0]}-{info.parent_calls[1]}"
            if info.parent_calls
            else ""
        )
        what = (
            f"compaction {info.compaction_of + 1}'s run"
            if info.compaction_of is not None
            else "sub-agent"
        )
        lines.append(
            f"{what} {info.id} ({info.model or 'model ?'}): {info.calls} calls, peak {peak}, "
            f"{info.compactions} compactions{where}"
        )
    return lines


def _subagents(session: Session) -> list[SubagentInfo]:
    """The figures of the sub-agents ``session`` started; the fleet's machinery (its process
    pool, its cache) is imported only for a session that has some."""
    if not child_paths(session):
        return []
    from core.fleet.survey import subagent_summaries

    return subagent_summaries(session)


def priced(session: Session) -> SessionCost:
    """The command's cost of ``session``, worked out before the replay: the columns it makes
    and frees then do not add to the process's peak after the replay."""
    return session_cost(session, each_call=False)


def replayed(session: Session, policy: Policy) -> ReplayResult:
    """The command's replay of ``session`` under ``policy``; the compaction caches are then let
    go (nothing after it compacts: they would only add to the process's peak)."""
    result = replay_with_progress(session, policy)
    replayer_of(session).release_compaction_caches()
    return result


def diagnosed(
    session: Session, result: ReplayResult, margin: float, cost: SessionCost
) -> tuple[OverflowDiagnosis, AnalysisReport]:
    """The command's diagnosis of the replayed ``session`` and the report made of it."""
    diagnosis = diagnose(session, result, margin=margin)
    report = analysis_report(
        session,
        result,
        diagnosis,
        replayer_of(session).inferred_threshold(),
        subagents=_subagents(session),
        cost=cost,
    )
    return diagnosis, report


def write_json(report: AnalysisReport) -> None:
    """The report's JSON to standard output, in pieces (the document of a 100 MB session is
    never held whole: the process's peak), then a newline."""
    for piece in analysis_json_pieces(report):
        write_stdout_bytes(piece)
    write_stdout_bytes(b"\n")


@click.command(name="analyze")
@replay_options
@click.option(
    "--margin",
    type=click.FloatRange(min=0.0, max=1.0),
    default=MARGIN,
    show_default=True,
    help="A call within this share of the window counts as close to overflowing.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema v2).")
@click.option(
    "--fail-on-overflow",
    is_flag=True,
    help="Exit with status 1 when the recording overflowed or the replay under the policy does.",
)
def analyze(
    path: str,
    policy_spec: str | None,
    window: int | None,
    margin: float,
    as_json: bool,
    fail_on_overflow: bool,
) -> None:
    """Diagnose the session at PATH: the first overflow, its causes, and the policy's replay."""
    session, policy = load_or_fail("analyze", path, window=window, policy_spec=policy_spec)
    cost = priced(session)
    watch = LLMWatch("analyze", policy)
    with watch:
        result = replayed(session, policy)
    diagnosis, report = diagnosed(session, result, margin, cost)
    if as_json:
        write_json(report)
    else:
        # rich's rendering only for a table: --json starts without it
        from rich.text import Text

        from tui.cli.render import (
            diagnosis_panel,
            events_table,
            fidelity_table,
            notes_block,
            session_header,
            sparkline_panel,
            stdout_console,
            summary_table,
        )

        console = stdout_console()
        console.print(session_header(session, result))
        if report.inferred_threshold is not None and session.compactions:
            console.print(
                Text(
                    f"the recording's threshold ({RECORDING_CHECK.name}): "
                    f"{report.inferred_threshold.note}",
                    style="dim",
                )
            )
        figure = report.inferred_threshold_figure
        if figure is not None and not figure.usable and figure.window is not None:
            console.print(Text(f"the recording's inferred threshold: {figure.label}", style="dim"))
        console.print()
        console.print(diagnosis_panel(diagnosis))
        console.print(sparkline_panel(result, console.width))
        console.print(summary_table(result.summary, top=peak(session, result)))
        if result.fidelity:
            figures = compaction_figures(session, result)
            checks = recording_checks(replayer_of(session))
            console.print(fidelity_table(result.fidelity, figures, checks))
        if report.events:
            console.print(
                events_table(result.events, limit=20, figures=compaction_figures(session, result))
            )
        if report.notes:  # the replay's, and the estimate's calibration where there is one
            console.print(notes_block(report.notes))
        for line in subagent_lines(report.subagents, session.parent_session_id):
            console.print(Text(line, style="dim"), soft_wrap=True)
    watch.exit_if_nothing_written()
    if fail_on_overflow and report.overflow:
        sys.exit(1)
