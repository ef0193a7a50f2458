"""What showing a new result reads again: after a limit change the status line's first overflow
is worked out once per result, the calls a column marks are found without a walk of the calls
when it marks none, and the gauge takes the largest simulated figure from the result's summary
and the largest window without reading every call's."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from functools import reduce
from operator import or_
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.policy import get_preset
from core.replay import ReplayResult, replay
from tests.support.sessions import claude_like_session
from tests.unit.test_subagents import _family  # the family written for the core tests
from tui.columns import _searched, any_marked, forget_marks, marked
from tui.screen_state import SessionState
from tui.widgets.gauge_scale import largest
from tui.widgets.gauge_series import SUBAGENT, Series, _replayed_columns, build_series


class _Untouchable(list[int]):
    """Items that fail when walked."""

    def __iter__(self) -> Iterator[int]:
        raise AssertionError("walked")

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("read")


def test_marked_walks_no_item_when_nothing_is_marked() -> None:
    assert list(marked(_Untouchable([1, 2, 3]), [False, False, False])) == []
    assert list(marked([4, 5, 6], [False, True, True])) == [5, 6]


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The point columns read of any result, from now on."""
    reads: list[str] = []
    column = ReplayResult.point_column

    def counted(self: ReplayResult, name: str) -> Any:
        reads.append(name)
        return column(self, name)

    monkeypatch.setattr(ReplayResult, "point_column", counted)
    return reads


def test_the_first_overflow_is_worked_out_once_per_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = claude_like_session(12, window=60_000, big_lines=3000)
    policy = get_preset("seed")
    state = SessionState(session, policy)
    first = replay(session, policy)
    state.set_result(first)
    reads = _counted(monkeypatch)
    answer = state.first_overflow()
    assert reads  # (worked out from the columns)
    reads.clear()
    assert state.first_overflow() == answer
    assert reads == []  # (the same result: not again)
    other = get_preset("seed")
    other.truncation.max_lines = 40
    second = replay(session, other)
    state.set_result(second)
    assert state._first_overflow is None  # (the earlier result is not held)
    reads.clear()
    assert state.first_overflow() == answer  # (none either way here)
    assert reads


def test_the_gauge_takes_the_simulated_peak_from_the_summary() -> None:
    session = claude_like_session(12, window=60_000, big_lines=3000)
    result = replay(session, get_preset("seed"))
    columns = _replayed_columns(result)
    assert columns.simulated_peak == result.summary.peak_simulated
    assert columns.simulated_peak == max(result.point_column("simulated_tokens"))
    series = build_series(session, result)
    assert series.peak == max(series.recorded_peak, result.summary.peak_simulated)


def test_largest_reads_one_value_repeated_as_that_value() -> None:
    assert largest(array("q", [7]) * 5) == 7
    assert largest(array("q", [7, 9, 3])) == 9
    assert largest([4, 2]) == 4
    assert largest(array("q"), default=3) == 3


class _Walks(list[bool]):
    """A column that counts the walks of it."""

    walks = 0

    def __iter__(self) -> Iterator[bool]:
        type(self).walks += 1
        return super().__iter__()


def test_a_column_is_searched_for_a_mark_once_until_it_grows() -> None:
    column = _Walks([False] * 5)
    _Walks.walks = 0
    assert not any_marked(column)
    assert not any_marked(column)
    assert list(marked(range(5), column)) == []
    assert _Walks.walks == 1  # (the same column: its answer kept)
    column.append(True)  # (a walk's column only grows)
    assert any_marked(column)
    assert list(marked(range(6), column)) == [5]
    other = _Walks([False, True])
    assert any_marked(other)  # (another column: searched)
    for n in range(20):  # (many columns: each answered right, whatever is kept)
        assert any_marked([False] * n + [True]) and not any_marked([False] * n)
    forget_marks()  # (a closed screen's: none held)
    assert not _searched


def _every_flag_walked(series: Series) -> int:
    return reduce(or_, set(series.flags), 0)


@pytest.mark.parametrize("max_lines", [40, 2000])
@pytest.mark.parametrize("window", [60_000, 150_000])
def test_the_series_knows_every_flag_its_calls_have(window: int, max_lines: int) -> None:
    session = claude_like_session(14, window=window, big_lines=3000, with_compaction=True)
    policy = get_preset("seed")
    policy.truncation.max_lines = max_lines
    recorded = build_series(session, None)
    assert recorded.flags_set is None  # (worked out from the calls)
    assert recorded.every_flag() == _every_flag_walked(recorded)
    result = replay(session, policy)
    series = build_series(session, result, recorded)
    assert series.flags_set is not None
    assert series.flags_set == _every_flag_walked(series)
    assert series.every_flag() == series.flags_set
    again = build_series(session, replay(session, get_preset("seed")), series)
    assert again.every_flag() == _every_flag_walked(again)


def test_a_sub_agents_calls_are_among_the_flags_set(tmp_path: Path) -> None:
    parent = load_session(_family(tmp_path))
    series = build_series(parent, replay(parent, get_preset("seed")))
    assert series.flags_set is not None and series.flags_set & SUBAGENT
    assert series.flags_set == _every_flag_walked(series)
