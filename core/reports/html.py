"""``ctxscope report PATH -o OUT.html``: one session as a self-contained HTML page.

:func:`render_html` reads what ``analyze`` computes — the replay, its overflow diagnosis and the
threshold the session's compactions imply — and writes a page to attach to a pull request or an
issue: the gauge over the calls as an inline SVG chart, the diagnosis, the recorded compactions
(trigger, evidence, tokens before and after, whether the agent's preset compacts there), the
thresholds and the notes. It never replays (callers replay first, as for the diagnosis).

Self-contained means the page asks for nothing: CSS and SVG inline, no script, no web font (the
reader's own system fonts), no image, no link outside the page; every text from the session is
escaped. After the diagnosis, what fills the window at the fullest call, by category
(:mod:`core.insights.breakdown`); each compaction says what its summary kept of its head
(:mod:`core.insights.forgotten_facts`) and what it cost (:mod:`core.insights.cost`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from html import escape
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from core.fleet.session_rows import CompactionRow, compaction_rows
from core.insights.breakdown import CATEGORIES, CATEGORY_LABELS, breakdown
from core.insights.cost import format_usd
from core.insights.diagnosis import OverflowDiagnosis
from core.insights.named_figures import (
    AGENT_COUNT,
    CHECK_FIGURE,
    COMPACTION_AT,
    LAST_PROMPT,
    RECORDING_CHECK,
    TOKENS_AFTER,
    peak,
)
from core.model.session import Session
from core.model.write_numbers import format_tokens, short_tokens
from core.replay.results import CallPoint, ReplayResult
from core.reports.analyze import AnalysisReport

CHART_WIDTH = 960
"""The chart's width in SVG units (it scales with the page)."""
CHART_HEIGHT = 280
"""Its height."""
MAX_COLUMNS = 480
"""Most columns the chart draws; with more calls, each column shows the peak of a group."""

_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 12, 14, 34

_TICK_STEPS = tuple(m * 10**e for e in range(2, 8) for m in (1, 2, 5))
"""Token steps between the chart's grid lines: the first that draws at most five."""

_PALETTE = (
    "#8d99a6",
    "#6a9fd8",
    "#1f6fd1",
    "#9c6ade",
    "#d48806",
    "#c62828",
    "#2e9e6b",
    "#b0862f",
    "#5d6875",
)
"""The breakdown's categories, bottom first."""

_Scale = Callable[[float], float]
"""Tokens to the chart's y coordinate."""

_CSS = """
:root { color-scheme: light dark; --fg: #1d232a; --muted: #5d6875; --line: #d5dbe1;
  --recorded: #8d99a6; --simulated: #1f6fd1; --window: #c62828; --threshold: #d48806;
  --bg: #ffffff; --panel: #f4f6f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ec; --muted: #9aa5b1; --line: #39424c;
  --recorded: #6f7b88; --simulated: #5aa2ff; --window: #ff6b6b; --threshold: #f0b429;
  --bg: #14181d; --panel: #1c2229; } }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: var(--fg); background: var(--bg); max-width: 1040px; margin: 2em auto; padding: 0 1em;
  line-height: 1.45; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; word-break: break-all; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid var(--line); }
.meta, .muted { color: var(--muted); }
.verdict { background: var(--panel); padding: 0.8em 1em; border-left: 4px solid var(--window); }
.verdict.ok { border-left-color: var(--simulated); }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 0.3em 0.6em; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
svg { width: 100%; height: auto; }
svg text { fill: var(--muted); font-size: 11px; font-family: inherit; }
.legend span { margin-right: 1.2em; white-space: nowrap; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em;
  margin-right: 0.3em; }
code { font-size: 0.95em; }
"""


