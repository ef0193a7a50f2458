"""The token gauge: selection and CallSelected, the threshold row, markers, bucketing, unknown window."""

from __future__ import annotations

from core.model.session import Provenance, Session
from core.model.write_numbers import short_tokens
from core.policy import get_preset
from core.replay import ReplayResult, replay
from tests.support.sessions import growing_session
from tests.support.views_fixtures import Host, compacting_policy
from tui.widgets.gauge import GUTTER, TokenGauge
from tui.widgets.gauge_series import Series, bucket_series, build_series

HEIGHT = 10


def _selected(app: Host) -> list[TokenGauge.CallSelected]:
    """The calls the gauge said were selected (all it posts)."""
    return [m for m in app.posted if isinstance(m, TokenGauge.CallSelected)]


def _result(
    window: int | None = 60_000, policy_window: int | None = None
) -> tuple[Session, ReplayResult]:
    session = growing_session(window=window)
    policy = compacting_policy()
    if policy_window is not None:
        policy = policy.model_copy(update={"context_window": policy_window})
    return session, replay(session, policy)


def _rows(gauge: TokenGauge) -> list[str]:
    return [gauge.render_line(y).text for y in range(gauge.size.height)]


def _threshold_row(gauge: TokenGauge) -> int:
    rows = _rows(gauge)
    label = short_tokens(gauge.series.threshold or 0)
    hits = [y for y, row in enumerate(rows) if row[:GUTTER].endswith("┤") and label in row[:GUTTER]]
    assert hits, "\n".join(rows)
    return hits[0]


def test_short_tokens_fit_five_cells() -> None:
    assert short_tokens(950) == "950"
    assert short_tokens(9_500) == "9.5k"
    assert short_tokens(168_000) == "168k"
    assert short_tokens(1_200_000) == "1.2M"
    assert all(
        len(short_tokens(n)) <= 5 for n in (0, 999, 9_999, 99_999, 999_999, 9_999_999, 99_999_999)
    )


async def test_right_moves_the_selection_and_posts_the_message_index() -> None:
    session, result = _result()
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        gauge.focus()
        await pilot.pause()
        assert gauge.selected_call == 0
        await pilot.press("right", "right")
        await pilot.pause()
        assert gauge.selected_call == 2
        assert [m.call_index for m in _selected(app)] == [1, 2]
        assert [m.message_index for m in _selected(app)] == [
            result.points[1].message_index,
            result.points[2].message_index,
        ]
        await pilot.press("end")
        await pilot.pause()
        last = len(result.points) - 1
        assert gauge.selected_call == last
        assert _selected(app)[-1].message_index == result.points[last].message_index
        await pilot.press("home", "left")  # left at the first call stays there: no echo
        await pilot.pause()
        assert gauge.selected_call == 0
        assert _selected(app)[-1].call_index == 0
        assert len(app.posted) == 4


async def test_select_call_from_outside_does_not_post() -> None:
    session, result = _result()
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        gauge.select_call(5)
        await pilot.pause()
        assert gauge.selected_call == 5
        assert gauge.selected_message == result.points[5].message_index
        assert app.posted == []
        assert _rows(gauge)[0].startswith(" call 5 ·")  # numbered from 0, as call_index


async def test_window_size_moves_the_threshold_row() -> None:
    session, small = _result(policy_window=60_000)
    _, large = _result(policy_window=400_000)
    assert small.threshold is not None and large.threshold is not None
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, small)
        await pilot.pause()
        small_row = _threshold_row(gauge)
        small_label = _rows(gauge)[small_row][:GUTTER]
        gauge.update_result(session, large)
        await pilot.pause()
        large_row = _threshold_row(gauge)
        large_label = _rows(gauge)[large_row][:GUTTER]
    # Against 400k the threshold sits near the top of the chart; against 60k (which the
    # session outgrows) it sits low.
    assert large_row < small_row
    assert short_tokens(small.threshold) in small_label
    assert short_tokens(large.threshold) in large_label


async def test_the_threshold_is_drawn_per_call_and_inferred_stretches_are_marked() -> None:
    # the threshold can change between stretches (a window change, a stretch where
    # the recording shows another threshold); the gauge draws each call's, inferred ones ┄
    session, result = _result(policy_window=60_000)
    assert result.threshold is not None
    half = len(result.points) // 2
    lower = result.threshold - 12_000
    points = [
        p.model_copy(update={"threshold": lower, "threshold_source": "inferred"})
        if p.call_index >= half
        else p
        for p in result.points
    ]
    changed = result.model_copy(update={"points": points})
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(130, 14)) as pilot:
        gauge.update_result(session, changed)
        await pilot.pause()
        rows = _rows(gauge)
        layout = gauge.layout_for(gauge.size.width)
        grid = layout.grid  # the first bucket's cells, then those of an inferred one
        early = slice(GUTTER, GUTTER + grid.width_of(0))
        inferred = grid.bucket_of(half + 1)
        start = GUTTER + grid.x_of(inferred)
        late = slice(start, start + grid.width_of(inferred))
        early_rows = {y for y, row in enumerate(rows) if "┈" in row[early]}
        late_rows = {y for y, row in enumerate(rows) if "┄" in row[late]}
        assert early_rows and late_rows and early_rows != late_rows
        assert max(late_rows) > max(early_rows)  # the lower threshold sits lower
        assert "┄ inf" in rows[1]  # the legend names the inferred threshold
        gauge.select_call(len(points) - 1)
        await pilot.pause()
        assert f"thr {short_tokens(lower)} (inferred)" in _rows(gauge)[0]


