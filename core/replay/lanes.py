"""Whole int columns added to and compared at once: an array's bytes read as one int, each value
a *lane* of its bits (SIMD within a register).

Adding ``k`` to every value of a 100,000-value column is one addition of two big ints (``k``
repeated in every lane), and finding the first value at or above ``t`` one addition and one mask,
all in C: a list comprehension or a ``map`` made an int object per value (3-4 ms a column, where
a stretch that follows an earlier run makes several: :mod:`core.replay.shifted`).

A lane's arithmetic never carries into its neighbour as long as every value, and every result, is
below half the lane's range (its top bit clear): :class:`Lanes` holds only such values (reading
an array checks it), and each operation checks its result, giving None when a value does not fit
(the caller then does it value by value). Only unsigned readings of the bytes are used, so a
negative value in a signed array reads as a value with its top bit set: it does not fit either.
Machines storing arrays big-endian are left to the value-by-value path (:data:`AVAILABLE`).
"""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

AVAILABLE = sys.byteorder == "little"
"""The lanes are read little-endian (value 0 in the lowest bits)."""


@lru_cache(maxsize=8)
def _masks(n: int, size: int) -> tuple[int, int]:
    """For ``n`` lanes of ``size`` bytes: 1 in each lane, and each lane's top bit (a stretch
    reads columns of a few lengths: made once for each)."""
    ones = int.from_bytes(b"\x01".ljust(size, b"\x00") * n, "little")
    return ones, ones << (8 * size - 1)


class Lanes:
    """``n`` values, each at least 0 and below its lane's top bit, as one int: value ``i`` in
    bits ``i * bits`` up (``bits``: 8 times the size of the array type they are read from and
    written to)."""

    __slots__ = ("bits", "n", "typecode", "whole")

    def __init__(self, whole: int, n: int, typecode: str) -> None:
        self.whole = whole
        self.n = n
        self.typecode = typecode
        self.bits = 8 * array(typecode).itemsize

    @classmethod
    def of(cls, values: array[int]) -> Lanes | None:
        """``values`` as lanes (None: a value does not fit below its lane's top bit, or the
        machine is big-endian)."""
        if not AVAILABLE:
            return None
        whole = int.from_bytes(values, "little")
        if whole & _masks(len(values), values.itemsize)[1]:
            return None
        return cls(whole, len(values), values.typecode)

    def _made(self, whole: int, n: int | None = None) -> Lanes:
        made = Lanes.__new__(Lanes)
        made.whole, made.n, made.typecode, made.bits = (
            whole,
            self.n if n is None else n,
            self.typecode,
            self.bits,
        )
        return made

    @property
    def _half(self) -> int:
        """One lane's top bit."""
        return 1 << (self.bits - 1)

    def array(self) -> array[int]:
        """The values, in an array of the type they were read from."""
        size = self.bits // 8
        return array(self.typecode, self.whole.to_bytes(self.n * size, "little"))

    def plus(self, k: int) -> Lanes | None:
        """Each value plus ``k``, floored at 0 (``max(0, value + k)``); None where a result is
        not below the lanes' top bit."""
        half = self._half
        if not -half < k < half:
            return None
        ones, top = _masks(self.n, self.bits // 8)
        if k >= 0:
            whole = self.whole + k * ones  # (each lane below twice its half: no carry)
            return None if whole & top else self._made(whole)
        # Each lane plus (half + k): its top bit set where the value is at least -k (no borrow,
        # no carry); those lanes less the half are the sums, the others are floored to 0.
        whole = self.whole + (half + k) * ones
        kept = whole & top
        if kept != top:
            whole &= (kept >> (self.bits - 1)) * (2 * half - 1)  # (the others' lanes cleared)
        return self._made(whole - kept)

    def after(self, value: int) -> Lanes | None:
        """``value`` followed by these values (None: it does not fit below the top bit)."""
        if not 0 <= value < self._half:
            return None
        return self._made(self.whole << self.bits | value, self.n + 1)

    def plus_difference(self, added: Lanes, taken: Lanes) -> Lanes | None:
        """``self + added - taken``, value by value (lanes of one type and length); None where
        a sum or a result does not fit below the lanes' top bit, or is below 0."""
        if not (self.typecode == added.typecode == taken.typecode and self.n == added.n == taken.n):
            return None
        top = _masks(self.n, self.bits // 8)[1]
        whole = self.whole + added.whole  # (each lane below twice its half: no carry)
        if whole & top:
            return None
        # Each lane plus its half, less the value taken: between 0 and twice the half (no
        # borrow), its top bit set where the result is at least 0.
        whole = whole + top - taken.whole
        if whole & top != top:
            return None
        return self._made(whole - top)

    def first_at_least(self, threshold: int) -> int:
        """The index of the first value at or above ``threshold`` (the length when none is)."""
        half = self._half
        if threshold <= 0:
            return 0
        if threshold >= half:
            return self.n  # (every value is below the half)
        ones, top = _masks(self.n, self.bits // 8)
        # Each lane plus (half - threshold): its top bit set where the value is at the threshold
        # or above (no carry: every sum stays below twice the half).
        crossed = (self.whole + (half - threshold) * ones) & top
        if not crossed:
            return self.n
        return ((crossed & -crossed).bit_length() - 1) // self.bits
