"""``ctxscope breakdown``: what fills the window at every model call, and what each call cost.

Splits each call's recorded context into the system prompt and tool definitions, user messages,
assistant text, reasoning, tool calls, tool outputs (per tool), compaction summaries,
attachments and a residual (:mod:`core.insights.breakdown`), and prices the call (:mod:`core.insights.cost`).
Calls are numbered from 0, as ``analyze`` and ``replay`` number them (``call_index``).

``--call N`` shows one call, category by category; ``--json`` prints the
:class:`core.reports.breakdown.BreakdownReport` (the breakdown and the session's cost, every call priced;
with ``--call N``, one :class:`core.insights.breakdown.CallBreakdown`).
Exit status 0, or 2 for unusable input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click
import orjson
from pydantic import BaseModel

from core.gc_pause import gc_paused
from core.insights.breakdown import (
    CATEGORIES,
    CATEGORY_LABELS,
    CATEGORY_SHORT,
    CallBreakdown,
    ContextBreakdown,
    breakdown,
    breakdown_rows,
)
from core.insights.cost import (
    CallCost,
    SessionCost,
    cost_label,
    format_usd,
    session_cost,
    session_cost_rows,
)
from core.model.fastmodel import ModelT, build
from core.model.json_text import escaped_json, model_json_bytes
from core.model.tokens import DEFAULT_ESTIMATOR
from core.model.write_numbers import short_tokens
from core.reports.breakdown import BreakdownReport, breakdown_report
from tui.cli.commands._options import session_argument, window_option
from tui.cli.commands._session import fail, load_or_fail, write_stdout_bytes

if TYPE_CHECKING:
    from rich.table import Table

_BAR_WIDTH = 30


@click.command(name="breakdown")
@session_argument
@window_option
@click.option(
    "--call",
    "call_index",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Show one call (numbered from 0, as analyze and replay number them).",
)
@click.option(
    "--estimator",
    default=DEFAULT_ESTIMATOR,
    show_default=True,
    help="How message tokens are estimated (chars/4, bytes/4, tiktoken:o200k_base …).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the breakdown as JSON (schema v1).")
def breakdown_command(
    path: str, window: int | None, call_index: int | None, estimator: str, as_json: bool
) -> None:
    """What fills the window at every call of the session at PATH, and what each call cost."""
    session, _policy = load_or_fail("breakdown", path, window=window, policy_spec=None)
    if as_json and call_index is None:  # every call's figures written as fields: no model each
        try:
            found, rows = breakdown_rows(session, estimator=estimator)
        except ValueError as exc:  # an unknown estimator
            fail("breakdown", str(exc))
        with gc_paused():  # a priced row per call: no collection walks them as they are built
            cost, per_call, other_calls = session_cost_rows(session)
        # (the newline written apart: no copy of a 100 MB session's 50 MB document to add it)
        write_stdout_bytes(report_json(found, cost, (rows, per_call, other_calls)))
        write_stdout_bytes(b"\n")
        keep_until_exit(session, rows, per_call)
        return
    try:
        result = breakdown(session, estimator=estimator)
    except ValueError as exc:  # an unknown estimator
        fail("breakdown", str(exc))
    with gc_paused():  # a priced row per call: no collection walks them as they are built
        cost = session_cost(session)
    if call_index is not None:
        row = result.at(call_index)
        if row is None:
            fail("breakdown", f"--call {call_index}: the session has {len(result.calls)} calls")
        if as_json:
            call_cost = _call_cost(cost, call_index)
            _write_json(row.model_dump(), call_cost.model_dump() if call_cost else None)
            return
        # rich and the renderers only for a table: --json starts without them
        from tui.cli.render import session_header, stdout_console

        console = stdout_console()
        console.print(session_header(session))
        console.print(call_table(row, _call_cost(cost, call_index), session.context_window))
        return
    from tui.cli.render import notes_block, session_header, stdout_console

    console = stdout_console()
    console.print(session_header(session))
    console.print(calls_table(result, cost, session.context_window))
    if result.notes:
        console.print(notes_block(result.notes))


_KEPT: list[object] = []
"""What the last ``breakdown --json`` was made of (:func:`keep_until_exit`)."""


def keep_until_exit(*made: object) -> None:
    """Hold what the command made until the process ends: a one-shot command ends without
    tearing its heap down (:func:`tui.cli.main.main`), and freeing a 100 MB session and its rows
    object by object as the command returned took 0.07 s, a twentieth of the command past its
    load. Only the last command's are held (a test process runs many)."""
    _KEPT[:] = made