async def test_markers_sit_under_compaction_and_overflow_calls() -> None:
    session, result = _result()
    compact_calls = {e.call_index for e in result.events if e.kind == "compact"}
    assert compact_calls, "the fixture should compact under a 60k window"
    overflow_calls = {p.call_index for p in result.points if p.overflow_recorded}
    assert overflow_calls
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        await pilot.pause()
        markers = _rows(gauge)[-1]
        layout = gauge.layout_for(gauge.size.width)
        assert layout.grid.one_call_each
        for call in range(len(result.points)):
            start = GUTTER + layout.grid.x_of(call)
            cell = markers[start : start + layout.grid.width_of(call)]
            assert ("◆" in cell) == (call in compact_calls), (call, cell)
            assert ("△" in cell) == (call in overflow_calls), (call, cell)


async def test_click_selects_the_column() -> None:
    session, result = _result()
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        await pilot.pause()
        layout = gauge.layout_for(gauge.size.width)
        x = GUTTER + layout.grid.x_of(4)
        await pilot.click(TokenGauge, offset=(x, 4))
        await pilot.pause()
        assert gauge.selected_call == 4
        assert _selected(app)[-1].message_index == result.points[4].message_index


async def test_unknown_window_draws_without_threshold() -> None:
    session = growing_session(window=None)
    result = replay(session, get_preset("seed"))
    assert result.window is None
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        await pilot.pause()
        rows = _rows(gauge)
    assert "window unknown" in rows[0]
    assert not any("┈" in row for row in rows)
    assert any("█" in row for row in rows)


async def test_before_a_result_the_recorded_series_is_drawn() -> None:
    session = growing_session()
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, None)
        await pilot.pause()
        rows = _rows(gauge)
        assert gauge.series.calls == len(session.model_calls())
        assert not gauge.series.has_simulated
        assert "recorded" in rows[0] and "simulated" not in rows[0]


def test_bucketing_keeps_peaks_and_fits_the_width() -> None:
    n = 100_000
    recorded = [(i * 7919) % 150_000 for i in range(n)]
    simulated = [v // 2 for v in recorded]
    flags = [0] * n
    flags[54_321] = 4
    series = Series(
        list(range(n)),
        recorded,
        simulated,
        [Provenance.ESTIMATED] * n,
        flags,
        200_000,
        180_000,
        max(recorded),
    )
    layout = bucket_series(series, 94)
    grid = layout.grid
    assert grid.x_of(grid.buckets) == 94
    assert grid.first_call(grid.buckets) == n
    assert max(layout.recorded) == max(recorded)
    for b in (0, 7, layout.buckets - 1):
        chunk = simulated[grid.first_call(b) : grid.first_call(b + 1)]
        assert layout.simulated[b] == max(chunk)
        assert simulated[layout.representative[b]] == max(chunk)
    assert layout.flags[grid.bucket_of(54_321)] & 4


def test_series_from_a_session_marks_recorded_compactions() -> None:
    from core.model.session import CompactionEvent

    session = growing_session()
    session.compactions.append(CompactionEvent(message_index=9, trigger="auto"))
    series = build_series(session, None)
    first_call_after = next(i for i, m in enumerate(series.message_index) if m >= 9)
    assert series.flags[first_call_after] & 8


async def test_a_five_row_gauge_keeps_label_chart_and_markers() -> None:
    session, result = _result()
    gauge = TokenGauge()
    gauge.styles.height = 5
    app = Host(gauge)
    async with app.run_test(size=(80, 24)) as pilot:
        gauge.update_result(session, result)
        gauge.select_call(len(result.points) - 1)
        await pilot.pause()
        rows = _rows(gauge)
    assert len(rows) == 5
    assert rows[0].startswith(f" call {len(result.points) - 1} ")  # numbered from 0
    assert all(len(row) == 80 for row in rows)
    assert any(ch in rows[1] + rows[2] + rows[3] for ch in "▁▂▃▄▅▆▇█")
    assert "◆" in rows[4]


async def test_a_theme_change_repaints_with_the_new_colours() -> None:
    session, result = _result()
    gauge = TokenGauge()
    gauge.styles.height = HEIGHT
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        app.theme = "textual-dark"
        gauge.update_result(session, result)
        await pilot.pause()
        dark = gauge.render_line(5)
        app.theme = "textual-light"
        await pilot.pause()
        light = gauge.render_line(5)
    assert dark.text == light.text
    dark_colours = {seg.style.color for seg in dark if seg.style and seg.text.strip("│┤ ")}
    light_colours = {seg.style.color for seg in light if seg.style and seg.text.strip("│┤ ")}
    assert dark_colours != light_colours


async def test_a_removed_gauge_leaves_the_theme_signal() -> None:
    """The gauge follows theme changes; once removed, the app's signal no longer holds it (Textual
    drops a removed node only at the next theme change: until then the gauge, its series and
    the session they were drawn from would stay alive)."""
    session, result = _result()
    gauge = TokenGauge()
    app = Host(gauge)
    async with app.run_test(size=(100, 14)) as pilot:
        gauge.update_result(session, result)
        await pilot.pause()
        assert gauge in app.theme_changed_signal._subscriptions
        await gauge.remove()
        await pilot.pause()
        assert gauge not in app.theme_changed_signal._subscriptions
