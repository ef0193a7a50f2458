"""The breakdown's rows: each call's categories read from its stretch's calibrated columns, the
calls whose categories exceed their recorded total scaled down to it, as columns.

A stretch (:class:`core.insights.breakdown_columns.Stretch`) has one column of calibrated tokens
per key; a call's row adds them up by category slot and by tool. When a call's keys, with the
measured system prompt + tools, exceed its recorded total, its keys are scaled down to fit
(:func:`fit`: each share floored, the units left to the largest remainders). :func:`fit_columns`
does that for every call of a stretch at once, key by key over the calls (``map`` over the
columns: no Python step per call and key), each value the one :func:`fit` gives the call; the
rows are then read from the fitted columns (:func:`stretch_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import gt, lt, mul, sub, truediv
from typing import Any, Literal, cast

from core.insights.breakdown_columns import summed, truncated

MAX_TOOLS_PER_CALL = 20
"""Tools named in a call's ``tool_outputs_by_tool`` at most (the largest)."""
OTHER_TOOLS = "(other tools)"
"""The key of the tools beyond :data:`MAX_TOOLS_PER_CALL` in ``tool_outputs_by_tool``, together
(parenthesised: no tool is named so)."""

_MEASURED = "measured"
"""The head of a key measured from the recorded usage (``measured:tool:<tool>``)."""

_SLOTS = (
    "system_and_tools",
    "user",
    "assistant_text",
    "reasoning",
    "tool_calls",
    "tool",
    "summaries",
    "attachments",
)
"""The category heads a call's row adds up (a key of any other head is left out of the row)."""


def _split(key: str) -> tuple[str, str]:
    """A key's category head and detail (``tool:NAME`` → ``tool``, ``NAME``; a measured key
    without its ``measured:`` prefix)."""
    head, _, detail = key.removeprefix(f"{_MEASURED}:").partition(":")
    return head, detail


