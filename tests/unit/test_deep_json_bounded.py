""":func:`core.model.deep_json.bounded`'s fast path (one set test over the value types of a flat
dict) decides as the member-by-member test it replaced, and bounded gives what the full depth
walk gives."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.model.deep_json import _FLAT, MAX_DEPTH, bounded, deeper_than, dumps


class _Kind(IntEnum):
    A = 1


class _Text(str):
    pass


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


_ODD: list[Any] = [
    {},
    {"a": "x", "b": 1, "c": 1.5, "d": True, "e": None},
    {"a": _Kind.A},  # an int subclass: not flat by type
    {"a": _Text("x")},
    {"a": [1, 2]},
    {"a": {"b": 1}},
    _nested(MAX_DEPTH),
    _nested(MAX_DEPTH + 1),
    [_nested(MAX_DEPTH + 3)],
    "text",
    None,
    [],
]


def _reference(value: Any) -> Any:
    """bounded as it was: the member-by-member fast test, then the depth walk."""
    if type(value) is dict and all(type(v) in _FLAT for v in value.values()):
        return value
    if isinstance(value, (dict, list)) and deeper_than(value, MAX_DEPTH):
        return dumps(value)
    return value


def test_odd_values_are_bounded_as_before() -> None:
    for value in _ODD:
        got, expected = bounded(value), _reference(value)
        assert got == expected and type(got) is type(expected)
    assert isinstance(bounded(_nested(MAX_DEPTH + 1)), str)
    assert bounded(_nested(MAX_DEPTH)) == _nested(MAX_DEPTH)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
)


@given(st.dictionaries(st.text(), _JSON, max_size=5))
def test_any_dict_is_bounded_as_before(value: dict[str, Any]) -> None:
    assert bounded(value) == _reference(value)
