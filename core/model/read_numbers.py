"""Numbers read from untrusted files: one coercion for every loader.

A transcript is written by another program and may be damaged, hand-edited or hostile, so a
number in it can be missing, a string, a boolean, negative, infinite, or larger than anything a
real session holds. Every loader reads its counts through :func:`as_int` (or :func:`count`, which
also says what was wrong), so that the same input means the same thing in every format.
"""

from __future__ import annotations

import math
from typing import Any, overload

MAX_COUNT = 1_000_000_000
"""The largest token or byte count a single record can plausibly hold (10^9). No model has a
window near it; a larger figure is damage, not data."""


@overload
def as_int(value: Any, default: int = 0) -> int: ...


@overload
def as_int(value: Any, default: None) -> int | None: ...


def as_int(value: Any, default: int | None = 0) -> int | None:
    """``value`` as an int: an int (not a bool) as it is, a finite float truncated, anything
    else (missing, strings, booleans, NaN, infinities) ``default`` — ``None`` for a count a
    record may leave out."""
    if type(value) is int:
        return value
    if type(value) is float and math.isfinite(value):
        return int(value)
    return default


def count(value: Any) -> tuple[int, str | None]:
    """A token or byte count: ``(value, None)`` when it is a plausible count, else the count it
    is taken as (0, or :data:`MAX_COUNT` for a figure above it) and what was wrong with it.

    Missing values (``None``) are 0 without a problem: most records leave counts out.
    """
    if value is None:
        return 0, None
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value, None
    if type(value) is not int and type(value) is not float:
        return 0, f"count {show_value(value)} is not a number; taken as 0"
    if not math.isfinite(value):
        return 0, f"count {value!r} is not finite; taken as 0"
    if value < 0:
        return 0, f"negative count {value!r} taken as 0"
    if value > MAX_COUNT:
        return MAX_COUNT, f"count {value!r} is above {MAX_COUNT:,}; taken as {MAX_COUNT:,}"
    return int(value), None


def optional_count(value: Any) -> tuple[int | None, str | None]:
    """A count a record may leave out: ``(None, None)`` when it is missing, ``(None, why)``
    when it is not a usable number (a string, a boolean, NaN, an infinity, a negative figure:
    dropped), the figure capped at :data:`MAX_COUNT` (and why) when it is above it."""
    if value is None:
        return None, None
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value, None
    if type(value) is not int and type(value) is not float:
        return None, f"count {show_value(value)} is not a number; dropped"
    if not math.isfinite(value):
        return None, f"count {value!r} is not finite; dropped"
    if value < 0:
        return None, f"negative count {value!r} dropped"
    if value > MAX_COUNT:
        return MAX_COUNT, f"count {value!r} is above {MAX_COUNT:,}; taken as {MAX_COUNT:,}"
    return int(value), None


def plausible(value: Any) -> bool:
    """``value`` is missing or a count :func:`count` takes as it is (the fast path of a
    loader's check: most figures are)."""
    return value is None or (type(value) is int and 0 <= value <= MAX_COUNT)


def show_value(value: Any) -> str:
    """A value read from a damaged record, short enough for a diagnostic."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