Rows = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]
"""Each call's fields, apart from their report: the breakdown's calls, the cost's ``per_call``
and its ``other_calls`` (:func:`core.insights.breakdown.breakdown_rows`,
:func:`core.insights.cost.session_cost_rows`)."""


def report_json(result: ContextBreakdown, cost: SessionCost, rows: Rows | None = None) -> bytes:
    """The :class:`core.reports.breakdown.BreakdownReport` as indented JSON, the same bytes as
    pydantic writes: orjson straight from each model's fields (a row per call: 50,000 rows on
    100 MB, no pydantic serialiser walk); pydantic's own writer for what orjson refuses (an
    undecodable byte, an integer beyond 64 bits, a model with extra fields). ``rows``: the
    calls' fields, given apart from ``result`` and ``cost`` (whose lists of calls are then
    empty): written as they are, no model made per call but for pydantic's writer."""
    report = breakdown_report(result, cost)
    try:
        return orjson.dumps(_document(report, rows), default=_fields, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError
        if rows is not None:
            report = breakdown_report(*_with_models(result, cost, rows))
        return model_json_bytes(report)


def _with_models(
    result: ContextBreakdown, cost: SessionCost, rows: Rows
) -> tuple[ContextBreakdown, SessionCost]:
    """``result`` and ``cost`` with the calls of ``rows`` as their models."""
    calls, per_call, other_calls = rows
    return (
        build(ContextBreakdown, {**result.__dict__, "calls": _models(CallBreakdown, calls)}),
        build(
            SessionCost,
            {
                **cost.__dict__,
                "per_call": _models(CallCost, per_call),
                "other_calls": _models(CallCost, other_calls),
            },
        ),
    )


def _models(cls: type[ModelT], rows: list[dict[str, Any]]) -> list[ModelT]:
    return [build(cls, row) for row in rows]


def _document(report: BreakdownReport, rows: Rows | None = None) -> dict[str, Any]:
    """The report's fields, its two lists of a row per call (the breakdown's, the cost's) as
    the rows' field dicts (``rows``' when given): one list each, not a callback from orjson per
    row; the models inside the rows by :func:`_fields` as orjson meets them."""
    document = dict(_fields(report))
    document["calls"] = _rows(report.calls) if rows is None else rows[0]
    cost = report.cost
    if cost is not None:
        cost_fields = dict(_fields(cost))
        cost_fields["per_call"] = _rows(cost.per_call) if rows is None else rows[1]
        if rows is not None:
            cost_fields["other_calls"] = rows[2]
        document["cost"] = cost_fields
    return document


def _rows(models: list[CallBreakdown] | list[CallCost]) -> list[dict[str, Any]]:
    """:func:`_fields` of each row (models of one class, built without extra fields; a row
    with some: TypeError, as :func:`_fields` raises)."""
    if any([model.__pydantic_extra__ for model in models]):
        raise TypeError("a row with extra fields")
    return [model.__dict__ for model in models]


def _fields(model: Any) -> dict[str, Any]:
    """A model's fields as pydantic writes them: its ``__dict__``, in that dict's order."""
    if not isinstance(model, BaseModel) or model.__pydantic_extra__:
        raise TypeError(type(model).__name__)
    fields: dict[str, Any] = model.__dict__
    return fields


def _write_json(document: dict[str, Any], cost: dict[str, Any] | None) -> None:
    """The breakdown with the cost its text shows (``cost``: the session's, or the call's; null
    when the call has none), from the same :func:`core.insights.cost.session_cost`."""
    document["cost"] = cost
    sys.stdout.write(escaped_json(document) + "\n")


def _call_cost(cost: SessionCost, call_index: int) -> CallCost | None:
    return next((c for c in cost.per_call if c.call_index == call_index), None)


def over_window_note(totals: list[tuple[int, int, str]], window: int | None) -> str | None:
    """Why a breakdown's total is above the window, when one is (``totals``: ``(call, total,
    provenance)``): the total is a measure of what the call held, recorded or estimated, and an
    estimate can exceed what the provider accepted; None when no total is above it."""
    if not window:
        return None
    over = [(call, total, how) for call, total, how in totals if total > window]
    if not over:
        return None
    call, total, how = max(over, key=lambda item: item[1])
    why = (
        "an estimate (no usage recorded for it): the estimator over-counts, or the provider "
        "refused the call"
        if how != "recorded"
        else "the recorded context is larger than the window (the call overflowed, or the window "
        "is larger than stated)"
    )
    calls = f"{len(over)} call{'s' if len(over) != 1 else ''}"
    return (
        f"! {calls} above the {window:,}-token window (the largest: call {call}, {total:,}): {why}"
    )


def calls_table(result: ContextBreakdown, cost: SessionCost, window: int | None = None) -> Table:
    """One row per call: the total (``!`` above ``window``, said why), each category, and the
    call's cost."""
    from rich import box
    from rich.table import Table

    how = (
        f"{result.estimator} calibrated on {result.calibration_calls} calls"
        if result.provenance == "calibrated"
        else f"{result.estimator}, not calibrated"
    )
    title = (
        f"context breakdown ({how}; system + tools measured at call "
        f"{result.overhead_call_index}) · session cost {cost_label(cost)}"
    )
    table = Table(
        title=title, box=box.SIMPLE, title_justify="left", pad_edge=False, collapse_padding=True
    )
    table.add_column("call", justify="right")
    table.add_column("total", justify="right")
    for category in CATEGORIES:
        table.add_column(CATEGORY_SHORT[category], justify="right")
    table.add_column("cost", justify="right")
    costs = {c.call_index: c for c in cost.per_call}
    for row in result.calls:
        call_cost = costs.get(row.call_index)
        total = short_tokens(row.total_tokens) + ("" if row.total_provenance == "recorded" else "~")
        if window and row.total_tokens > window:
            total += "!"
        table.add_row(
            str(row.call_index),
            total,
            *(short_tokens(row.tokens(category)) for category in CATEGORIES),
            format_usd(call_cost.total_usd) if call_cost is not None else "-",
        )
    table.caption = "~ estimated total (no usage recorded); " + ", ".join(
        f"{CATEGORY_SHORT[c]} = {CATEGORY_LABELS[c]}" for c in CATEGORIES
    )
    note = over_window_note(
        [(r.call_index, r.total_tokens, r.total_provenance) for r in result.calls], window
    )
    if note is not None:
        table.caption += "\n" + note
    return table


def call_table(row: CallBreakdown, cost: CallCost | None, window: int | None = None) -> Table:
    """One call, category by category, with a bar of each share (and why its total is above
    ``window``, when it is)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from tui.cli.render import tokens

    how = "recorded" if row.total_provenance == "recorded" else "estimated"
    price = ""
    if cost is not None:
        price = f" · cost {format_usd(cost.total_usd)}"
        if cost.unknown_reason:
            price += f" ({cost.unknown_reason})"
    table = Table(
        title=f"call {row.call_index} (message {row.message_index}): "
        f"{tokens(row.total_tokens)} tokens, {how}{price}",
        box=box.SIMPLE,
        title_justify="left",
    )
    table.add_column("category")
    table.add_column("tokens", justify="right")
    table.add_column("share", justify="right")
    table.add_column("")
    total = max(row.total_tokens, 1)
    for category in CATEGORIES:
        value = row.tokens(category)
        table.add_row(
            CATEGORY_LABELS[category], tokens(value), f"{value / total:.0%}", _bar(value / total)
        )
        if category == "tool_outputs":
            for name, value in row.tool_outputs_by_tool.items():
                table.add_row(
                    Text(f"  {name}", style="dim"),
                    tokens(value),
                    f"{value / total:.0%}",
                    _bar(value / total),
                )
    notes = [f"categories {row.provenance}"]
    if row.unexplained < 0:
        notes.append(
            f"they over-explained the total by {tokens(-row.unexplained)} and were scaled "
            f"down to it (×{row.scale:.3f}; system + tools as measured)"
        )
    note = over_window_note([(row.call_index, row.total_tokens, row.total_provenance)], window)
    if note is not None:
        notes.append(note)
    table.caption = "; ".join(notes)
    return table


def _bar(share: float) -> str:
    return "█" * round(share * _BAR_WIDTH)
