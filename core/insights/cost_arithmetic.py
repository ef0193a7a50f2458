"""The integer arithmetic of a call's dollars (:mod:`core.insights.cost`): each rate as an integer
over one power of ten, so that the products of a run of calls priced at one rate are made as
integers over the run's columns (``map``: no Python step per call) and each divided once into the
very float the decimal product gives.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, repeat
from operator import add, mul

from core.insights.prices import Rates

EXACT = 10**28
"""Below this (scaled to the rates' last decimal), the default decimal context (28 digits)
computes a call's dollars exactly, and so does integer arithmetic: the same float."""


_SCALED: dict[int, tuple[Rates, tuple[int, int, int, int, int]]] = {}
""":func:`scaled_rates` of each :class:`Rates` seen (by identity: the price table hands out one
object per model, day and tier), kept with it."""


def scaled_rates(rates: Rates) -> tuple[int, int, int, int, int]:
    """``rates`` as integers over one power of ten: ``(input, cache read, cache write, output,
    scale)``, each rate its integer over ``scale`` (worked out once per rates object)."""
    known = _SCALED.get(id(rates))
    if known is not None and known[0] is rates:
        return known[1]
    found = _scaled_now(rates)
    _SCALED[id(rates)] = (rates, found)
    return found


def _scaled_now(rates: Rates) -> tuple[int, int, int, int, int]:
    kinds = (rates.input, rates.cache_read, rates.cache_write, rates.output)
    parts = [rate.as_tuple() for rate in kinds]
    places = max(0, *(-int(p.exponent) for p in parts))
    ints = [int(rate.scaleb(places)) for rate in kinds]  # (exact: the places are its own)
    return ints[0], ints[1], ints[2], ints[3], 10**places


def whole_products(made: list[tuple[int, Sequence[int]]]) -> Iterator[int]:
    """Each call's products of ``made`` (``(rate, column)`` pairs) added up, made as read
    (integers: exact in any order)."""
    return wholes([map(mul, repeat(rate), column) for rate, column in made])


def wholes(products: Iterable[Iterable[int] | None]) -> Iterator[int]:
    """Each call's products added up: the whole of a call, of its products (one iterable per
    kind of token, None for a kind that adds nothing)."""
    made = [column for column in products if column is not None]
    added: Iterator[int] = iter(made[0])
    for column in made[1:]:
        added = map(add, added, column)
    return added


CHUNK = 256
"""Calls priced at once: their products kept (as lists) while they are read for each figure
and for the whole of each call, then let go."""


def chunks(count: int, size: int = CHUNK) -> Iterator[slice]:
    """``range(count)`` in consecutive slices of ``size`` (the last one shorter)."""
    return map(slice, range(0, count, size), chain(range(size, count, size), (count,)))


def products_of(
    factors: Sequence[tuple[int, Sequence[int]] | None], part: slice
) -> list[list[int] | None]:
    """Each factor's products of the calls of ``part``: ``rate * count`` of each (None for a
    factor that is None)."""
    return [
        None if factor is None else list(map(mul, repeat(factor[0]), factor[1][part]))
        for factor in factors
    ]


def window(column: Sequence[int], lo: int, hi: int) -> Sequence[int]:
    """``column[lo:hi]``: the column itself when that is all of it, a view of it where the
    column is an array (no copy)."""
    if lo == 0 and hi == len(column):
        return column
    return memoryview(column)[lo:hi] if isinstance(column, array) else column[lo:hi]
