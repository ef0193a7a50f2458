"""The peak from a replay's columns (what ``analyze --json`` reads, without building points) is
the peak :func:`peak_point` finds among the points."""

from __future__ import annotations

from typing import Any

from core.insights.named_figures import peak_index, peak_point
from core.model.fastmodel import build
from core.replay.results import CallPoint


def _point(c: int, baseline: int, window: int | None) -> CallPoint:
    fields: dict[str, Any] = dict.fromkeys(CallPoint.model_fields)
    fields.update(call_index=c, baseline_tokens=baseline, window=window)
    return build(CallPoint, fields)


def test_the_largest_share_of_the_window_wins_not_the_largest_figure() -> None:
    points = [_point(0, 150_000, 1_000_000), _point(1, 90_000, 100_000), _point(2, 95_000, None)]
    found = peak_point(points)
    assert found is not None and found.call_index == 1
    assert peak_index([150_000, 90_000, 95_000], [1_000_000, 100_000, None]) == 1


def test_the_first_of_equals_and_no_calls() -> None:
    assert peak_index([5, 7, 7], [None, None, None]) == 1
    assert peak_index([], []) is None
    assert peak_point([]) is None
