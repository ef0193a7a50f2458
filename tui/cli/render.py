"""Shared rich rendering for the headless commands (analyze, replay, compare, policy).

Everything here turns core result models into rich renderables; nothing recomputes an algorithm.
The commands print to standard output through :func:`stdout_console`; progress bars go to
standard error and only when it is a terminal (:func:`progress_reporter`), so ``--json`` output
and pipes stay clean.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from core.insights.diagnosis import OverflowDiagnosis
from core.insights.named_figures import (
    AGENT_COUNT,
    CHECK_FIGURE,
    COMPACTION_AT,
    LAST_PROMPT,
    PEAK,
    RECORDING_CHECK,
    TOKENS_AFTER,
    CompactionFigures,
    Peak,
    check_figures,
    recorded_compactions,
    replay_threshold,
)
from core.model.fastmodel import documented
from core.model.session import Provenance, Session
from core.model.terminal_text import safe
from core.model.write_numbers import counted, format_tokens
from core.policy import Policy
from core.replay import (
    INFERRED,
    CallPoint,
    CompareResult,
    CompareRow,
    FidelityRow,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
)
from tui.figures import call_label

BARS = "▁▂▃▄▅▆▇█"
"""Sparkline levels, lowest to highest."""
MARK_COMPACTION = "▲"
MARK_OVERFLOW = "✗"
SPARK_WIDTH = 96
"""Most characters a sparkline takes; longer sessions are bucketed (each bucket shows its peak)."""


def stdout_console() -> Console:
    """The console commands print their human output to (no colour when not a terminal)."""
    return Console(highlight=False, soft_wrap=False)


def _policy_label(result: ReplayResult) -> str:
    """What the policy line says of whose policy it is (``inferred`` is never a prediction)."""
    if result.policy.name == INFERRED:
        return "  (fitted to this session's own compactions: not a prediction)"
    return "  (the recording agent's own policy)" if result.recording_policy else ""


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
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(*_plain("session", f"{session.id}  ({session.format.value})"))
    if session.path:
        grid.add_row(*_plain("file", safe(session.path)))
    window = result.window if result is not None else session.context_window
    source = result.window_source if result is not None else session.window_source
    evidence = result.window_evidence if result is not None else session.window_evidence
    grid.add_row(*_plain("model", session.model or "(not recorded)"))
    grid.add_row(*_plain("window", f"{tokens(window)} tokens ({source})"))
    if evidence:
        grid.add_row(*_plain("", evidence))
    calls = sum(1 for m in session.messages if m.is_model_call)
    grid.add_row(
        *_plain(
            "size",
            f"{counted(len(session.messages), 'message')}, {counted(calls, 'model call')}, "
            f"{counted(recorded_compactions(session), 'recorded compaction')}",
        )
    )
    if result is not None:
        grid.add_row(
            *_plain(
                "policy",
                f"{result.policy.name}: threshold {replay_threshold(result).label}"
                + _policy_label(result),
            )
        )
    if session.diagnostics:
        grid.add_row(
            *_plain("loader notes", f"{len(session.diagnostics)} (lines skipped or repaired)")
        )
    return grid


def summary_table(
    summary: ReplaySummary, title: str = "replay summary", top: Peak | None = None
) -> Table:
    """The figures of one replay; ``top``: the recording's peak prompt
    (:func:`core.insights.named_figures.peak`, else the summary's largest recorded figure)."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    rows = [
        ("model calls", tokens(summary.calls)),
        (
            f"{PEAK.name}, {top.provenance}" if top is not None else "peak, recorded",
            f"{tokens(top.tokens)} (call {top.call_index})"
            if top is not None
            else tokens(summary.peak_recorded),
        ),
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


OUTCOME_STYLE = {
    "same": "green",
    "earlier": "yellow",
    "later": "yellow",
    "missed": "red",
    "manual": "cyan",
}
"""The style of a compaction's outcome (``same``, ``earlier``, …) wherever one is printed."""


def compaction_block(
    row: FidelityRow,
    figures: CompactionFigures | None,
    *,
    threshold: bool = False,
    recording_check: int | None = None,
) -> Group:
    """One recorded compaction in two lines: where it was and how the replay matched it, then
    its figures, each under its name in :mod:`core.insights.named_figures` (``threshold``: say
    the threshold its check was compared with, and where it comes from; ``recording_check``:
    :data:`~core.insights.named_figures.RECORDING_CHECK`, shown where it differs from the
    replay's check)."""
    named = figures
    at = named.at_message if named is not None else row.message_index
    call = "-" if row.recorded_call_index is None else str(row.recorded_call_index)
    text = Text(f"#{row.recorded_index} {row.trigger} · {COMPACTION_AT.name} {at} · call {call}")
    delta = f" {row.call_delta:+d}" if row.call_delta else ""
    replay = "" if row.replay_call_index is None else f" at call {row.replay_call_index}"
    text.append(" · replay: ")
    text.append(row.outcome + delta, style=OUTCOME_STYLE.get(row.outcome, ""))
    text.append(replay)
    if threshold and row.threshold is not None:
        said = f"threshold {row.threshold:,} ({row.threshold_source or 'rule'})"
        text.append(" · " + said.replace(" ", "\u00a0"))
    parts = [_figure(AGENT_COUNT.name, named.agent_count if named else row.tokens_before)]
    if named is None:
        parts.append(_figure(CHECK_FIGURE.name, None))
    else:  # the replay's check, and the check on the recording where it differs (named)
        parts += [_figure(name, value) for name, value in check_figures(named, recording_check)]
    if named is not None:
        if named.last_prompt is not None:
            parts.append(
                _figure(LAST_PROMPT.name, named.last_prompt, f"call {named.last_prompt_call}")
            )
        if named.tokens_after is not None:
            parts.append(
                _figure(TOKENS_AFTER.name, named.tokens_after, named.tokens_after_source or "")
            )
    return Group(text, Padding(Text(" · ".join(parts), style="dim"), (0, 0, 0, 4)))


def _figure(name: str, value: int | None, why: str = "") -> str:
    """``name value (why)`` held together on one line (non-breaking spaces)."""
    said = f"{name} {tokens(value)}" + (f" ({why})" if why else "")
    return said.replace(" ", "\u00a0")


COMPACTION_LEGEND = (
    f"{AGENT_COUNT.name}: the agent's own figure when it compacted; {CHECK_FIGURE.name}: "
    f"ctxscope's replay of its check; {RECORDING_CHECK.name}: the same check where the run "
    "makes exactly the recording's compactions (shown where it differs); "
    f"{LAST_PROMPT.name}: the last recorded prompt before it; "
    f"{TOKENS_AFTER.name}: the context it left (next prompt: the next call's recorded prompt, "
    "recorded: the file's count, estimated, what stays: system + tools + summary + kept tail); "
    f"{COMPACTION_AT.name}: the first message after it (its summary), 0-based"
)
"""The legend under a list of recorded compactions."""


def fidelity_table(
    rows: Sequence[FidelityRow],
    figures: Sequence[CompactionFigures] = (),
    recording_checks: Mapping[int, int] | None = None,
) -> Group:
    """How the replay matched each recorded compaction, with its named figures (``figures``:
    :func:`core.insights.named_figures.compaction_figures`; ``recording_checks``:
    :func:`core.insights.named_figures.recording_checks`)."""
    by_index = {f.recorded_index: f for f in figures}
    checks = recording_checks or {}
    parts: list[Any] = [Text("recorded compactions", style="italic")]
    parts += [
        compaction_block(
            row, by_index.get(row.recorded_index), recording_check=checks.get(row.recorded_index)
        )
        for row in rows
    ]
    parts.append(Text(COMPACTION_LEGEND, style="dim"))
    parts.append(Text(""))
    return Group(*parts)


_KIND_STYLE = {
    "compact": "cyan",
    "recorded-compaction": "cyan",
    "prune": "magenta",
    "overflow": "bold red",
    "continue": "dim",
    "truncate": "yellow",
}


def events_table(
    events: Sequence[ReplayEvent],
    *,
    limit: int | None = 40,
    figures: Sequence[CompactionFigures] = (),
) -> Group:
    """The replay's events (truncations are counted in the title, not listed): one line of
    figures per event, its reason under it at the full width (a narrow "why" column made every
    event ten lines tall at 80 columns)."""
    shown = [e for e in events if e.kind != "truncate"]
    truncations = len(events) - len(shown)
    parts: list[Any] = [
        Text(f"events ({len(shown)}; plus {truncations} truncated tool outputs)", style="italic")
    ]
    by_index = {f.recorded_index: f for f in figures}
    hidden = 0
    if limit is not None and len(shown) > limit:
        hidden = len(shown) - limit
        shown = shown[:limit]
    for event in shown:
        kind = "recorded" if event.kind == "recorded-compaction" else event.kind
        label = kind if event.trigger is None else f"{kind} ({event.trigger})"
        at = event.at_message_index if event.at_message_index is not None else event.message_index
        named = by_index.get(event.recorded_index) if event.recorded_index is not None else None
        line = Text("  ")
        line.append(
            f"{call_label(event.call_index)} · message {at} · "
            if named is None
            else f"{call_label(event.call_index)} · {COMPACTION_AT.name} {named.at_message} · "
        )
        line.append(label, style=_KIND_STYLE.get(event.kind, ""))
        if named is not None:
            # the check → the tokens after, as the compactions list names them
            line.append(f" · {tokens(named.check_tokens)} → {tokens(named.tokens_after)}")
        elif event.tokens_before is not None or event.tokens_after is not None:
            line.append(f" · {tokens(event.tokens_before)} → {tokens(event.tokens_after)}")
        parts.append(line)
        parts.append(Padding(Text(event.reason, style="dim"), (0, 0, 0, 4)))
    if hidden:
        parts.append(Text(f"{hidden} more events not shown (--json has all of them)", style="dim"))
    parts.append(Text(""))
    return Group(*parts)


TIMELINE_ALL_UP_TO = 60
"""A replay of at most this many calls prints every call of its timeline; a longer one the calls
where something happened (``--all-calls``: every call)."""


def timeline_table(result: ReplayResult, *, all_calls: bool = False) -> Table:
    """The replay's timeline, one row per call: the recorded and the simulated context, what the
    policy's check measured and against which threshold, and what happened there."""
    points = result.points
    happened = _happenings(result)
    quiet = not all_calls and len(points) > TIMELINE_ALL_UP_TO
    shown = [
        p
        for p in points
        if not quiet or happened.get(p.call_index) or p.call_index in (0, len(points) - 1)
    ]
    table = Table(
        title=f"timeline ({len(points):,} calls)",
        box=box.SIMPLE,
        title_justify="left",
        caption_justify="left",
        pad_edge=False,
        padding=(0, 1),
    )
    for header in ("call", "msg", "recorded", "simulated", "checked", "threshold"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("what happened", overflow="fold")
    for point in shown:
        threshold = tokens(point.threshold)
        if point.threshold is not None and point.threshold_source == "inferred":
            threshold += " i"
        table.add_row(
            *_plain(
                str(point.call_index),
                str(point.message_index),
                _recorded_cell(point),
                tokens(point.simulated_tokens),
                tokens(point.check_tokens) if point.checked else "",
                threshold,
                ", ".join(happened.get(point.call_index, [])),
            )
        )
    notes = ["checked: what the policy's check measured before the call; i: an inferred threshold"]
    if quiet:
        notes.append(
            f"{len(points) - len(shown):,} calls where nothing happened are not shown "
            "(--all-calls shows every one)"
        )
    table.caption = "; ".join(notes)
    return table


def _recorded_cell(point: CallPoint) -> str:
    """The recorded figure of a call: its usage's, else a figure the file holds otherwise (a
    refused call's count in its error), else ``-``."""
    if point.recorded_tokens is not None:
        return tokens(point.recorded_tokens)
    if point.baseline_provenance is Provenance.RECORDED:
        return tokens(point.baseline_tokens)
    return "-"


def _happenings(result: ReplayResult) -> dict[int, list[str]]:
    """What happened at each call, in a few words: the check that fired, events, overflows,
    a window or threshold that changed."""
    happened: dict[int, list[str]] = {}
    truncated: dict[int, int] = {}
    for event in result.events:
        if event.call_index is None:
            continue
        if event.kind == "truncate":
            truncated[event.call_index] = truncated.get(event.call_index, 0) + 1
        elif event.kind != "continue":
            kind = "recorded compaction" if event.kind == "recorded-compaction" else event.kind
            trigger = f" ({event.trigger})" if event.trigger else ""
            happened.setdefault(event.call_index, []).append(kind + trigger)
    previous: CallPoint | None = None
    for point in result.points:
        words = happened.setdefault(point.call_index, [])
        if point.check_fired and not words:
            words.append("check fired")
        if point.overflow_recorded:
            words.append(f"recorded overflow ({point.overflow_recorded_reason or 'over-window'})")
        if previous is not None and point.window != previous.window:
            words.append(f"window {tokens(point.window)}")
        elif previous is not None and point.threshold != previous.threshold:
            words.append(f"threshold {tokens(point.threshold)}")
        if point.call_index in truncated:
            words.append(f"{truncated[point.call_index]} output(s) truncated")
        previous = point
    return {call: words for call, words in happened.items() if words}


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


def compare_table(result: CompareResult, width: int = 100) -> Group:
    """Several policies over one session: one column per policy, one row per figure. Numbers are
    never cut: when the policies do not fit ``width`` side by side, they are shown a few at a
    time, each group under the same row labels (which wrap)."""
    rows = _compare_rows(result)
    label_width = min(max(len(label) for label, _cell in rows), COMPARE_LABEL_MAX)
    title = f"{result.session_id}: {len(result.rows)} policies, window {tokens(result.window)}"
    measure = Console(width=100_000, file=io.StringIO())  # (measures clamp to its width)
    groups: list[list[CompareRow]] = [[]]
    for row in result.rows:
        candidate = [*groups[-1], row]
        table = _compare_group("", candidate, rows, label_width)
        if groups[-1] and measure.measure(table).maximum > width:
            groups.append([row])
        else:
            groups[-1] = candidate
    tables = [
        _compare_group(title if k == 0 else "", group, rows, label_width)
        for k, group in enumerate(groups)
    ]
    return Group(*tables)


COMPARE_LABEL_MAX = 22
"""The row labels of ``compare`` wrap past this many characters (the figures never do)."""

_CompareCell = Callable[[CompareRow], "str | Text"]


def _compare_rows(result: CompareResult) -> list[tuple[str, _CompareCell]]:
    """The figures ``compare`` shows, as (label, cell of a policy)."""
    rows: list[tuple[str, _CompareCell]] = [
        ("threshold", lambda row: tokens(row.threshold)),
        ("peak context", lambda row: tokens(row.summary.peak_simulated)),
        ("compactions", lambda row: str(row.summary.compactions)),
        (
            "overflows",
            lambda row: Text(
                str(row.summary.overflows_simulated),
                style="bold red" if row.summary.overflows_simulated else "green",
            ),
        ),
        (
            "  avoided / caused",
            lambda row: f"{row.summary.overflows_avoided} / {row.summary.overflows_caused}",
        ),
        ("tokens truncated", lambda row: tokens(row.summary.tokens_truncated)),
        ("tokens pruned", lambda row: tokens(row.summary.tokens_pruned)),
        ("tokens summarised", lambda row: tokens(row.summary.tokens_summarised)),
        ("summary tokens", lambda row: tokens(row.summary.summary_tokens)),
        ("tokens kept in tails", lambda row: tokens(row.summary.tail_tokens)),
        ("context at the end", lambda row: tokens(row.summary.final_tokens)),
    ]
    if any(sum(row.fidelity.values()) for row in result.rows):
        rows.append(("recorded compactions", lambda row: ""))
        for outcome in ("same", "earlier", "later", "missed", "manual", "untestable"):
            if any(row.fidelity.get(outcome) for row in result.rows):
                rows.append((f"  {outcome}", _fidelity_count(outcome)))
    return rows


def _compare_group(
    title: str,
    group: list[CompareRow],
    rows: list[tuple[str, _CompareCell]],
    label_width: int,
) -> Table:
    table = Table(
        title=title or None, box=box.SIMPLE_HEAVY, title_justify="left", collapse_padding=True
    )
    table.add_column(
        "", style="bold", min_width=label_width + 2, max_width=label_width + 2, overflow="fold"
    )
    for row in group:  # (the groups are made so that every figure fits: nothing is cut)
        table.add_column(Text(row.policy), justify="right", no_wrap=True)
    for label, cell in rows:
        table.add_row(*_plain(label, *(cell(row) for row in group)))
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
    for name, field in documented(type(model)).items():
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
