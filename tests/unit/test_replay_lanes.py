"""Whole columns added to and compared at once (:mod:`core.replay.lanes`): the same values as
value by value wherever every value fits below its lane's top bit, else None (the caller does it
value by value)."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.replay import lanes

TYPECODES = ("B", "H", "I", "i", "q", "Q")


def _bounds(typecode: str) -> tuple[int, int, int]:
    """The least and greatest value an array of ``typecode`` holds, and its lanes' top bit."""
    bits = 8 * array(typecode).itemsize
    if typecode.islower():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1, 1 << (bits - 1)
    return 0, (1 << bits) - 1, 1 << (bits - 1)


@st.composite
def _columns(draw: st.DrawFn, count: int = 1) -> tuple[str, list[array[int]]]:
    """``count`` columns of one type and length: mostly small values, some anywhere in the
    type's range (at or past the lanes' top bit, negative)."""
    typecode = draw(st.sampled_from(TYPECODES))
    low, high, _half = _bounds(typecode)
    n = draw(st.integers(0, 12))
    values = st.one_of(st.integers(0, min(high, 1_000)), st.integers(low, high))
    return typecode, [
        array(typecode, draw(st.lists(values, min_size=n, max_size=n))) for _ in range(count)
    ]


def _fits(values: list[int], half: int) -> bool:
    return all(0 <= value < half for value in values)


@given(_columns(), st.integers(-(2**64), 2**64) | st.integers(-1_000, 1_000))
def test_plus_is_each_value_plus_k_floored_at_0(
    columns: tuple[str, list[array[int]]], k: int
) -> None:
    typecode, (values,) = columns
    half = _bounds(typecode)[2]
    expected = [max(0, value + k) for value in values]
    made = lanes.plus(values, k)
    if made is None:
        assert not (_fits(list(values), half) and _fits(expected, half) and -half < k < half)
    else:
        assert made.typecode == typecode and list(made) == expected
        assert _fits(list(values), half) and _fits(expected, half)


@given(_columns(3))
def test_plus_difference_is_value_by_value(columns: tuple[str, list[array[int]]]) -> None:
    typecode, (values, added, taken) = columns
    half = _bounds(typecode)[2]
    sums = [a + b for a, b in zip(values, added, strict=True)]
    expected = [s - c for s, c in zip(sums, taken, strict=True)]
    made = lanes.plus_difference(values, added, taken)
    inputs_fit = all(_fits(list(column), half) for column in (values, added, taken))
    if made is None:
        assert not (inputs_fit and _fits(sums, half) and _fits(expected, half))
    else:
        assert made.typecode == typecode and list(made) == expected and inputs_fit


@given(_columns(), st.integers(-5, 1_100) | st.integers(-(2**64), 2**64))
def test_the_first_value_at_or_above_a_threshold(
    columns: tuple[str, list[array[int]]], threshold: int
) -> None:
    typecode, (values,) = columns
    half = _bounds(typecode)[2]
    found = lanes.first_at_least(values, threshold)
    if not _fits(list(values), half):
        assert found is None
    else:
        first = next((i for i, value in enumerate(values) if value >= threshold), len(values))
        assert found == first


def test_columns_of_other_types_or_lengths_are_left_to_the_caller() -> None:
    assert lanes.plus_difference(array("I", [1]), array("q", [1]), array("I", [1])) is None
    assert lanes.plus_difference(array("I", [1, 2]), array("I", [1]), array("I", [1])) is None


def test_a_big_endian_machine_reads_no_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "AVAILABLE", False)
    column = array("I", [1, 2, 3])
    assert lanes.plus(column, 1) is None
    assert lanes.first_at_least(column, 2) is None
    assert lanes.plus_difference(column, column, column) is None
