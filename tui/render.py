"""Shared rich rendering for the headless commands (analyze, replay, compare, policy).

Everything here turns core result models into rich renderables; nothing recomputes an algorithm.
The commands print to standard output through :func:`stdout_console`; progress bars go to
standard error and only when it is a terminal (:func:`progress_reporter`), so ``--json`` output
and pipes stay clean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, JustifyMethod
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from core.diagnosis import OverflowDiagnosis
from core.models import Session
from core.policy import Policy
from core.replay import (
    CompareResult,
    CompareRow,
    FidelityRow,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
)
from core.units import format_tokens
from tui.commands._session import (
    fail,
    load_or_fail,
    load_policy_for,
    load_progress,
    progress_reporter,
    replay_with_progress,
    replayer_of,
    resolve_policy_or_fail,
)

# The commands' plumbing, which lives apart (without rich), is still importable from here.
__all__ = [
    "fail",
    "load_or_fail",
    "load_policy_for",
    "load_progress",
    "progress_reporter",
    "replay_with_progress",
    "replayer_of",
    "resolve_policy_or_fail",
]


BARS = "▁▂▃▄▅▆▇█"
"""Sparkline levels, lowest to highest."""
MARK_COMPACTION = "▲"
MARK_OVERFLOW = "✗"
SPARK_WIDTH = 96
"""Most characters a sparkline takes; longer sessions are bucketed (each bucket shows its peak)."""


def stdout_console() -> Console:
    """The console commands print their human output to (no colour when not a terminal)."""
    return Console(highlight=False, soft_wrap=False)


def _plain(*cells: Any) -> list[Any]:
    """Table cells with strings taken literally (a ``[bash]`` in a value is not rich markup)."""
    return [Text(cell) if isinstance(cell, str) else cell for cell in cells]


def tokens(value: int | None) -> str:
    """A token count with thousands separators (``-`` when unknown)."""
    return "-" if value is None else format_tokens(value)


# --- sparkline ------------------------------------------------------------------------------------


def sparkline(
    values: Sequence[int],
    *,
    ceiling: int | None = None,
    compactions: Sequence[int] = (),
    overflows: Sequence[int] = (),
    width: int = SPARK_WIDTH,
) -> Text:
    """One character per call (or per bucket of calls) from ``▁`` to ``█``, scaled to ``ceiling``
    (the window) or the peak; a second line marks compactions (``▲``) and overflows (``✗``)."""
    if not values:
        return Text("(no model calls)", style="dim")
    count = len(values)
    buckets = min(count, max(width, 1))
    top = max(ceiling or 0, max(values), 1)
    compaction_set = set(compactions)
    overflow_set = set(overflows)
    bars = Text()
    marks = Text()
    for bucket in range(buckets):
        start = bucket * count // buckets
        stop = max(start + 1, (bucket + 1) * count // buckets)
        peak = max(values[start:stop])
        level = min(len(BARS) - 1, peak * len(BARS) // (top + 1))
        calls = range(start, stop)
        overflowed = any(c in overflow_set for c in calls)
        compacted = any(c in compaction_set for c in calls)
        style = "red" if overflowed else ("yellow" if level >= len(BARS) - 2 else "green")
        bars.append(BARS[level], style=style)
        if overflowed:
            marks.append(MARK_OVERFLOW, style="bold red")
        elif compacted:
            marks.append(MARK_COMPACTION, style="cyan")
        else:
            marks.append(" ")
    lines = Text()
    lines.append_text(bars)
    if compaction_set or overflow_set:
        lines.append("\n")
        lines.append_text(marks)
    return lines


def replay_sparkline(
    result: ReplayResult, *, simulated: bool = True, width: int = SPARK_WIDTH
) -> Text:
    """The per-call context of a replay (simulated, or recorded/baseline) with its marks."""
    points = result.points
    if simulated:
        values = [p.simulated_tokens for p in points]
        compactions = sorted(
            {
                e.call_index
                for e in result.events
                if e.kind in ("compact", "recorded-compaction") and e.call_index is not None
            }
        )
        overflows = [p.call_index for p in points if p.overflow_simulated]
    else:
        values = [p.baseline_tokens for p in points]
        compactions = []
        overflows = [p.call_index for p in points if p.overflow_recorded]
    return sparkline(
        values, ceiling=result.window, compactions=compactions, overflows=overflows, width=width
    )


def sparkline_panel(result: ReplayResult, console_width: int = 100) -> Panel:
    """Recorded and simulated sparklines one above the other, scaled to the same window."""
    label = max(len("recorded"), len(result.policy.name))
    width = max(16, min(SPARK_WIDTH, console_width - label - 6))
    legend = Text(
        f"scale: 0 … {tokens(result.window or result.summary.peak_simulated)} tokens   "
        f"{MARK_COMPACTION} compaction   {MARK_OVERFLOW} overflow",
        style="dim",
    )
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_row(*_plain("recorded", replay_sparkline(result, simulated=False, width=width)))
    grid.add_row(*_plain(result.policy.name, replay_sparkline(result, simulated=True, width=width)))
    return Panel(
        Group(grid, legend),
        title=f"context at each of {len(result.points):,} calls",
        box=box.ROUNDED,
        expand=False,
    )


# --- tables ---------------------------------------------------------------------------------------


def session_header(session: Session, result: ReplayResult | None = None) -> Table:
    """What was loaded: format, model, window (and where it came from), sizes."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row(*_plain("session", f"{session.id}  ({session.format.value})"))
    if session.path:
        grid.add_row(*_plain("file", session.path))
    window = result.window if result is not None else session.context_window
    source = result.window_source if result is not None else session.window_source
    grid.add_row(*_plain("model", session.model or "(not recorded)"))
    grid.add_row(*_plain("window", f"{tokens(window)} tokens ({source})"))
    calls = sum(1 for m in session.messages if m.is_model_call)
    grid.add_row(
        *_plain(
            "size",
            f"{len(session.messages):,} messages, {calls:,} model calls, "
            f"{len(session.compactions)} recorded compactions",
        )
    )
    if result is not None:
        grid.add_row(
            *_plain(
                "policy",
                f"{result.policy.name}: threshold {tokens(result.threshold)}"
                + ("  (the recording agent's own policy)" if result.recording_policy else ""),
            )
        )
    if session.diagnostics:
        grid.add_row(
            *_plain("loader notes", f"{len(session.diagnostics)} (lines skipped or repaired)")
        )
    return grid


