"""A compaction's neighbouring calls in its cost (core.insights.cost): the last call that sent
tokens before the compaction and the first at or after its end, found by bisection over the
calls' message indexes; the plain scan kept for calls out of order gives the same calls."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.insights import cost
from core.insights.cost import _neighbours, session_cost
from core.model.session import Session, Usage
from tests.support.builders import SessionBuilder


@st.composite
def _calls_and_span(draw: st.DrawFn) -> tuple[list[int], list[int], list[int], int, int]:
    """The message index of each entry (ascending), the entries that sent tokens (a subset, in
    order), their message indexes, and a compaction's span ``start <= end``: anywhere, from
    before every call to after the last, often at a call's own message."""
    message_index = sorted(draw(st.sets(st.integers(0, 60), max_size=15)))
    sent = [k for k in range(len(message_index)) if draw(st.booleans())]
    at = [message_index[k] for k in sent]
    places = st.one_of(st.integers(-1, 62), st.sampled_from(at or [0]))
    start, end = sorted((draw(places), draw(places)))
    return message_index, sent, at, start, end


def _scanned(
    sent: Sequence[int], message_index: Sequence[int], start: int, end: int
) -> tuple[int | None, int | None]:
    before = [k for k in sent if message_index[k] < start]
    after = [k for k in sent if message_index[k] >= end]
    return (before[-1] if before else None), (after[0] if after else None)


@given(_calls_and_span())
def test_the_neighbours_by_bisection_are_the_scans(
    found: tuple[list[int], list[int], list[int], int, int],
) -> None:
    """Issue 24: bisection over the ordered message indexes finds the calls the scan does,
    with the compaction at a call's message (it is after it), before every call (none
    before) and after every call (none after)."""
    message_index, sent, at, start, end = found
    expected = _scanned(sent, message_index, start, end)
    assert _neighbours(sent, at, True, start, end, message_index) == expected
    assert _neighbours(sent, at, False, start, end, message_index) == expected


def _read(tokens: int) -> Usage:
    """A call's usage with ``tokens`` read from the cache (each call's own figure)."""
    return Usage(input=100, cache_read=tokens, cache_write=50, output=10)


def _compacted(first: bool, last: bool) -> Session:
    """A session of several compactions: back to back, one before any call (``first``), one
    after every call (``last``)."""
    built = SessionBuilder(model="claude-opus-4-5").user("hi")
    if first:
        built.compaction("## before any call")
    built.call("Read", usage=_read(20_000)).result(tokens=3_000).reply("a", usage=_read(24_000))
    built.compaction("## one").compaction("## two, at once")
    built.user("more").call("Bash", usage=_read(9_000)).result(tokens=500)
    built.reply("b", usage=_read(11_000)).compaction("## three").reply("c", usage=_read(6_000))
    if last:
        built.user("go on").compaction("## after every call")
    return built.session(model="claude-opus-4-5", provider="anthropic")


@pytest.mark.parametrize(("first", "last"), [(False, False), (True, False), (False, True)])
def test_a_sessions_compaction_costs_are_the_scans(
    first: bool, last: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each compaction's cache before and after, and the call after it, are those the plain
    scan finds, for compactions back to back, before any call and after every call."""
    session = _compacted(first, last)
    found = session_cost(session).compactions
    assert [c.cache_read_before for c in found[first : first + 3]] == [24_000, 24_000, 11_000]

    def scan(
        sent: Sequence[int],
        at: Sequence[int],
        ordered: bool,
        start: int,
        end: int,
        message_index: Sequence[int],
    ) -> tuple[int | None, int | None]:
        assert ordered  # (a session's calls come in its order)
        return _neighbours(sent, at, False, start, end, message_index)

    monkeypatch.setattr(cost, "_neighbours", scan)
    assert session_cost(session).compactions == found
