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

from collections.abc import Mapping, Sequence

MIN_RATIO = 0.25
"""The smallest ratio a category may get (an estimator over-counting four times)."""
MAX_RATIO = 4.0
"""The largest ratio a category may get (a tokenizer counting one token per character)."""
ROBUST_ROUNDS = 6
"""Reweighted rounds after the least-squares fit: the ratios then minimise the calls' absolute
relative errors, so one message the estimator misjudges badly (a dense compiler log, an image)
does not pull every call of the session off."""
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
    weights = [1.0 / max(total, 1) ** 2 for total in totals]
    ratios = _bounded(growth, recorded_growth, weights, categories)
    for _ in range(ROBUST_ROUNDS):
        # least absolute relative error, by reweighting: a call far off weighs less
        weights = [
            1.0 / (max(total, 1) * max(abs(target - _explained(row, ratios)), FLOOR * total, 1.0))
            for row, target, total in zip(growth, recorded_growth, totals, strict=True)
        ]
        ratios = _bounded(growth, recorded_growth, weights, categories)
    return {k: round(v, 4) for k, v in ratios.items()}


def _explained(row: Mapping[str, int], ratios: Mapping[str, float]) -> float:
    return sum(ratio * row.get(k, 0) for k, ratio in ratios.items())


def _bounded(
    growth: Sequence[Mapping[str, int]],
    recorded_growth: Sequence[int],
    weights: Sequence[float],
    categories: Sequence[str],
) -> dict[str, float]:
    """The weighted fit, each ratio held to [MIN_RATIO, MAX_RATIO] (one out of it is fixed at
    the bound and the others fitted again)."""
    free = list(categories)
    fixed: dict[str, float] = {}
    while True:
        solved = _solve(growth, recorded_growth, weights, free, fixed)
        out = {k: v for k, v in solved.items() if not MIN_RATIO <= v <= MAX_RATIO}
        if not out:
            return {**fixed, **solved}
        for key, value in out.items():
            fixed[key] = min(max(value, MIN_RATIO), MAX_RATIO)
            free.remove(key)


def _solve(
    growth: Sequence[Mapping[str, int]],
    recorded_growth: Sequence[int],
    weights: Sequence[float],
    free: Sequence[str],
    fixed: Mapping[str, float],
) -> dict[str, float]:
    """Weighted ridge least squares for the ``free`` ratios, the ``fixed`` ones held."""
    n = len(free)
    normal = [[0.0] * n for _ in range(n)]
    rhs = [0.0] * n
    for row, target, weight in zip(growth, recorded_growth, weights, strict=True):
        rest = target - sum(ratio * row.get(k, 0) for k, ratio in fixed.items())
        xs = [float(row.get(k, 0)) for k in free]
        for i, xi in enumerate(xs):
            if xi == 0.0:
                continue
            rhs[i] += weight * xi * rest
            for j, xj in enumerate(xs):
                normal[i][j] += weight * xi * xj
    strongest = max((normal[i][i] for i in range(n)), default=0.0)
    pull = PULL * strongest if strongest > 0 else 1.0
    for i in range(n):
        normal[i][i] += pull
        rhs[i] += pull  # towards 1.0
    return dict(zip(free, _gauss(normal, rhs), strict=True))


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
