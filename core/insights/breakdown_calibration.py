"""Per-category ratios fitted on a session's own recorded growth (the breakdown's calibration).

An estimator (``chars/4`` by default) counts a message's text; the provider counts its tokens with
its own tokenizer, adds the framing of each block (a tool call's wrapper, a result's envelope) and
keeps what the transcript does not show (reasoning a format does not write down). How far apart
the two are depends on the kind of content: code and JSON cost more tokens per character than
prose. The recording itself measures it: between the first recorded call of a stretch (the
session's start, or the first call after a recorded compaction) and any later call of it, the
recorded context grew by a known number of tokens, and the messages added (and removed) in
between are known by category. :func:`fit_ratios` finds the ratio per category
that best explains every call's growth at once:

    growth(c) ≈ Σ_k ratio_k × estimated_growth_k(c)

so that the calls' relative errors are as small as they can be in absolute value: a weighted
least-squares fit (each call weighted by its recorded total), then :data:`ROBUST_ROUNDS`
reweighted rounds, so one message the estimator misjudges badly does not pull every other call
off. Each ratio is pulled gently towards 1.0 (a category that barely changes keeps the
estimator's own figure) and bounded to [:data:`MIN_RATIO`, :data:`MAX_RATIO`]. It is a
measurement of this session, made from its recorded usage; nothing else is read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from itertools import repeat
from operator import add, mul, sub, truediv
from typing import TypeVar

_V = TypeVar("_V")

MIN_RATIO = 0.25
"""The smallest ratio a category may get (an estimator over-counting four times)."""
MAX_RATIO = 4.0
"""The largest ratio a category may get (a tokenizer counting one token per character)."""
ROBUST_ROUNDS = 6
"""Reweighted rounds after the least-squares fit: the ratios then minimise the calls' absolute
relative errors, so one message the estimator misjudges badly (a dense compiler log, an image)
does not pull every call of the session off. Fewer when a round gives the ratios it started
from (every ratio at its bound, say): each round is a function of the last one's ratios, so
every later round would give them again."""
FLOOR = 0.002
"""A call's error counts as at least this share of its total when reweighting."""
PULL = 1e-3
"""How strongly a ratio is pulled towards 1.0, relative to the strongest category's weight."""


def fit_ratios(
    growth: Sequence[Mapping[str, int]],
    recorded_growth: Sequence[int],
    totals: Sequence[int],
    categories: Sequence[str],
) -> dict[str, float]:
    """The ratio per category (see the module docstring).

    ``growth[c][k]`` is the estimated growth of category ``k`` at call ``c``,
    ``recorded_growth[c]`` the recorded growth at the same call and ``totals[c]`` its recorded
    total (errors are relative to it). A category no call's growth moves gets 1.0.
    """
    columns = [[row.get(k, 0) for row in growth] for k in categories]
    return fit_ratio_columns(columns, recorded_growth, totals, categories)


def fit_ratio_columns(
    growth: Sequence[Sequence[int]],
    recorded_growth: Sequence[int],
    totals: Sequence[int],
    categories: Sequence[str],
) -> dict[str, float]:
    """:func:`fit_ratios` of the estimated growth given as a column per category
    (``growth[k][c]``: category ``categories[k]`` at call ``c``), as the breakdown reads it from
    its stretches' columns: no dict per call."""
    normal = _Normal.of_columns([list(map(float, column)) for column in growth], recorded_growth)
    # (each a conditional expression, not ``max``: in 3.11 ``max`` parses keywords at every call)
    bounds = [total if total >= 1 else 1 for total in totals]
    weights = [1.0 / bound**2 for bound in bounds]
    ratios = _bounded(*normal.equations(weights))
    floors = [FLOOR * total for total in totals]
    leasts = [floor if floor > 1.0 else 1.0 for floor in floors]  # (``max(floor, 1.0)``)
    for _ in range(ROBUST_ROUNDS):
        # least absolute relative error, by reweighting: a call far off weighs less; each
        # error at least its floor and 1.0 (``max(error, floor, 1.0)``)
        errors = map(abs, map(sub, recorded_growth, normal.predicted(ratios)))
        worst = [
            least if least > error else error for error, least in zip(errors, leasts, strict=True)
        ]
        weights = list(map(truediv, repeat(1.0), map(mul, bounds, worst)))
        reweighted = _bounded(*normal.equations(weights))
        if reweighted == ratios:
            break  # (a fixed point: each round is a function of the last one's ratios alone)
        ratios = reweighted
    return {k: round(v, 4) for k, v in zip(categories, ratios, strict=True)}