def summary_table(summary: ReplaySummary, title: str = "replay summary") -> Table:
    """The figures of one replay."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    rows = [
        ("model calls", tokens(summary.calls)),
        ("peak context, recorded", tokens(summary.peak_recorded)),
        (
            "peak context, simulated",
            f"{tokens(summary.peak_simulated)} (call {summary.peak_call_index})"
            if summary.peak_call_index is not None
            else tokens(summary.peak_simulated),
        ),
        ("compactions", f"{summary.compactions} ({summary.manual_compactions} manual)"),
        ("  attempts that changed nothing", str(summary.noop_compactions)),
        ("overflows, recorded", str(summary.overflows_recorded)),
        ("overflows, simulated", str(summary.overflows_simulated)),
        ("  avoided / caused", f"{summary.overflows_avoided} / {summary.overflows_caused}"),
        ("tokens truncated", tokens(summary.tokens_truncated)),
        ("tokens pruned", tokens(summary.tokens_pruned)),
        ("tokens summarised", tokens(summary.tokens_summarised)),
        ("summary tokens written", tokens(summary.summary_tokens)),
        ("tokens kept in tails", tokens(summary.tail_tokens)),
        ("context at the last call", tokens(summary.final_tokens)),
    ]
    for label, value in rows:
        table.add_row(*_plain(label, value))
    return table


_OUTCOME_STYLE = {
    "same": "green",
    "earlier": "yellow",
    "later": "yellow",
    "missed": "red",
    "manual": "cyan",
}


def fidelity_table(rows: Sequence[FidelityRow]) -> Table:
    """How the replay matched each recorded compaction."""
    table = Table(title="recorded compactions", box=box.SIMPLE, title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"),
        ("message", "right"),
        ("trigger", "left"),
        ("tokens before", "right"),
        ("recorded call", "right"),
        ("replay call", "right"),
        ("outcome", "left"),
    )
    for header, justify in columns:
        table.add_column(header, justify=justify)
    for row in rows:
        delta = ""
        if row.call_delta:
            delta = f" ({row.call_delta:+d})"
        table.add_row(
            *_plain(
                str(row.recorded_index),
                str(row.message_index),
                row.trigger,
                tokens(row.tokens_before),
                "-" if row.recorded_call_index is None else str(row.recorded_call_index),
                "-" if row.replay_call_index is None else str(row.replay_call_index),
                Text(row.outcome + delta, style=_OUTCOME_STYLE.get(row.outcome, "")),
            )
        )
    return table


_KIND_STYLE = {
    "compact": "cyan",
    "recorded-compaction": "cyan",
    "prune": "magenta",
    "overflow": "bold red",
    "continue": "dim",
    "truncate": "yellow",
}


def events_table(events: Sequence[ReplayEvent], *, limit: int | None = 40) -> Table:
    """The replay's events (truncations are counted in the title, not listed)."""
    shown = [e for e in events if e.kind != "truncate"]
    truncations = len(events) - len(shown)
    title = f"events ({len(shown)}; plus {truncations} truncated tool outputs)"
    table = Table(title=title, box=box.SIMPLE, title_justify="left")
    table.add_column("call", justify="right", no_wrap=True)
    table.add_column("message", justify="right", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    table.add_column("why", overflow="fold", ratio=1)
    hidden = 0
    if limit is not None and len(shown) > limit:
        hidden = len(shown) - limit
        shown = shown[:limit]
    for event in shown:
        kind = "recorded" if event.kind == "recorded-compaction" else event.kind
        label = kind if event.trigger is None else f"{kind} ({event.trigger})"
        table.add_row(
            *_plain(
                "-" if event.call_index is None else str(event.call_index),
                str(
                    event.at_message_index
                    if event.at_message_index is not None
                    else event.message_index
                ),
                Text(label, style=_KIND_STYLE.get(event.kind, "")),
                tokens(event.tokens_before),
                tokens(event.tokens_after),
                event.reason,
            )
        )
    if hidden:
        table.caption = f"{hidden} more events not shown (--json has all of them)"
    return table


def diagnosis_panel(diagnosis: OverflowDiagnosis) -> Panel:
    """Why the session overflowed (or came close), with its top contributors."""
    parts: list[Any] = [Text(diagnosis.explanation)]
    if diagnosis.contributors:
        table = Table(
            box=box.SIMPLE, title="biggest since the last compaction", title_justify="left"
        )
        table.add_column("message", justify="right")
        table.add_column("role")
        table.add_column("tool")
        table.add_column("tokens", justify="right")
        table.add_column("share", justify="right")
        for item in diagnosis.contributors:
            table.add_row(
                *_plain(
                    str(item.message_index),
                    item.role,
                    item.tool_name or "",
                    tokens(item.tokens),
                    f"{item.share:.1%}",
                )
            )
        parts.append(table)
    if diagnosis.by_tool:
        tools = Table(box=box.SIMPLE, title="tool outputs by tool", title_justify="left")
        tools.add_column("tool")
        tools.add_column("outputs", justify="right")
        tools.add_column("tokens", justify="right")
        tools.add_column("share", justify="right")
        for share in diagnosis.by_tool[:8]:
            tools.add_row(
                *_plain(
                    share.tool_name, str(share.outputs), tokens(share.tokens), f"{share.share:.1%}"
                )
            )
        parts.append(tools)
    if diagnosis.overflowed:
        title, style = "overflow", "red"
    elif diagnosis.call_index is not None:
        title, style = "close to the window", "yellow"
    else:
        title, style = "no overflow", "green"
    return Panel(Group(*parts), title=title, border_style=style, box=box.ROUNDED)


def notes_block(notes: Sequence[str]) -> Text:
    """The replay's notes, one bullet each."""
    text = Text()
    for note in notes:
        text.append("• ", style="dim")
        text.append(note + "\n", style="dim")
    return text


def compare_table(result: CompareResult) -> Table:
    """Several policies over one session: one column per policy, one row per figure."""
    table = Table(
        title=f"{result.session_id}: {len(result.rows)} policies, window {tokens(result.window)}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("", style="bold", no_wrap=True)
    for row in result.rows:
        table.add_column(Text(row.policy), justify="right", no_wrap=True)

    def figures(label: str, cell: Callable[[CompareRow], str | Text]) -> None:
        table.add_row(*_plain(label, *(cell(row) for row in result.rows)))

    figures("threshold", lambda row: tokens(row.threshold))
    figures("peak context", lambda row: tokens(row.summary.peak_simulated))
    figures("compactions", lambda row: str(row.summary.compactions))
    figures(
        "overflows",
        lambda row: Text(
            str(row.summary.overflows_simulated),
            style="bold red" if row.summary.overflows_simulated else "green",
        ),
    )
    figures(
        "  avoided / caused",
        lambda row: f"{row.summary.overflows_avoided} / {row.summary.overflows_caused}",
    )
    figures("tokens truncated", lambda row: tokens(row.summary.tokens_truncated))
    figures("tokens pruned", lambda row: tokens(row.summary.tokens_pruned))
    figures("tokens summarised", lambda row: tokens(row.summary.tokens_summarised))
    figures("summary tokens", lambda row: tokens(row.summary.summary_tokens))
    figures("tokens kept in tails", lambda row: tokens(row.summary.tail_tokens))
    figures("context at the end", lambda row: tokens(row.summary.final_tokens))
    if any(sum(row.fidelity.values()) for row in result.rows):
        for outcome in ("same", "earlier", "later", "missed", "manual", "untestable"):
            if any(row.fidelity.get(outcome) for row in result.rows):
                figures(f"recorded compactions {outcome}", _fidelity_count(outcome))
    return table


def _fidelity_count(outcome: str) -> Callable[[CompareRow], str]:
    """The cell of one fidelity outcome: how many recorded compactions the policy matched so."""
    return lambda row: str(row.fidelity.get(outcome, 0))


def policy_table(policy: Policy) -> Table:
    """Every field of a policy with its value and its help text (the field's docstring)."""
    table = Table(
        title=f"policy {policy.name}" + (f": {policy.description}" if policy.description else ""),
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold", max_width=40)
    table.add_column("help", overflow="fold", ratio=1)
    for name, value, help_text in policy_fields(policy):
        table.add_row(*_plain(name, value, help_text))
    return table


def policy_fields(model: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    """``(dotted name, value as TOML-ish text, help)`` for every field, nested sections flattened."""
    from pydantic import BaseModel

    rows: list[tuple[str, str, str]] = []
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        dotted = f"{prefix}{name}"
        if isinstance(value, BaseModel):
            rows.extend(policy_fields(value, dotted + "."))
            continue
        help_text = " ".join((field.description or "").split())
        rows.append((dotted, _value_text(value), help_text))
    return rows


def _value_text(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        flat = value.replace("\n", "\\n")
        return f'"{flat[:120]}…"' if len(flat) > 120 else f'"{flat}"'
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = ", ".join(
            f"{key} = {{{', '.join(f'{k}={v}' for k, v in item.model_dump(exclude_none=True).items())}}}"
            if hasattr(item, "model_dump")
            else f"{key} = {item}"
            for key, item in value.items()
        )
        return "{ " + inner + " }"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)
