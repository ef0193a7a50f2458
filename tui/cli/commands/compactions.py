"""``ctxscope compactions``: every compaction of a session — why it ran, what it forgot, what it
cost.

For each compaction (the recording's, then the ones the policy's replay made on its own): what
filled the window since the previous one, the threshold and the check that crossed it
(:mod:`core.insights.compaction_causes`); the facts of the head its summary kept and dropped
(:mod:`core.insights.forgotten_facts`); its summary call and the prompt cache it invalidated (:mod:`core.insights.cost`).

``--compare`` writes a summary of each recorded compaction's head with the policy's summariser
(the offline mock, or ``--llm URL``) and checks both summaries fact by fact; ``--llm URL`` also
asks that model to judge the facts the matching did not find. ``--json`` prints the list of
:class:`core.insights.compaction_records.CompactionReport`. Exit status 0, or 2 for unusable input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from core.insights.compaction_records import CompactionReport, compaction_reports
from core.insights.cost import session_cost
from core.insights.forgotten_facts import (
    forgotten_of,
    judge,
    recorded_heads,
    recorded_summary,
)
from core.insights.named_figures import (
    recording_checks,
)
from core.model.json_text import model_json
from core.model.session import Message, Session
from core.model.tokens import get_counter, message_text
from core.policy import LLMConfig, Policy
from tui.cli.commands._options import replay_options
from tui.cli.commands._session import fail, load_or_fail, replay_with_progress, replayer_of

if TYPE_CHECKING:  # (``--json`` prints no table and asks no model: the tables
    # (:mod:`tui.cli.commands.compactions_tables`, with rich), the LLM client and asyncio are
    # imported where a table is drawn or a model asked)
    from rich.console import Console

    from core.llm.protocol import Summarizer


@click.command(name="compactions")
@replay_options
@click.option(
    "--compare",
    is_flag=True,
    help="Summarise each recorded compaction's head again (mock, or --llm) and compare.",
)
@click.option(
    "--llm",
    default=None,
    metavar="URL",
    help="An OpenAI-compatible endpoint: writes the --compare summaries and judges the facts "
    "the matching did not find (API key from $OPENAI_API_KEY).",
)
@click.option("--model", default=None, help="Model name to ask the endpoint for (with --llm).")
@click.option("--json", "as_json", is_flag=True, help="Print the compactions as JSON (schema v1).")
def compactions_command(
    path: str,
    policy_spec: str | None,
    window: int | None,
    compare: bool,
    llm: str | None,
    model: str | None,
    as_json: bool,
) -> None:
    """Why each compaction of the session at PATH ran, what it forgot and what it cost."""
    session, policy = load_or_fail("compactions", path, window=window, policy_spec=policy_spec)
    summarizer: Summarizer | None = None
    if llm is not None:
        from core.llm.factory import make_summarizer

        if not llm.startswith(("http://", "https://")) or not model:
            fail("compactions", "--llm takes an http(s) URL, and needs --model NAME")
        config = LLMConfig(provider="openai", base_url=llm, model=model)
        policy = policy.model_copy(update={"llm": config})
        summarizer = make_summarizer(config)
    result = replay_with_progress(session, policy)
    reports = compaction_reports(session, result, session_cost(session, each_call=False))
    if summarizer is not None:
        _judge_all(session, reports, summarizer)
    if as_json:
        payload = "[" + ",\n".join(model_json(r) for r in reports) + "]"
        sys.stdout.write(payload + "\n")
        return
    from tui.cli.commands.compactions_tables import print_report
    from tui.cli.render import session_header, stdout_console

    console = stdout_console()
    console.print(session_header(session, result))
    if not reports:
        console.print("No compaction, recorded or replayed.")
    checks = recording_checks(replayer_of(session))
    for report in reports:
        why = report.why.recorded_index
        print_report(console, report, checks.get(why) if why is not None else None)
    if compare:
        _compare_all(console, session, policy, summarizer, result.window or 200_000)


def _judge_all(session: Session, reports: list[CompactionReport], summarizer: Summarizer) -> None:
    """Let the live model judge the dropped facts of every readable recorded summary."""
    import asyncio

    from core.llm.protocol import LLMError

    heads = recorded_heads(session)
    for report in reports:
        index = report.why.recorded_index
        step = heads.get(index) if index is not None else None
        summary = recorded_summary(session, step) if step is not None else None
        if step is None or summary is None:
            continue
        forgotten, records = forgotten_of([session.messages[j] for j in step.head], summary)
        try:
            report.forgotten = asyncio.run(judge(forgotten, records, summary, summarizer))
        except LLMError as exc:
            fail("compactions", f"the judge failed: {exc}")


def _compare_all(
    console: Console,
    session: Session,
    policy: Policy,
    summarizer: Summarizer | None,
    window: int,
) -> None:
    """Each recorded head summarised again, and both summaries checked fact by fact."""
    from rich.text import Text

    from core.algorithms.compact import CompactionError
    from core.insights.side_by_side import compare_summaries
    from core.llm.factory import make_summarizer
    from core.llm.protocol import LLMError
    from tui.cli.commands.compactions_tables import side_by_side_table

    chosen = summarizer or make_summarizer(policy.llm)
    for index, step in recorded_heads(session).items():
        summary = recorded_summary(session, step)
        head = [session.messages[j] for j in step.head]
        if summary is None or not head:
            continue
        try:
            replayed = _summarise(head, policy, chosen, window)
        except (CompactionError, LLMError) as exc:
            console.print(Text(f"compaction {index}: no replayed summary ({exc})", style="yellow"))
            continue
        mine, theirs, rows = compare_summaries(head, summary, replayed)
        console.print(side_by_side_table(index, mine, theirs, rows))


def _summarise(head: list[Message], policy: Policy, summarizer: Summarizer, window: int) -> str:
    """What the model would see after compacting ``head`` (its summary, and any tail kept)."""
    import asyncio

    from core.algorithms.compact import compact

    result = asyncio.run(
        compact(head, policy, summarizer, window=window, counter=get_counter(policy.estimator))
    )
    return "\n".join(message_text(m) for m in result.output_messages)