class _Normal:
    """The rows (one per call) by category column, and the calls where each category moved:
    the normal equations of any weights, each sum a loop in C over the calls, in their order.

    A call where a category did not move adds a product of 0.0 to each of its sums, which
    leaves a sum from 0.0 as it was (an addition of a zero to a finite float is exact, and the
    sum is never -0.0): a category that never moved is left out of every sum, and one that moved
    at most calls is summed over every call, its own column as it is (two steps a call, not
    three picking the calls where it moved)."""

    def __init__(self, rows: Sequence[Sequence[float]], targets: Sequence[int], k: int) -> None:
        self._take([[row[i] for row in rows] for i in range(k)], targets)

    @classmethod
    def of_columns(cls, columns: list[list[float]], targets: Sequence[int]) -> _Normal:
        """The equations of the rows given as a column per category."""
        normal = cls.__new__(cls)
        normal._take(columns, targets)
        return normal

    def _take(self, columns: list[list[float]], targets: Sequence[int]) -> None:
        self.k = len(columns)
        self.targets = targets
        self.columns = columns
        self.moved = [[c for c, x in enumerate(column) if x] for column in self.columns]
        self.active = [i for i, moved in enumerate(self.moved) if moved]
        """The categories that moved at some call (the others add 0.0 to every sum)."""
        self.picks: list[list[int] | None] = [
            None if 3 * len(moved) > 2 * len(targets) else moved for moved in self.moved
        ]
        """Per category, the calls its sums are taken over: None (every call: it moved at most
        of them), else the calls where it moved."""

    def predicted(self, ratios: Sequence[float]) -> list[float]:
        """Each call's ``sum(map(mul, ratios, row))``: each active category's column times its
        ratio, a loop in C over the calls, the products added up from 0.0 in the categories'
        order (by ``sum`` per call, :data:`_SUM_ADDS_IN_ORDER`, else a column at a time; a
        column of zeros adds nothing)."""
        if _SUM_ADDS_IN_ORDER and self.active:  # (each call's products in a tuple, one sum)
            products = [map(mul, repeat(ratios[i]), self.columns[i]) for i in self.active]
            return list(map(sum, zip(*products, strict=True), repeat(0.0)))
        predicted = [0.0] * len(self.targets)
        for i in self.active:
            column = self.columns[i]
            predicted = list(map(add, predicted, map(mul, repeat(ratios[i]), column)))
        return predicted

    def equations(self, weights: Sequence[float]) -> tuple[list[list[float]], list[float]]:
        """The weighted normal equations ``Xᵀ W X`` and ``Xᵀ W y`` of every category: for each
        call where category ``i`` moved (``xᵢ``), ``w xᵢ`` times its target and its row added
        up from 0.0 call by call (the same sums, in the same order, as a loop over the calls)."""
        k, columns, active = self.k, self.columns, self.active
        normal = [[0.0] * k for _ in range(k)]
        rhs = [0.0] * k
        for i in active:
            picks = self.picks[i]
            wx = list(map(mul, _picked(weights, picks), _picked(columns[i], picks)))
            rhs[i] = _added(map(mul, wx, _picked(self.targets, picks)))
            line = normal[i]
            for j in active:
                if j >= i:
                    line[j] = _added(map(mul, wx, _picked(columns[j], picks)))
        for i in range(k):
            for j in range(i):
                normal[i][j] = normal[j][i]
        return normal, rhs


_SUM_ADDS_IN_ORDER = sys.version_info < (3, 12)
"""Whether ``sum`` adds floats up in a C double, one after the other (Python 3.11): the floats
of adding each to the sum in turn, with no float made nor call per value. From 3.12 ``sum``
compensates its rounding (another figure), and the sums are added up by ``reduce``."""


def _added(values: Iterable[float]) -> float:
    """``values`` added up from 0.0 in their order, each step rounded as a float addition is:
    every sum of the normal equations (a test holds it to a loop adding them one by one)."""
    if _SUM_ADDS_IN_ORDER:
        return sum(values, 0.0)
    return reduce(add, values, 0.0)


def _picked(values: Sequence[_V], picks: list[int] | None) -> Iterable[_V]:
    """``values`` at the calls ``picks`` (every value: None)."""
    return values if picks is None else map(values.__getitem__, picks)


def _bounded(normal: list[list[float]], rhs: list[float]) -> list[float]:
    """The ratios of the normal equations, each held to [MIN_RATIO, MAX_RATIO] (one out of it
    is fixed at the bound and the others fitted again)."""
    free = list(range(len(rhs)))
    ratios = [1.0] * len(rhs)
    while True:
        solved = _solve(normal, rhs, free, ratios)
        for i, value in zip(free, solved, strict=True):
            ratios[i] = value
        out = [i for i in free if not MIN_RATIO <= ratios[i] <= MAX_RATIO]
        if not out:
            return ratios
        for i in out:
            ratios[i] = min(max(ratios[i], MIN_RATIO), MAX_RATIO)
            free.remove(i)


def _solve(
    normal: list[list[float]], rhs: list[float], free: list[int], ratios: list[float]
) -> list[float]:
    """Ridge least squares for the ``free`` ratios, the others held at ``ratios``."""
    held = [i for i in range(len(rhs)) if i not in free]
    matrix = [[normal[i][j] for j in free] for i in free]
    vector = [rhs[i] - sum(normal[i][h] * ratios[h] for h in held) for i in free]
    strongest = max((matrix[n][n] for n in range(len(free))), default=0.0)
    pull = PULL * strongest if strongest > 0 else 1.0
    for n in range(len(free)):
        matrix[n][n] += pull
        vector[n] += pull  # towards 1.0
    return _gauss(matrix, vector)


def _gauss(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """The solution of ``matrix · x = rhs`` (Gaussian elimination, partial pivoting)."""
    n = len(rhs)
    a = [row[:] for row in matrix]
    b = rhs[:]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        for r in range(col + 1, n):
            factor = a[r][col] / a[col][col]
            if factor:
                for c in range(col, n):
                    a[r][c] -= factor * a[col][c]
                b[r] -= factor * b[col]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (b[i] - sum(a[i][j] * x[j] for j in range(i + 1, n))) / a[i][i]
    return x
