"""Reading a replay result's per-call and per-message columns (10^5 items at 100 MB) in C.

The state, the gauge and the status line look up the few calls or messages a column marks (an
overflow, a pruned output); most results mark none, and a limit change reads the columns of
each new result again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import compress

_SEARCHED = 4
"""Columns whose answer :func:`any_marked` keeps (a result shown reads two, each from the gauge,
the list's flags and the status line; the result's own, so holding them keeps little alive)."""
_searched: dict[int, tuple[Sequence[bool], int, bool]] = {}
"""By the column's id: the column (held, so that the id is not another's), its length when
searched, and whether it marks any item."""


def marked(items: Sequence[int], flags: Sequence[bool]) -> Iterator[int]:
    """The items whose flag is set (``compress``), without a walk of the items when no flag is
    (:func:`any_marked` finds that out several times faster)."""
    return compress(items, flags) if any_marked(flags) else iter(())


def any_marked(flags: Sequence[bool]) -> bool:
    """``any(flags)``, searched once per column: a new result's gauge, list flags and status
    line each ask of the same two overflow columns (0.8 ms each at 10^5 calls), and a limit
    change that keeps the window gives the next result the same recorded one. A column is
    only ever appended to (a walk's), so one of another length is searched again."""
    key = id(flags)
    held = _searched.get(key)
    if held is not None and held[0] is flags and held[1] == len(flags):
        return held[2]
    found = any(flags)
    if len(_searched) >= _SEARCHED:
        _searched.clear()
    _searched[key] = (flags, len(flags), found)
    return found


def forget_marks() -> None:
    """Let go of the columns :func:`any_marked` holds (a closed screen's results)."""
    _searched.clear()
