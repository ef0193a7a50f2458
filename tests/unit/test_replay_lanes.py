"""Whole columns added to and compared at once (:mod:`core.replay.lanes`): the same values as
value by value wherever every value fits below its lane's top bit, else None (the caller does it
value by value)."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.replay import lanes as lanes_module
from core.replay.lanes import Lanes

TYPECODES = ("B", "H", "I", "i", "q", "Q")


def _bounds(typecode: str) -> tuple[int, int, int]:
    """The least and greatest value an array of ``typecode`` holds, and its lanes' top bit."""
    bits = 8 * array(typecode).itemsize
    if typecode.islower():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1, 1 << (bits - 1)
    return 0, (1 << bits) - 1, 1 << (bits - 1)


@st.composite
def _columns(draw: st.DrawFn, count: int = 1) -> tuple[str, list[array[int]]]:
    """``count`` columns of one type and length: small values, or some anywhere in the type's
    range (at or past the lanes' top bit, negative)."""
    typecode = draw(st.sampled_from(TYPECODES))
    low, high, _half = _bounds(typecode)
    n = draw(st.integers(0, 12))
    small = st.integers(0, min(high, 1_000))
    values = small if draw(st.booleans()) else st.one_of(small, st.integers(low, high))
    return typecode, [
        array(typecode, draw(st.lists(values, min_size=n, max_size=n))) for _ in range(count)
    ]


def _fits(values: list[int], half: int) -> bool:
    return all(0 <= value < half for value in values)


def _lanes(values: array[int]) -> Lanes | None:
    lanes = Lanes.of(values)
    half = _bounds(values.typecode)[2]
    assert (lanes is None) is not _fits(list(values), half)
    if lanes is not None:
        assert lanes.n == len(values) and list(lanes.array()) == list(values)
        assert lanes.array().typecode == values.typecode
    return lanes


@given(_columns(), st.integers(-(2**64), 2**64) | st.integers(-1_000, 1_000))
def test_plus_is_each_value_plus_k_floored_at_0(
    columns: tuple[str, list[array[int]]], k: int
) -> None:
    typecode, (values,) = columns
    half = _bounds(typecode)[2]
    lanes = _lanes(values)
    if lanes is None:
        return
    expected = [max(0, value + k) for value in values]
    made = lanes.plus(k)
    if made is None:
        assert not (_fits(expected, half) and -half < k < half)
    else:
        assert list(made.array()) == expected and _fits(expected, half)


@given(_columns(), st.integers(-5, 1_100) | st.integers(-(2**64), 2**64))
def test_a_value_put_before_the_others(columns: tuple[str, list[array[int]]], value: int) -> None:
    typecode, (values,) = columns
    lanes = _lanes(values)
    if lanes is None:
        return
    made = lanes.after(value)
    if made is None:
        assert not _fits([value], _bounds(typecode)[2])
    else:
        assert list(made.array()) == [value, *values] and made.n == len(values) + 1


@given(_columns(3))
def test_plus_difference_is_value_by_value(columns: tuple[str, list[array[int]]]) -> None:
    typecode, (values, added, taken) = columns
    half = _bounds(typecode)[2]
    read = [_lanes(column) for column in (values, added, taken)]
    if read[0] is None or read[1] is None or read[2] is None:
        return
    sums = [a + b for a, b in zip(values, added, strict=True)]
    expected = [s - c for s, c in zip(sums, taken, strict=True)]
    made = read[0].plus_difference(read[1], read[2])
    if made is None:
        assert not (_fits(sums, half) and _fits(expected, half))
    else:
        assert list(made.array()) == expected


@given(_columns(), st.integers(-5, 1_100) | st.integers(-(2**64), 2**64))
def test_the_first_value_at_or_above_a_threshold(
    columns: tuple[str, list[array[int]]], threshold: int
) -> None:
    _typecode, (values,) = columns
    lanes = _lanes(values)
    if lanes is not None:
        first = next((i for i, value in enumerate(values) if value >= threshold), len(values))
        assert lanes.first_at_least(threshold) == first


def test_lanes_of_other_types_or_lengths_are_left_to_the_caller() -> None:
    one, other, longer = (
        Lanes.of(array("I", [1])),
        Lanes.of(array("q", [1])),
        Lanes.of(array("I", [1, 2])),
    )
    assert one is not None and other is not None and longer is not None
    assert one.plus_difference(other, one) is None
    assert longer.plus_difference(one, one) is None


def test_a_big_endian_machine_reads_no_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes_module, "AVAILABLE", False)
    assert Lanes.of(array("I", [1, 2, 3])) is None
