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
from core.insights.cost import compaction_cost_label, session_cost
from core.insights.forgotten_facts import (
    FactRecord,
    Forgotten,
    SideBySide,
    compare_summaries,
    forgotten_of,
    judge,
    recorded_heads,
    recorded_summary,
)
from core.insights.named_figures import (
    AGENT_COUNT,
    COMPACTION_AT,
    LAST_PROMPT,
    TOKENS_AFTER,
    CompactionFigures,
    check_figures,
    recording_checks,
)
from core.model.json_text import model_json
from core.model.session import Message, Session
from core.model.tokens import get_counter, message_text
from core.policy import LLMConfig, Policy
from tui.cli.commands._options import replay_options
from tui.cli.commands._session import fail, load_or_fail, replay_with_progress, replayer_of

if TYPE_CHECKING:  # (``--json`` prints no table and asks no model: rich, the LLM client and
    # asyncio are imported where a table is drawn or a model asked)
    from rich.console import Console
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    from core.llm.protocol import Summarizer

_DROPPED_SHOWN = 12


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


def print_report(
    console: Console, report: CompactionReport, recording_check: int | None = None
) -> None:
    """One compaction: why, what it forgot, what it cost (``recording_check``:
    :data:`~core.insights.named_figures.RECORDING_CHECK` before it, shown where it differs
    from the replay's check)."""
    from rich.text import Text

    from tui.cli.render import tokens

    why = report.why
    name = (
        f"recorded compaction {why.recorded_index}"
        if why.source == "recorded"
        else f"replay compaction (event {why.event_id})"
    )
    call = f" before call {why.call_index}" if why.call_index is not None else ""
    at = report.figures.at_message if report.figures is not None else why.message_index
    console.print(Text(f"{name} · {why.trigger}{call} · {COMPACTION_AT.name} {at}", style="bold"))
    if report.figures is not None:
        console.print(figures_line(report.figures, recording_check))
    console.print(Text(why.explanation))
    if why.by_tool:
        shares = ", ".join(f"{t.tool_name} {tokens(t.tokens)}" for t in why.by_tool[:5])
        console.print(Text(f"  by tool: {shares}", style="dim"))
    if report.cost is not None:
        console.print(Text(f"  cost: {compaction_cost_label(report.cost)}"))
    if report.forgotten is not None:
        console.print(forgotten_table(report.forgotten, width=console.width))
    console.print()


def figures_line(figures: CompactionFigures, recording_check: int | None = None) -> Padding:
    """A recorded compaction's named figures on one (wrapping) line."""
    from rich.padding import Padding
    from rich.text import Text

    from tui.cli.render import tokens

    parts = [f"{AGENT_COUNT.name} {tokens(figures.agent_count)}"]
    parts += [f"{name} {value:,}" for name, value in check_figures(figures, recording_check)]
    if figures.last_prompt is not None:
        parts.append(
            f"{LAST_PROMPT.name} {figures.last_prompt:,} (call {figures.last_prompt_call})"
        )
    if figures.tokens_after is not None:
        parts.append(
            f"{TOKENS_AFTER.name} {figures.tokens_after:,} ({figures.tokens_after_source})"
        )
    held = [part.replace(" ", "\u00a0") for part in parts]
    return Padding(Text(" · ".join(held)), (0, 0, 0, 2))


def forgotten_table(forgotten: Forgotten, *, width: int | None = None) -> Table | Text:
    """The recall per kind of fact and the first dropped facts (each fact line fitted to the
    room ``width`` columns leave it, the middle of a long one elided)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if not forgotten.readable:
        return Text(f"  what it forgot: cannot tell — {forgotten.reason}", style="yellow")
    recall = f"{forgotten.recall:.0%}" if forgotten.recall is not None else "-"
    judged = ", judged by the LLM" if forgotten.judged else ""
    table = Table(
        title=f"  what it kept: {forgotten.kept}/{forgotten.facts} facts ({recall}) of "
        f"{forgotten.head_messages} messages{judged}",
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("kind")
    table.add_column("kept", justify="right")
    table.add_column("dropped (message: fact)")
    room = _FACT_CHARS if width is None else max(_MIN_FACT_CHARS, width - _OTHER_COLUMNS)
    for kind in forgotten.by_kind:
        dropped = [d for d in forgotten.dropped if d.kind == kind.kind][:_DROPPED_SHOWN]
        table.add_row(
            kind.kind,
            f"{kind.kept}/{kind.facts}",
            Text("\n".join(_fact_line(d, room) for d in dropped)),
        )
    return table


_FACT_CHARS = 90
"""The longest fact a line shows; a longer one loses its middle."""
_MIN_FACT_CHARS = 24
"""A fact keeps at least this many characters, however narrow the terminal (the line wraps)."""
_OTHER_COLUMNS = 30
"""What the kind and kept columns, the padding and the margins take of the forgotten table."""
_PATH_KINDS = frozenset({"file_read", "file_written"})


def middle_ellipsis(text: str, limit: int, *, head_share: float = 0.5) -> str:
    """``text`` in at most ``limit`` characters: its start (``head_share`` of the room) and its
    end, joined by ``…``, so texts that share a long start stay apart."""
    if len(text) <= limit:
        return text
    room = max(limit - 1, 0)
    head = int(room * head_share)
    tail = room - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def _fact_line(fact: FactRecord, room: int = _FACT_CHARS) -> str:
    """``#message: fact — detail`` in at most ``room`` characters where it can be (the fact
    loses its middle, never its distinguishing end)."""
    prefix = f"#{fact.message_index}: "
    detail = ""
    if fact.detail and fact.kind == "failed_command":
        room_for_detail = min(60, max(20, room * 2 // 5))  # the command keeps the most
        detail = " — " + middle_ellipsis(
            " ".join(fact.detail.split()), room_for_detail, head_share=0.7
        )
    text = " ".join(fact.text.split())
    # a path is told apart by its end (file name), a command or a sentence mostly by its start
    share = 0.3 if fact.kind in _PATH_KINDS else 0.7
    limit = max(_MIN_FACT_CHARS, min(_FACT_CHARS, room - len(prefix) - len(detail)))
    return prefix + middle_ellipsis(text, limit, head_share=share) + detail


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
    from core.llm.factory import make_summarizer
    from core.llm.protocol import LLMError

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


def side_by_side_table(
    index: int, recorded: Forgotten, replayed: Forgotten, rows: list[SideBySide]
) -> Table:
    """The recall per kind under the recorded summary and the replayed one, and the facts only
    one of them keeps."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"compaction {index}: recorded summary {_recall(recorded)} · replayed "
        f"{_recall(replayed)}",
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("kind")
    table.add_column("recorded", justify="right")
    table.add_column("replayed", justify="right")
    table.add_column("kept by one only")
    theirs = {k.kind: k for k in replayed.by_kind}
    for kind in recorded.by_kind:
        other = theirs.get(kind.kind)
        only = [
            ("R " if r.kept_by_recorded else "S ") + _fact_line(r.fact)
            for r in rows
            if r.fact.kind == kind.kind and r.kept_by_recorded != r.kept_by_replayed
        ][:6]
        table.add_row(
            kind.kind,
            f"{kind.kept}/{kind.facts}",
            f"{other.kept}/{other.facts}" if other else "-",
            Text("\n".join(only)),
        )
    table.caption = "R: only the recorded summary keeps it; S: only the replayed one"
    return table


def _recall(forgotten: Forgotten) -> str:
    return f"{forgotten.recall:.0%}" if forgotten.recall is not None else "-"