def stretch_rows(
    first: int,
    size: int,
    columns: dict[str, list[int]],
    calls: list[tuple[int, int]],
    recorded: list[int | None],
    overhead: int,
    provenance: Literal["calibrated", "estimated"],
    over: list[float],
) -> list[dict[str, Any]]:
    """The fields of the row of each call of a stretch (``first``: its first call among the
    session's, ``size`` its calls; ``columns``: its calibrated tokens by key, a value per call): each category's
    columns added up once for the stretch; a call whose categories exceed its recorded total
    less the system prompt + tools is scaled down to it (:func:`fit_columns`), and by how much
    they over-explained it appended to ``over`` (the share of its total)."""
    keys = sorted(columns)
    by_key = [columns[key] for key in keys]
    by_slot: list[list[int]] = [[] for _ in _SLOTS]  # the keys (positions) of each slot
    by_tool: dict[str, list[int]] = {}  # and of each tool
    for k, key in enumerate(keys):
        head, detail = _split(key)
        if head in _SLOTS:
            by_slot[_SLOTS.index(head)].append(k)
        if head == "tool":
            by_tool.setdefault(detail, []).append(k)
    totals = recorded[first : first + size]
    wholes = summed(by_key, size)
    # What the messages may fill (the recorded total less the system prompt + tools, at least
    # 0; None without a total): the calls whose keys add up to more are scaled down to it.
    # (Conditional expressions, not ``min``/``max``: in 3.11 those parse keywords at every call.)
    rooms = [None if t is None else t - overhead if t > overhead else 0 for t in totals]
    fitted = fit_columns(by_key, wholes, rooms)
    kept = wholes if fitted is by_key else summed(fitted, size)
    slots = [summed([fitted[k] for k in found], size) for found in by_slot]
    tools = [(name, summed([fitted[k] for k in found], size)) for name, found in by_tool.items()]
    # Each field as a column over the calls, then a row per call read across them.
    if None in totals:
        total_tokens = [k + overhead if t is None else t for t, k in zip(totals, kept, strict=True)]
        measured = [overhead if t is None or overhead < t else t for t in totals]
        unexplained = [
            0 if t is None else t - overhead - w for t, w in zip(totals, wholes, strict=True)
        ]
        residual = [
            0 if t is None or t - overhead - k < 0 else t - overhead - k
            for t, k in zip(totals, kept, strict=True)
        ]
        how = ["estimated" if t is None else "recorded" for t in totals]
    else:
        known = cast("list[int]", totals)
        total_tokens = known
        measured = [overhead if overhead < t else t for t in known]
        rest = list(map(sub, known, repeat(overhead)))
        unexplained = list(map(sub, rest, wholes))
        residual = [left if left > 0 else 0 for left in map(sub, rest, kept)]
        how = ["recorded"] * size
    scales = [1.0] * size
    # Each scaled call's position with its room (known: its total is not None).
    if fitted is by_key:  # (no call above its room: none scaled)
        scaled: Iterable[tuple[int, int]] = ()
    elif None in totals:
        scaled = [
            (p, room) for p, room in enumerate(rooms) if room is not None and wholes[p] > room
        ]
    else:  # (the scaled calls picked in C)
        known_rooms = cast("list[int]", rooms)
        scaled = compress(enumerate(known_rooms), map(gt, wholes, known_rooms))
    for position, room in scaled:
        total = totals[position]
        scale = scales[position] = round(room / wholes[position], 4)
        if scale < 1.0 and total:
            over.append(-unexplained[position] / total)
    if not tools:
        by_tool_column: list[dict[str, int]] = [{} for _ in range(size)]
        outputs = [0] * size
    elif len(tools) == 1:  # (the usual stretch: one tool's outputs)
        name, column = tools[0]
        by_tool_column = [{name: tokens} if tokens else {} for tokens in column]
        outputs = column
    else:
        by_tool_column = [
            _largest_tools({name: column[p] for name, column in tools if column[p]})
            for p in range(size)
        ]
        outputs = [sum(named.values()) for named in by_tool_column]
    system, user, text, reasoning, tool_calls, _tool, summaries, attachments = slots
    return [
        {
            "call_index": call,
            "message_index": message,
            "total_tokens": total,
            "total_provenance": provenance_of_total,
            "provenance": provenance,
            "system_and_tools": system_tokens + measured_tokens,
            "user": user_tokens,
            "assistant_text": text_tokens,
            "reasoning": reasoning_tokens,
            "tool_calls": calls_tokens,
            "tool_outputs": outputs_tokens,
            "tool_outputs_by_tool": named,
            "summaries": summaries_tokens,
            "attachments": attachments_tokens,
            "residual": residual_tokens,
            "unexplained": unexplained_tokens,
            "scale": scale,
        }
        for (
            (call, message),
            total,
            provenance_of_total,
            system_tokens,
            measured_tokens,
            user_tokens,
            text_tokens,
            reasoning_tokens,
            calls_tokens,
            outputs_tokens,
            named,
            summaries_tokens,
            attachments_tokens,
            residual_tokens,
            unexplained_tokens,
            scale,
        ) in zip(
            calls[first : first + size],
            total_tokens,
            how,
            system,
            measured,
            user,
            text,
            reasoning,
            tool_calls,
            outputs,
            by_tool_column,
            summaries,
            attachments,
            residual,
            unexplained,
            scales,
            strict=True,
        )
    ]


def fit_columns(
    columns: list[list[int]], wholes: list[int], targets: list[int | None]
) -> list[list[int]]:
    """:func:`fit` of every call at once: ``columns`` hold one value per call each, ``wholes``
    each call's values added up, ``targets`` what each call's values must add up to (None: as
    they are). The fitted columns, each value the one ``fit(values, target)`` gives its call
    (``columns`` themselves when no call is above its target).

    Only the calls above their target are fitted (:func:`_fit_every_call`, on their values
    picked out of each column when not every call is: a call kept as it is costs no step per
    key), and their fitted values are put back in a copy of each column."""
    scaled = [
        target is not None and whole > target and whole != 0
        for whole, target in zip(wholes, targets, strict=True)
    ]
    if not any(scaled):
        return columns
    known = cast("list[int]", targets)  # (read where scaled: a call with a target)
    if all(scaled):  # (the usual stretch of a session that over-explains: every call)
        return _fit_every_call(columns, wholes, known)
    positions = list(compress(range(len(wholes)), scaled))
    fitted = _fit_every_call(
        [list(map(column.__getitem__, positions)) for column in columns],
        list(map(wholes.__getitem__, positions)),
        list(map(known.__getitem__, positions)),
    )
    out = [column.copy() for column in columns]
    for column, values in zip(out, fitted, strict=True):
        for position, value in zip(positions, values, strict=True):
            column[position] = value
    return out


