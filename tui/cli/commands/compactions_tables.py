"""What ``ctxscope compactions`` draws: each compaction's report (why, what it forgot, what it
cost), its recall table and the side-by-side comparison of two summaries of one head.

Apart from the command (:mod:`tui.cli.commands.compactions`), which imports it where a table is
drawn: ``--json`` prints no table, and starts without rich and the renderer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from core.insights.compaction_records import CompactionReport
from core.insights.cost import compaction_cost_label
from core.insights.forgotten_facts import FactRecord, Forgotten
from core.insights.named_figures import (
    AGENT_COUNT,
    COMPACTION_AT,
    LAST_PROMPT,
    TOKENS_AFTER,
    CompactionFigures,
    check_figures,
)
from tui.cli.render import tokens

if TYPE_CHECKING:  # (the comparison's rows: only ``--compare`` makes them)
    from core.insights.side_by_side import SideBySide

_DROPPED_SHOWN = 12


def print_report(
    console: Console, report: CompactionReport, recording_check: int | None = None
) -> None:
    """One compaction: why, what it forgot, what it cost (``recording_check``:
    :data:`~core.insights.named_figures.RECORDING_CHECK` before it, shown where it differs
    from the replay's check)."""
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
    if not forgotten.readable:
        return Text(f"  what it forgot: cannot tell — {forgotten.reason}", style="yellow")
    recall = _recall(forgotten)
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


def side_by_side_table(
    index: int, recorded: Forgotten, replayed: Forgotten, rows: list[SideBySide]
) -> Table:
    """The recall per kind under the recorded summary and the replayed one, and the facts only
    one of them keeps."""
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