def render_html(session: Session, result: ReplayResult, report: AnalysisReport) -> str:
    """The page (see the module docstring)."""
    name = Path(session.path).name if session.path else session.id
    compactions = compaction_rows(session.path or session.id, session, result, report.cost)
    body = [
        f"<h1>{_e(name)}</h1>",
        f'<p class="meta">{_e(_meta_line(report))}</p>',
        _verdict(report.diagnosis, report.overflow),
        "<h2>Context at every call</h2>",
        chart_svg(result),
        _legend(result.policy.name),
        _summary_table(report, session, result),
        "<h2>Overflow diagnosis</h2>",
        _diagnosis(report.diagnosis),
        "<h2>What fills the window</h2>",
        _breakdown(session, result),
        "<h2>Compactions</h2>",
        _compactions(compactions, _recalls(report)),
        "<h2>Threshold</h2>",
        _threshold(report),
    ]
    if report.notes:
        body += ["<h2>Notes</h2>", _list(report.notes)]
    body.append(
        f'<p class="muted">Written by ctxscope {_e(_version())} from {_e(session.path or "")}, '
        f"replayed under the policy <code>{_e(report.policy)}</code>.</p>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ctxscope: {_e(name)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# -- the chart ---------------------------------------------------------------------------------


def chart_svg(result: ReplayResult) -> str:
    """The gauge as an inline SVG: the recorded context as grey columns, the simulated one as a
    blue line, the window and the threshold as lines, compactions and overflows as marks."""
    points = result.points
    if not points:
        return '<p class="muted">The session has no model call.</p>'
    groups = _groups(len(points))
    top = max(
        max(max(p.baseline_tokens, p.simulated_tokens) for p in points),
        max((p.window or 0) for p in points),
        1,
    )
    top = int(top * 1.06)
    plot_w = CHART_WIDTH - _LEFT - _RIGHT
    plot_h = CHART_HEIGHT - _TOP - _BOTTOM
    step = plot_w / len(groups)

    def y(tokens: float) -> float:
        return round(_TOP + plot_h * (1 - tokens / top), 1)

    parts = [
        f'<svg viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" aria-label="context per call">'
    ]
    parts += _axes(top, y, plot_w)
    simulated: list[str] = []
    window: list[str] = []
    threshold: list[str] = []
    for column, (first, last) in enumerate(groups):
        members = points[first : last + 1]
        x0 = _LEFT + column * step
        recorded = max(p.baseline_tokens for p in members)
        height = round(y(0) - y(recorded), 1)
        over = any(p.overflow_recorded for p in members)
        colour = "var(--window)" if over else "var(--recorded)"
        parts.append(
            f'<rect x="{x0:.1f}" y="{y(recorded)}" width="{max(step - 0.6, 0.6):.1f}" '
            f'height="{height}" fill="{colour}"><title>{_e(_tip(members))}</title></rect>'
        )
        mid = round(x0 + step / 2, 1)
        simulated.append(f"{mid},{y(max(p.simulated_tokens for p in members))}")
        if members[-1].window:
            window.append(f"{mid},{y(members[-1].window)}")
        if members[-1].threshold:
            threshold.append(f"{mid},{y(members[-1].threshold)}")
    parts += _line(window, "var(--window)", "6 4")
    parts += _line(threshold, "var(--threshold)", "2 3")
    parts += _line(simulated, "var(--simulated)", None)
    parts += _marks(result, groups, step, y)
    parts += _x_labels(groups, step)
    parts.append("</svg>")
    return "\n".join(parts)


def _groups(calls: int) -> list[tuple[int, int]]:
    """``(first, last)`` call of each column."""
    columns = min(calls, MAX_COLUMNS)
    return [(c * calls // columns, (c + 1) * calls // columns - 1) for c in range(columns)]


def _axes(top: int, y: _Scale, plot_w: float) -> list[str]:
    step = next((s for s in _TICK_STEPS if top / s <= 5), _TICK_STEPS[-1])
    parts = []
    for tokens in range(0, top, step):
        parts.append(
            f'<line x1="{_LEFT}" x2="{_LEFT + plot_w:.1f}" y1="{y(tokens)}" y2="{y(tokens)}" '
            'stroke="var(--line)" stroke-width="1"/>'
            f'<text x="{_LEFT - 6}" y="{y(tokens) + 4}" text-anchor="end">'
            f"{short_tokens(tokens)}</text>"
        )
    return parts


def _line(points: list[str], colour: str, dashes: str | None) -> list[str]:
    if len(points) < 2:
        return []
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    return [
        f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" '
        f'stroke-width="1.6"{dash}/>'
    ]


def _marks(
    result: ReplayResult, groups: list[tuple[int, int]], step: float, y: _Scale
) -> list[str]:
    """◇ where the recording compacted, ◆ where the policy did (below the axis)."""
    column_of = {
        call: c for c, (first, last) in enumerate(groups) for call in range(first, last + 1)
    }
    recorded = {f.recorded_call_index for f in result.fidelity if f.recorded_call_index is not None}
    replayed = {
        e.call_index
        for e in result.events
        if e.kind in ("compact", "recorded-compaction") and e.call_index is not None
    }
    parts = []
    for calls, mark, colour, dy in (
        (recorded, "◇", "var(--fg)", 14),
        (replayed, "◆", "var(--simulated)", 26),
    ):
        for call in sorted(calls):
            column = column_of.get(call)
            if column is None:
                continue
            x = round(_LEFT + column * step + step / 2, 1)
            parts.append(
                f'<text x="{x}" y="{y(0) + dy}" text-anchor="middle" style="fill:{colour}">'
                f"{mark}<title>call {call}</title></text>"
            )
    return parts


def _x_labels(groups: list[tuple[int, int]], step: float) -> list[str]:
    last = groups[-1][1]
    baseline = CHART_HEIGHT - 4
    return [
        f'<text x="{_LEFT}" y="{baseline}">call 0</text>',
        f'<text x="{_LEFT + len(groups) * step:.1f}" y="{baseline}" text-anchor="end">'
        f"call {last}</text>",
    ]


def _tip(members: Sequence[CallPoint]) -> str:
    first, last = members[0], members[-1]
    calls = f"call {first.call_index}" + (
        f"–{last.call_index}" if last.call_index != first.call_index else ""
    )
    peak = max(members, key=lambda p: p.baseline_tokens)
    window = f" of {format_tokens(peak.window)}" if peak.window else ""
    return (
        f"{calls}: recorded {format_tokens(peak.baseline_tokens)} "
        f"({peak.baseline_provenance.value}){window}, simulated "
        f"{format_tokens(max(p.simulated_tokens for p in members))}"
    )


def _legend(policy: str) -> str:
    items = (
        ("var(--recorded)", "recorded context (red: the call overflowed)"),
        ("var(--simulated)", f"simulated under {policy}"),
        ("var(--window)", "window (dashed)"),
        ("var(--threshold)", "compaction threshold (dotted)"),
    )
    spans = [
        f'<span><span class="swatch" style="background:{colour}"></span>{_e(label)}</span>'
        for colour, label in items
    ]
    spans.append("<span>◇ recorded compaction · ◆ the policy's compaction</span>")
    return f'<p class="legend muted">{"".join(spans)}</p>'


# -- the sections ------------------------------------------------------------------------------


def _meta_line(report: AnalysisReport) -> str:
    info = report.session
    agent = info.format + (f" {info.agent_version}" if info.agent_version else "")
    model = (info.model or "model not recorded") + (f" on {info.provider}" if info.provider else "")
    window = f"window {format_tokens(info.window)} ({info.window_source})" if info.window else ""
    counts = f"{info.calls:,} calls, {info.messages:,} messages, {info.turns:,} turns"
    return " · ".join(part for part in (agent, model, window, counts) if part)


def _verdict(diagnosis: OverflowDiagnosis, overflow: bool) -> str:
    css = "verdict" if overflow or diagnosis.call_index is not None else "verdict ok"
    headline = diagnosis.explanation.split(". ", 1)[0].rstrip(".") + "."  # the rest is below
    verdict = f"<br>{_e(diagnosis.verdict)}" if diagnosis.verdict else ""
    return f'<p class="{css}">{_e(headline)}{verdict}</p>'


def _summary_table(report: AnalysisReport, session: Session, result: ReplayResult) -> str:
    s = report.summary
    top = peak(session, result)
    provenance = top.provenance if top is not None else "recorded"
    threshold = report.threshold_figure
    rows = [
        (f"peak prompt, {provenance}", _tokens(top.tokens if top else None)),
        ("peak call", str(top.call_index) if top is not None else "-"),
        ("peak context, simulated", _tokens(s.peak_simulated)),
        ("window", _tokens(report.session.window)),
        ("threshold", threshold.label if threshold is not None else _tokens(report.threshold)),
        ("recorded compactions", str(report.session.recorded_compactions)),
        ("compactions by the policy", str(s.compactions)),
        ("overflows, recorded / simulated", f"{s.overflows_recorded} / {s.overflows_simulated}"),
        ("cost", _cost(report)),
    ]
    return _table(("figure", "value"), rows, numeric=(1,))


def _diagnosis(diagnosis: OverflowDiagnosis) -> str:
    if diagnosis.call_index is None:
        return "<p>Nothing to diagnose: no call overflowed or came close (above).</p>"
    parts = [f"<p>{_e(diagnosis.explanation)}</p>"]
    if diagnosis.contributors:
        rows = [
            (
                str(c.message_index),
                c.role,
                c.tool_name or "",
                format_tokens(c.tokens),
                f"{c.share:.0%}",
            )
            for c in diagnosis.contributors
        ]
        parts.append("<p>What filled the window since the last compaction:</p>")
        parts.append(
            _table(("message", "role", "tool", "tokens", "share"), rows, numeric=(0, 3, 4))
        )
    if diagnosis.by_tool:
        per_tool = [
            (t.tool_name, str(t.outputs), format_tokens(t.tokens), f"{t.share:.0%}")
            for t in diagnosis.by_tool
        ]
        parts.append(_table(("tool", "outputs", "tokens", "share"), per_tool, numeric=(1, 2, 3)))
    return "\n".join(parts)


def _cost(report: AnalysisReport) -> str:
    cost = report.cost
    if cost is None or cost.total_usd is None:
        return "unknown"
    lower = f" (at least: {cost.unpriced_calls} calls unpriced)" if cost.unpriced_calls else ""
    return format_usd(cost.total_usd) + lower


def _breakdown(session: Session, result: ReplayResult) -> str:
    """The fullest call's context by category, as one stacked bar and a table."""
    found = breakdown(session, estimator=result.policy.estimator)
    if not found.calls:
        return "<p>No model call to break down.</p>"
    call = max(found.calls, key=lambda c: c.total_tokens)
    total = max(call.total_tokens, 1)
    parts = [(c, call.tokens(c)) for c in CATEGORIES if call.tokens(c)]
    bar, x = [], 0.0
    for index, (category, tokens) in enumerate(parts):
        width = 100 * tokens / total
        bar.append(
            f'<rect x="{x:.2f}%" y="0" width="{width:.2f}%" height="22" '
            f'fill="{_PALETTE[index % len(_PALETTE)]}"><title>{_e(CATEGORY_LABELS[category])}: '
            f"{format_tokens(tokens)}</title></rect>"
        )
        x += width
    rows = [(CATEGORY_LABELS[c], format_tokens(t), f"{t / total:.0%}") for c, t in parts]
    rows += [
        (f"tool outputs: {tool}", format_tokens(t), f"{t / total:.0%}")
        for tool, t in list(call.tool_outputs_by_tool.items())[:5]
    ]
    return "\n".join(
        [
            f"<p>At call {call.call_index}, the fullest, {format_tokens(call.total_tokens)} tokens "
            f"({call.total_provenance}):</p>",
            f'<svg viewBox="0 0 1000 22" preserveAspectRatio="none" role="img" '
            f'aria-label="context by category" style="height:22px">{"".join(bar)}</svg>',
            '<p class="legend muted">'
            + "".join(
                f'<span><span class="swatch" style="background:{_PALETTE[i % len(_PALETTE)]}">'
                f"</span>{_e(CATEGORY_LABELS[c])}</span>"
                for i, (c, _t) in enumerate(parts)
            )
            + "</p>",
            _table(("category", "tokens", "share"), rows, numeric=(1, 2)),
        ]
    )


def _recalls(report: AnalysisReport) -> dict[int, str]:
    """What each recorded compaction's summary kept of the facts of its head, in words."""
    found: dict[int, str] = {}
    for compaction in report.compactions:
        index, forgotten = compaction.why.recorded_index, compaction.forgotten
        if index is None or forgotten is None:
            continue
        if not forgotten.readable or not forgotten.facts:
            found[index] = forgotten.reason or "-"
        else:
            found[index] = f"kept {forgotten.kept} of {forgotten.facts} facts"
    return found


def _compactions(rows: list[CompactionRow], recalls: dict[int, str]) -> str:
    if not rows:
        return "<p>The recording holds no compaction.</p>"
    cells = []
    for row in rows:
        outcome = row.outcome or ""
        if row.call_delta:
            outcome += f" ({row.call_delta:+d} calls)"
        after = _tokens(row.tokens_after)
        if row.tokens_after is not None and row.tokens_after_source:
            after += f" ({row.tokens_after_source})"
        cells.append(
            (
                str(row.recorded_index),
                str(row.message_index),
                "-" if row.call_index is None else str(row.call_index),
                row.trigger + (" (rewound)" if row.rewound else ""),
                row.trigger_evidence or "",
                _tokens(row.tokens_before),
                _tokens(row.check_tokens),
                _tokens(row.last_prompt_tokens),
                after,
                outcome,
                recalls.get(row.recorded_index, ""),
                format_usd(row.cost_usd) if row.cost_usd is not None else "",
            )
        )
    headers = (
        "#",
        "at message",
        "call",
        "trigger",
        "evidence",
        "agent's count",
        "check",
        "last prompt",
        "tokens after",
        "the agent's preset",
        "summary",
        "cost",
    )
    table = _table(headers, cells, numeric=(0, 1, 2, 5, 6, 7, 8, 11))
    return table + _figure_notes()


def _figure_notes() -> str:
    """What each figure of the compactions table is (the named figures' definitions)."""
    facts = (COMPACTION_AT, AGENT_COUNT, CHECK_FIGURE, LAST_PROMPT, TOKENS_AFTER)
    return _list(f"{fact.name}: {fact.definition} ({fact.provenance})." for fact in facts)


def _threshold(report: AnalysisReport) -> str:
    parts = []
    if report.inferred_threshold is not None:
        parts.append(
            f"<p>{_e(report.inferred_threshold.note)} ({_e(RECORDING_CHECK.name)}: "
            f"{_e(RECORDING_CHECK.definition)}).</p>"
        )
    figure = report.inferred_threshold_figure
    if figure is not None and not figure.usable:
        parts.append(f"<p>The threshold of that interval: {_e(figure.label)}.</p>")
    spans = [s for s in report.thresholds if s.note]
    if spans:
        parts.append(_list(f"calls {s.first_call}–{s.last_call}: {s.note}" for s in spans))
    if not parts:
        label = (
            report.threshold_figure.label
            if report.threshold_figure is not None
            else _tokens(report.threshold)
        )
        parts.append(f"<p>{_e(label)} for the whole session.</p>")
    return "\n".join(parts)


# -- helpers -----------------------------------------------------------------------------------


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = ()
) -> str:
    def cell(tag: str, index: int, text: str) -> str:
        css = ' class="n"' if index in numeric else ""
        return f"<{tag}{css}>{_e(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _list(items: Iterable[str]) -> str:
    return "<ul>" + "".join(f"<li>{_e(item)}</li>" for item in items) + "</ul>"


def _tokens(value: int | None) -> str:
    return "-" if value is None else format_tokens(value)


def _e(text: str) -> str:
    return escape(text, quote=True)


def _version() -> str:
    try:
        return version("ctxscope")
    except PackageNotFoundError:
        return "(not installed)"
