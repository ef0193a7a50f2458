"""A result's summary counts what its points say (overflows recorded and simulated, the peak),
whatever the windows; the session's own counts (calls without usage, recorded overflows per
window) are counted once per session and read by every result of a limit change."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from core.replay import Replayer, replay
from core.replay.calls import Calls
from core.replay.state import Check, Trace
from core.replay.timeline import ColumnPoints
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.unit.test_replay import _growing, _quiet


def _counted(result: Any) -> tuple[int, int, int]:
    recorded = [p.overflow_recorded for p in result.points]
    simulated = [p.overflow_simulated for p in result.points]
    both = sum(r and s for r, s in zip(recorded, simulated, strict=True))
    return sum(recorded), sum(simulated), both


def test_the_summary_counts_the_overflows_of_its_points() -> None:
    session = _growing(10_000, 30_000, 60_000, 190_000, 230_000)
    result = replay(session, _quiet())
    recorded, simulated, both = _counted(result)
    summary = result.summary
    assert (recorded, simulated) == (2, 2)
    assert summary.overflows_recorded == recorded and summary.overflows_simulated == simulated
    assert summary.overflows_avoided == recorded - both
    assert summary.overflows_caused == simulated - both
    figures = [p.simulated_tokens for p in result.points]
    assert summary.peak_simulated == max(figures)
    assert summary.peak_call_index == figures.index(max(figures))


def test_a_session_counts_its_recorded_overflows_once_per_window() -> None:
    session = _growing(10_000, 30_000, 60_000, 190_000, 230_000)
    calls = Calls(session)
    for window in (None, 100_000, 200_000, 1_000_000):
        flags = calls.recorded_overflow_flags(window)
        assert calls.recorded_overflow_count(window) == sum(flags)
        assert calls.recorded_overflow_count(window) == sum(flags)  # (kept: the same count)
    assert (
        calls.recorded_overflow_count(100_000) == 3 and calls.recorded_overflow_count(200_000) == 2
    )
    assert calls.recorded_overflow_count(None) == 0


def test_calls_without_usage_are_counted_once() -> None:
    script = SessionBuilder().user("start")
    for step in range(6):
        context = None if step in (2, 4) else 10_000 + step * 1_000
        script.call(context=context).result(text_of_tokens(500, str(step)))
    session = script.reply("end", context=20_000).session(window=200_000)
    calls = Calls(session)
    assert calls.missing_usage() == calls.usage_context.count(None) > 0
    notes = Replayer(session).run(_quiet()).notes
    missing = calls.missing_usage()
    assert f"{missing} of {len(calls)} calls have no usable usage" in "\n".join(notes)


def _points(windows: list[int | None]) -> ColumnPoints:
    trace = Trace(_quiet())
    trace.made.extend([Check(None, None, False, False, None, None)] * len(windows))
    setting: Any = SimpleNamespace(windows=windows)
    return ColumnPoints(trace, Calls(_growing(10_000)), setting)


def test_one_window_for_every_call() -> None:
    big = 10**6
    assert _points([200_000] * 3).one_window() == (True, 200_000)
    assert _points([big + 1, int(str(big + 1))]).one_window() == (True, big + 1)
    assert _points([200_000, 100_000, 200_000]).one_window() == (False, 200_000)
    assert _points([None, None]).one_window() == (True, None)
    assert _points([None, 0]).one_window() == (False, None)
    assert _points([]).one_window() == (True, None)
