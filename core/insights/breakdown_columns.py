"""The breakdown's running sums as columns: the tokens of every key (a category, ``tool:NAME``, a
hosted tool's marker) at every call of a stretch between recorded compactions, kept as one list
per key rather than as a dict per call.

The walk (:func:`core.insights.breakdown.breakdown`) only notes, per stretch, what it started
from (what the compaction wrote and kept), which messages joined the context after how many of
its calls, and each call's own reply (a total recorded after the reply counts it);
:meth:`Stretch.columns` then adds them up key by key (``itertools.accumulate``: no Python step
per call and key). A key no call of the stretch holds has no column; a call that does not hold a
key reads 0 in its column, which the breakdown treats as the key being absent (every figure it
makes is a sum, and a share of 0 is never rounded up: :func:`core.insights.breakdown.fit`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from operator import add
from typing import overload

Parts = list[tuple[str, int]]
"""A message's tokens by category key: a category, ``tool:NAME`` for a tool's output (as
:func:`core.insights.breakdown.message_parts` gives them)."""

Sums = dict[str, int]
"""Tokens by category key in a call's context (the keys of :data:`Parts`)."""

Columns = dict[str, list[int]]
"""Tokens by key at every call of a stretch (one list per key, a value per call)."""


class Stretch:
    """The calls between two recorded compactions (or before the first one): what the context
    started from, what joined it after how many of the stretch's calls, and each call's reply."""

    __slots__ = ("adds", "base", "calls", "first", "replies")

    def __init__(self, first: int, base: Parts) -> None:
        self.first = first
        """The number of the stretch's first call among the session's calls."""
        self.base = base
        """The context it starts from (what the compaction wrote and kept)."""
        self.calls = 0
        """Its calls so far."""
        self.adds: list[tuple[int, Parts]] = []
        """Each message joining the context, after how many of the stretch's calls."""
        self.replies: list[tuple[int, Sums]] = []
        """Each call (its position in the stretch) whose total counts its own reply, and the
        reply's tokens by key."""

    def take(
        self,
        made: int,
        replies: Iterable[tuple[int, Sums]],
        adds: Iterable[tuple[int, Parts]],
    ) -> None:
        """``made`` calls at once, and what came with them: ``replies``, each call's position
        among them and its own reply (for a total measured after it), and ``adds``, each message
        joining the context and after how many of them (positions counted from this stretch's
        calls so far). A test holds it to a walk that takes one call or message at a time."""
        base = self.calls
        if base:
            replies = [(base + position, reply) for position, reply in replies]
            adds = [(base + position, parts) for position, parts in adds]
        self.replies += replies
        self.adds += adds
        self.calls += made

    def columns(self) -> Columns:
        """Each key's tokens at every call of the stretch: the context before the call, plus the
        call's own reply where it counts."""
        size = self.calls
        if not size:
            return {}
        deltas: Columns = {}
        get = deltas.get
        for position, parts in [(0, self.base), *self.adds]:
            if position >= size:
                break  # (what joins after the last call is in none of them)
            for key, tokens in parts:
                if tokens:
                    column = get(key)
                    if column is None:
                        column = deltas[key] = [0] * size
                    column[position] += tokens
        columns = {key: list(accumulate(column)) for key, column in deltas.items()}
        for position, reply in self.replies:
            for key, tokens in reply.items():
                if tokens:
                    column = columns.get(key)
                    if column is None:
                        column = columns[key] = [0] * size
                    column[position] += tokens
        return columns

    def before_reply(self, columns: Columns, position: int) -> Sums:
        """The context before the call at ``position`` (its reply not added), by key."""
        sums = {key: column[position] for key, column in columns.items() if column[position]}
        for at, reply in self.replies:
            if at == position:
                for key, tokens in reply.items():
                    sums[key] = sums.get(key, 0) - tokens
        return {key: tokens for key, tokens in sums.items() if tokens}


class SumsAt(Sequence[Sums]):
    """Each call's tokens by key as a dict (keys at 0 left out), made when asked: the
    calibration reads a thousand calls of a session, not every one."""

    def __init__(self, stretches: list[Stretch], columns: list[Columns], segments: list[int]):
        self._stretches = stretches
        self._columns = columns
        self._segments = segments
        self._grouped: dict[int, Columns] = {}

    @overload
    def __getitem__(self, n: int) -> Sums: ...
    @overload
    def __getitem__(self, n: slice) -> list[Sums]: ...
    def __getitem__(self, n: int | slice) -> Sums | list[Sums]:
        if isinstance(n, slice):
            return [self[k] for k in range(len(self._segments))[n]]
        segment = self._segments[n]
        position = n - self._stretches[segment].first
        return {
            key: column[position]
            for key, column in self._columns[segment].items()
            if column[position]
        }

    def __len__(self) -> int:
        return len(self._segments)

    def grouped_at(self, n: int, group: Callable[[str], str]) -> Sums:
        """Call ``n``'s tokens added up by group of keys (``group(key)``; a group at 0 may be
        there): the columns of each stretch added up by group once, when first asked (one
        ``group`` for every call of a :class:`SumsAt`)."""
        first, grouped = self.grouped(self._segments[n], group)
        position = n - first
        return {name: column[position] for name, column in grouped.items()}

    def grouped(self, segment: int, group: Callable[[str], str]) -> tuple[int, Columns]:
        """Stretch ``segment``'s first call and its columns added up by group of keys (as
        :meth:`grouped_at` reads them; made once, when first asked)."""
        stretch = self._stretches[segment]
        grouped = self._grouped.get(segment)
        if grouped is None:
            members: dict[str, list[list[int]]] = {}
            for key, column in self._columns[segment].items():
                members.setdefault(group(key), []).append(column)
            grouped = {name: summed(found, stretch.calls) for name, found in members.items()}
            self._grouped[segment] = grouped
        return stretch.first, grouped

    def every(self) -> list[Sums]:
        """Every call's, in order."""
        return [self[n] for n in range(len(self._segments))]


def add_column(columns: Columns, key: str, column: list[int]) -> None:
    """``column`` added to ``columns[key]`` value by value (set when there is none)."""
    found = columns.get(key)
    columns[key] = column if found is None else [a + b for a, b in zip(found, column, strict=True)]


def summed(columns: list[list[int]], size: int) -> list[int]:
    """The columns added up value by value (zeros for none): one ``map(add)`` over each column
    after the first (no tuple and no ``sum`` per value)."""
    if not columns:
        return [0] * size
    if len(columns) == 1:
        return columns[0]
    if any(len(column) != size for column in columns):
        raise ValueError("columns of different lengths")
    added: Iterable[int] = columns[0]
    for column in columns[1:]:
        added = map(add, added, column)
    return list(added)


def rounded(values: Iterable[float]) -> list[int]:
    """``round`` of each float (to the nearest integer, half to even), called as the float's own
    ``__round__``: ``round`` looks the method up and binds it for every value (a third of
    the time of a column scaled by its ratio)."""
    return list(map(_ROUND, values))


def truncated(values: Iterable[float]) -> list[int]:
    """``int`` of each float (towards zero), called as the float's own ``__trunc__``: ``int`` goes
    through its constructor for every value (half the time of a column's floors)."""
    return list(map(_TRUNC, values))


_ROUND: Callable[[float], int] = float.__round__
_TRUNC: Callable[[float], int] = float.__trunc__
