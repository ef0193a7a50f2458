"""Whole int columns added to and compared at once: an array's bytes read as one int, each value
a *lane* of its bits (SIMD within a register).

Adding ``k`` to every value of a 100,000-value column is one addition of two big ints (``k``
repeated in every lane), and finding the first value at or above ``t`` one addition and one mask,
all in C: a list comprehension or a ``map`` made an int object per value (3-4 ms a column, where
a stretch that follows an earlier run makes several: :mod:`core.replay.shifted`).

A lane's arithmetic never carries into its neighbour as long as every value, and every result, is
below half the lane's range (its top bit clear): each function checks that of its input and its
result, and returns None when a value does not fit (the caller then does it value by value).
Only unsigned readings of the bytes are used, so a negative value in a signed array reads as a
value with its top bit set: it does not fit either. Machines storing arrays big-endian are left to
the value-by-value path (:data:`AVAILABLE`).
"""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

AVAILABLE = sys.byteorder == "little"
"""The lanes are read little-endian (value 0 in the lowest bits)."""


@lru_cache(maxsize=8)
def _masks(n: int, size: int) -> tuple[int, int, int]:
    """For ``n`` lanes of ``size`` bytes: 1 in each lane, each lane's top bit, one lane's top
    bit (a stretch reads columns of one length: made once for them)."""
    ones = int.from_bytes(b"\x01".ljust(size, b"\x00") * n, "little")
    half = 1 << (8 * size - 1)
    return ones, ones * half, half


def _read(values: array[int]) -> tuple[int, int, int, int] | None:
    """``values`` as one int, with 1 in each lane, the lanes' top bits and one lane's top bit
    (None: a value does not fit below its lane's top bit, or the machine is big-endian)."""
    if not AVAILABLE:
        return None
    ones, top, half = _masks(len(values), values.itemsize)
    whole = int.from_bytes(values, "little")
    return None if whole & top else (whole, ones, top, half)


def _written(whole: int, like: array[int]) -> array[int]:
    """``whole``'s lanes as an array of ``like``'s type and length."""
    return array(like.typecode, whole.to_bytes(len(like) * like.itemsize, "little"))


def plus(values: array[int], k: int) -> array[int] | None:
    """``values`` each plus ``k``, floored at 0 (``max(0, value + k)``), in an array of their
    type; None unless every value and every result is below the lanes' top bit, and every value
    at least 0."""
    read = _read(values)
    if read is None:
        return None
    whole, ones, top, half = read
    if not -half < k < half:
        return None
    if k >= 0:
        whole += k * ones  # (each lane below twice its half: no carry)
        return None if whole & top else _written(whole, values)
    # Each lane plus (half + k): its top bit set where the value is at least -k (no borrow,
    # no carry); those lanes less the half are the sums, the others are floored to 0.
    whole += (half + k) * ones
    kept = whole & top
    if kept != top:
        whole &= (kept >> (8 * values.itemsize - 1)) * (2 * half - 1)  # (the others' lanes cleared)
    return _written(whole - kept, values)


def plus_difference(values: array[int], added: array[int], taken: array[int]) -> array[int] | None:
    """``values + added - taken``, value by value, in an array of their type (all three of one
    type and length); None unless every input and result is at least 0 and below the lanes'
    top bit."""
    if not (values.typecode == added.typecode == taken.typecode):
        return None
    if not len(values) == len(added) == len(taken):
        return None
    read, other, less = _read(values), _read(added), _read(taken)
    if read is None or other is None or less is None:
        return None
    whole, _ones, top, _half = read
    whole += other[0]  # (each lane below twice its half: no carry)
    if whole & top:
        return None
    # Each lane plus its half, less the value taken: between 0 and twice the half (no borrow),
    # its top bit set where the result is at least 0.
    whole = whole + top - less[0]
    if whole & top != top:
        return None
    return _written(whole - top, values)


def first_at_least(values: array[int], threshold: int) -> int | None:
    """The index of the first value at or above ``threshold`` (the length when none is); None
    when a value does not fit below its lane's top bit."""
    read = _read(values)
    if read is None:
        return None
    whole, ones, top, half = read
    n = len(values)
    if threshold <= 0:
        return 0
    if threshold >= half:
        return n  # (every value is below the half)
    # Each lane plus (half - threshold): its top bit set where the value is at the threshold
    # or above (no carry: every sum stays below twice the half).
    crossed = (whole + (half - threshold) * ones) & top
    if not crossed:
        return n
    return ((crossed & -crossed).bit_length() - 1) // (8 * values.itemsize)