def _fit_every_call(
    columns: list[list[int]], wholes: list[int], targets: list[int]
) -> list[list[int]]:
    """:func:`fit_columns` of calls that are each above their target (``wholes[c] >
    targets[c]``, ``wholes[c] != 0``).

    Every call's shares are made and floored key by key over the calls; then, call by call
    where units are left (``short``), they go to the keys of least ``floor - exact``, the first
    of equals first (as :func:`fit` gives them). A call floored to more than its target
    (``short`` below 0: float rounding) is fitted on its own."""
    size = len(wholes)
    exact = [list(map(truediv, map(mul, column, targets), wholes)) for column in columns]
    floors = list(map(truncated, exact))
    shorts = list(map(sub, targets, summed(floors, size)))
    if max(shorts) > 0:
        below = zip(*[map(sub, f, e) for f, e in zip(floors, exact, strict=True)], strict=True)
        wanted = map(lt, repeat(0), shorts)
        give_leftovers(floors, compress(zip(range(size), shorts, below, strict=True), wanted))
    if min(shorts) < 0:
        for position in [p for p, short in enumerate(shorts) if short < 0]:
            values = fit([column[position] for column in columns], targets[position])
            for column, value in zip(floors, values, strict=True):
                column[position] = value
    return floors


def _largest_tools(by_tool: dict[str, int]) -> dict[str, int]:
    """``by_tool`` largest first, the tools beyond :data:`MAX_TOOLS_PER_CALL` as one
    :data:`OTHER_TOOLS` entry."""
    if len(by_tool) < 2:
        return by_tool
    ranked = sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))
    tools = dict(ranked[:MAX_TOOLS_PER_CALL])
    if len(ranked) > MAX_TOOLS_PER_CALL:
        tools[OTHER_TOOLS] = sum(tokens for _name, tokens in ranked[MAX_TOOLS_PER_CALL:])
    return tools


def fit(values: list[int], total: int) -> list[int]:
    """``values`` scaled down to add up to exactly ``total`` (largest remainders first)."""
    whole = sum(values)
    if whole <= total or whole == 0:
        return list(values)
    exact = [v * total / whole for v in values]
    floors = list(map(int, exact))
    short = total - sum(floors)
    if short:  # (one call's floors as columns of one value each)
        columns = [[floor] for floor in floors]
        give_leftovers(columns, [(0, short, list(map(sub, floors, exact)))])
        return [column[0] for column in columns]
    return floors


def give_leftovers(
    floors: list[list[int]], calls: Iterable[tuple[int, int, Sequence[float]]]
) -> None:
    """Give each of ``calls`` (``(position, short, below)``: its position in ``floors``' columns,
    the units its floored values are short of its target, each key's ``floor - exact``) its
    units left, a unit to each of the keys of largest remainders (``floor - exact`` least), the
    first of equals first: the first least when one is short, else a stable sort's first
    ``short``. The one rule of :func:`fit` and :func:`fit_columns` (every call of a stretch in
    one call of it: no step added per call)."""
    keys = range(len(floors))  # (each call's keys: one value of each column)
    for position, short, row in calls:
        if short == 1:  # (the usual case: the first least, as the sort's first)
            floors[row.index(min(row))][position] += 1
        else:
            for k in sorted(keys, key=row.__getitem__)[:short]:  # (a stable sort)
                floors[k][position] += 1
