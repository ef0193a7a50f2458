"""The drawing caches of the message list, the gauge and the detail pane.

Each widget keeps what it drew (list rows, the gauge's chart without its cursor, the detail pane's
lines rendered a part at a time); these tests change what a drawing depends on and check that the
widget then draws exactly what a fresh drawing would: a stale cache is the typical bug.
"""

from __future__ import annotations

import gc
import io
import random
import string
from collections.abc import Sequence
from itertools import pairwise

import pytest
from rich.cells import set_cell_size
from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip

from core.model.tokens import message_text
from core.policy import get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, screen_text, settle, until
from tui.app import CtxscopeApp
from tui.screen_state import SessionState
from tui.widgets import detail as detail_module
from tui.widgets.detail import DetailPane
from tui.widgets.gauge import GUTTER, TokenGauge
from tui.widgets.gauge_series import build_series
from tui.widgets.message_list import MessageList, fit_cells, fit_strip
from tui.widgets.token_grid import TokenGrid

SIZE = (120, 34)


def _app() -> CtxscopeApp:
    return quiet_app()


_open = open_session


def _segments(strip: Strip) -> list[Segment]:
    return list(strip)


# -- the message list ---------------------------------------------------------------------------


def _list_rows(listing: MessageList) -> list[list[Segment]]:
    return [
        _segments(listing.render_line(y)) for y in range(listing.scrollable_content_region.height)
    ]


def _fresh_list_rows(listing: MessageList) -> list[list[Segment]]:
    """The visible rows drawn from scratch (no cache involved)."""
    state = listing.state
    assert state is not None
    width = listing.scrollable_content_region.width
    top = int(listing.scroll_y)
    rows = []
    for y in range(listing.scrollable_content_region.height):
        row = top + y
        if row >= len(state.rows):
            rows.append(_segments(listing.render_line(y)))
            continue
        strip = listing._render_row(state, row, width, row == listing.cursor_row)
        rows.append(_segments(strip.apply_offsets(0, row)))
    return rows


async def test_list_rows_are_redrawn_when_what_they_show_changes() -> None:
    session = claude_like_session(8, window=120_000, big_lines=200)
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        state = screen.state
        assert state is not None
        listing = screen.message_list
        drawn = _list_rows(listing)
        assert drawn == _fresh_list_rows(listing)

        def changed_and_fresh() -> None:
            nonlocal drawn
            now = _list_rows(listing)
            assert now != drawn  # the change is visible...
            assert now == _fresh_list_rows(listing)  # ...and nothing stale is left
            drawn = now

        await pilot.press("down")  # the cursor moves: both rows change looks
        changed_and_fresh()

        state.set_matches("module", [1, 2, 4])  # a search marks rows
        listing.restyle()
        changed_and_fresh()

        screen.set_policy(get_preset("opencode"))  # a new replay: tokens and flags change
        await settle(pilot)
        changed_and_fresh()
        assert len(state.compaction_events()) >= 2

        for _ in range(2):  # a compaction's head and tail in the gutter, the split rule
            await pilot.press("right_square_bracket")
            await settle(pilot)
            changed_and_fresh()

        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        changed_and_fresh()


async def test_list_rows_kept_across_limit_changes_are_the_rows_drawn_fresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A new result of the same session keeps the rows whose message, flags and tokens are the
    same (no row drawn again for a change that moves nothing), and only those."""
    session = claude_like_session(8, window=120_000, big_lines=200)
    async with _app().run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        listing = screen.message_list
        drawn: list[int] = []
        render_row = listing._render_row

        def counted(state: SessionState, row: int, width: int, is_cursor: bool) -> Strip:
            drawn.append(row)
            return render_row(state, row, width, is_cursor)

        monkeypatch.setattr(listing, "_render_row", counted)
        assert _list_rows(listing) == _fresh_list_rows(listing)
        rng = random.Random(3)
        seen_redrawn = False
        for step in range(8):
            policy = screen.state.policy.model_copy(deep=True) if screen.state else None
            assert policy is not None
            if step == 0:  # a change that moves no row: every row is kept
                policy.truncation.max_lines += 1
            else:
                policy.truncation.max_lines = rng.choice([3, 10, 40, 2000])
                policy.compaction.reserve_tokens = rng.choice([5_000, 20_000, 60_000])
                policy.pruning.protect_turns = rng.choice([0, 1, 2, 4])
            before = _list_rows(listing)
            drawn.clear()
            screen.set_policy(policy)
            await settle(pilot)
            assert screen.state is not None and screen.state.result is not None
            assert screen.state.result.policy == policy
            now = _list_rows(listing)
            redrawn = list(drawn)  # (before the fresh rows below, drawn with the same call)
            assert now == _fresh_list_rows(listing)  # nothing stale kept
            if step == 0:
                assert now == before and not redrawn
            seen_redrawn |= now != before and bool(redrawn)
        assert seen_redrawn  # (the changes did move rows: the check above was put to use)


async def test_list_row_cache_keeps_few_rows_on_a_big_scroll() -> None:
    session = claude_like_session(40)
    app = _app()
    async with app.run_test(size=(100, 20)) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        listing = screen.message_list
        for _ in range(30):
            await pilot.press("pagedown")
        await pilot.press("end", "home")
        await pilot.pause()
        assert _list_rows(listing) == _fresh_list_rows(listing)
        assert len(listing._strip_cache) <= listing._strip_cache.maxsize


def test_fit_cells_is_set_cell_size() -> None:
    rng = random.Random(7)
    alphabet = [*"abc xyz→▸✂⚑×é中文", "\u0301", "\u200d", "\ufe0f", "\x1b", "👍", "\t"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        total = rng.randint(1, 30)
        try:
            expected: str | type[Exception] = set_cell_size(text, total)
        except Exception as exc:  # rich itself fails on a few nonsense joiner sequences
            expected = type(exc)
        try:
            got: str | type[Exception] = fit_cells(text, total)
        except Exception as exc:
            got = type(exc)
        assert got == expected, (text, total)
    preview = "bash ▸ " + " ".join("1→ value" for _ in range(60))
    for total in (0, 1, 10, 57, 200, 600):
        assert fit_cells(preview, total) == set_cell_size(preview, total)


def test_fit_strip_returns_a_strip_that_fits_as_it_is() -> None:
    strip = Strip([Segment("abcdef", Style(bold=True))], 6)
    assert fit_strip(strip, 6, None) is strip  # crop_extend would cache it in itself (a cycle)
    assert fit_strip(strip, 4, None).text == "abcd"
    assert fit_strip(strip, 8, Style()).text == "abcdef  "


def test_per_message_tables_cost_the_garbage_collector_nothing_per_item() -> None:
    session = claude_like_session(6, with_compaction=True)
    state = SessionState(session, get_preset("seed"))
    series = build_series(session, None)
    tables: list[Sequence[int]] = [
        state.rows,
        state._flags,
        state._call_messages,
        state._identity,  # (the rows are slices of it)
        series.message_index,
        series.recorded,
        series.flags,
    ]
    for table in tables:
        assert len(table) > 1
        assert len(gc.get_referents(table)) <= 1  # a list would hand over every item
    assert state.rows[state.row_of_message(5)] == 5


# -- the gauge ----------------------------------------------------------------------------------


def _gauge_rows(gauge: TokenGauge) -> list[list[Segment]]:
    return [_segments(gauge.render_line(y)) for y in range(gauge.size.height)]


def _fresh_gauge_rows(gauge: TokenGauge) -> list[list[Segment]]:
    return [_segments(strip) for strip in gauge._build_rows(gauge.size.width, gauge.size.height)]


def _maximal_runs(rows: list[list[Segment]]) -> bool:
    """No two neighbouring segments share a style (what a from-scratch drawing produces)."""
    return all(a.style != b.style for row in rows for a, b in pairwise(row))


async def test_gauge_moves_its_cursor_without_a_stale_column() -> None:
    session = claude_like_session(8)
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        gauge = screen.gauge
        assert isinstance(gauge, TokenGauge)
        layout = gauge.layout_for(gauge.size.width)
        assert layout.buckets > 3
        refreshed: list[tuple[Region, ...]] = []
        refresh = gauge.refresh

        def spy(*regions: Region, **options: bool) -> TokenGauge:
            refreshed.append(regions)
            return refresh(*regions, **options)

        gauge.refresh = spy  # type: ignore[method-assign]
        seen = []
        previous = gauge.selected_call or 0
        grid = layout.grid
        for call in (1, 3, layout.buckets - 1, 0, 2):
            refreshed.clear()
            gauge.select_call(grid.first_call(call))
            # the label row and the old and new cursor columns are repainted (or everything)
            must = [(0, 0)]
            for bucket in (grid.bucket_of(previous), call):
                x = GUTTER + grid.x_of(bucket)
                must += [
                    (x + dx, y)
                    for dx in range(grid.width_of(bucket))
                    for y in range(gauge.size.height)
                ]
            assert any(not regions for regions in refreshed) or all(
                any(region.contains(x, y) for regions in refreshed for region in regions)
                for x, y in must
            )
            previous = grid.first_call(call)
            await pilot.pause()
            rows = _gauge_rows(gauge)
            assert rows == _fresh_gauge_rows(gauge)
            plan = gauge._base.plan
            assert plan is not None and plan.marker_row is not None
            assert _maximal_runs(rows[plan.first_row : plan.marker_row + 1])
            assert gauge.render_line(0).text.startswith(f" call {grid.first_call(call)} ")
            seen.append(rows)
            # on screen, only the selected column carries the cursor's marker
            lines = screen_text(app).splitlines()
            markers = lines[gauge.region.y + gauge.size.height - 1]
            x, end = GUTTER + grid.x_of(call), GUTTER + grid.x_of(call + 1)
            assert "▔" in markers[x:end]
            assert "▔" not in markers[:x] + markers[end:]
        assert len({repr(rows) for rows in seen}) == len(seen)


async def test_gauge_redraws_its_chart_for_a_new_result_focus_and_theme() -> None:
    session = claude_like_session(8)
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        gauge = screen.gauge
        assert isinstance(gauge, TokenGauge)
        before = _gauge_rows(gauge)
        screen.set_policy(get_preset("opencode"))  # another simulated series
        await settle(pilot)
        after = _gauge_rows(gauge)
        assert after != before and after == _fresh_gauge_rows(gauge)
        gauge.focus()
        await pilot.pause()
        assert _gauge_rows(gauge) == _fresh_gauge_rows(gauge)
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        themed = _gauge_rows(gauge)
        assert themed != after and themed == _fresh_gauge_rows(gauge)


# -- the detail pane ----------------------------------------------------------------------------


def test_token_grid_draws_what_rich_table_grid_draws() -> None:
    console = Console(width=200, color_system="truecolor", file=io.StringIO(), highlight=False)
    label, note, base = Style(color="red", bold=True), Style(italic=True), Style(bgcolor="black")
    rng = random.Random(11)
    letters = string.ascii_letters + string.digits + "   ,.-_/()…→"
    odd = [
        "[b]x[/b]",
        ":smile:",
        "a\tb",
        "中文",
        "x\ny",
        "::",
        "a:b:c",
        "  lead",
        "trail  ",
        "",
        " ",
    ]

    def cell(longest: int) -> str:
        if rng.random() < 0.08:
            return rng.choice(odd)
        return "".join(rng.choice(letters) for _ in range(rng.randint(0, longest)))

    drawn_here = 0
    for _ in range(4_000):
        grid = TokenGrid(label, note)
        for _ in range(rng.randint(1, 6)):
            grid.add_row(cell(16), cell(12), cell(rng.choice([8, 30, 90])))
        options = console.options.update(width=rng.randint(1, 130), height=None)
        ours = console.render_lines(Group(Text("Tokens"), grid), options, style=base)
        rich = console.render_lines(Group(Text("Tokens"), grid.table()), options, style=base)
        assert ours == rich, (options.max_width, grid.rows)
        drawn_here += grid._lines(options.max_width) is not None
    assert drawn_here > 1_000  # the fast path was taken, wrapping notes included

    typical = TokenGrid(label, note)
    typical.add_row("replay", "20,686 R", "recorded")
    typical.add_row("counted", "…", "tokenizer")
    typical.add_row("estimated", "141 ~", "chars/4")
    typical.add_row(
        "recorded call", "20,686 R", "context of this call: input 3, cache read 20,000, output 9"
    )
    assert typical._lines(47) is not None  # the pane's usual table is drawn here


def _with_rich_tables(renderable: RenderableType) -> RenderableType:
    """The renderable with every tokens grid replaced by the rich table it stands for."""
    if isinstance(renderable, TokenGrid):
        return renderable.table()
    if isinstance(renderable, Group):
        return Group(*(_with_rich_tables(child) for child in renderable.renderables))
    return renderable


def _reference_lines(detail: DetailPane) -> list[list[Segment]]:
    """Every section rendered whole, in one go, with rich's own table (the pane renders them a
    piece at a time, and draws the tokens table itself)."""
    width = detail._content_width()
    console = detail.app.console
    base = detail.rich_style
    bar_style = base + detail._style("detail-pane--bar")
    lines: list[list[Segment]] = []
    for k, section in enumerate(detail._sections):
        if k:
            lines.append(_segments(Strip.blank(width, base)))
        inner = max(1, width - 2) if section.bar else width
        options = console.options.update(width=inner, height=None)
        renderable = _with_rich_tables(section.renderable)
        for line in console.render_lines(renderable, options, style=base, pad=True):
            lines.append([Segment("▌ ", bar_style), *line] if section.bar else list(line))
    return lines


def _detail_lines(detail: DetailPane) -> list[list[Segment]]:
    return [_segments(line) for line in detail.all_rows()]


async def test_detail_renders_what_shows_first_and_the_rest_after_the_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The measuring steps are also bounded in time; on a busy machine a bound could cut a step
    # short of the rows this test counts. The rows reached are the rule checked here, so the
    # time bounds are taken out of play (no step stops before it reaches its rows).
    for budget in ("FIRST_MEASURE_S", "MEASURE_STEP_S", "ROW_MEASURE_S"):
        monkeypatch.setattr(detail_module, budget, 60.0)
    session = claude_like_session(3, big_lines=300)
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        detail = screen.detail
        big = max(
            range(len(session.messages)), key=lambda i: len(message_text(session.messages[i]))
        )
        detail.show(big)
        height = detail.scrollable_content_region.height
        assert detail._window is not None
        measured = detail._window.rows
        assert height <= measured < len(_reference_lines(detail))  # only what shows
        await until(pilot, lambda: detail.measured, "the rest rendered after the frame")
        assert _detail_lines(detail) == _reference_lines(detail)
        assert detail.virtual_size.height == detail.line_count

        # another message before the rest was rendered: the old completion must not land
        detail.show(1)
        detail.show(big)
        detail.show(0)
        await until(pilot, lambda: detail.measured, "message 0 rendered")
        assert detail.message_index == 0
        assert _detail_lines(detail) == _reference_lines(detail)

        # scrolled before the rest is rendered: the lines come on demand
        detail.show(big)
        await pilot.pause()
        await pilot.pause()
        detail.show(big, force=True)  # redrawn (as after a replay): the range is the full one
        assert not detail.measured
        detail.scroll_to(y=120, animate=False, immediate=True)
        reference = _reference_lines(detail)
        offset = int(detail.scroll_y)
        assert offset > height
        # the rows scrolled to are measured when the frame draws them
        await until(
            pilot,
            lambda: all(
                _segments(detail.render_line(y)) == reference[offset + y] for y in range(height)
            ),
            "the rows scrolled to drawn",
        )
        await until(pilot, lambda: detail.measured, "the rest rendered")
        assert _detail_lines(detail) == reference

        # more of the message (m), then the slow facts: each a complete redraw
        detail.scroll_to(y=0, animate=False, immediate=True)
        detail.action_more()
        await pilot.pause()
        await settle(pilot)
        assert _detail_lines(detail) == _reference_lines(detail)
        assert "counted" in detail.as_text()


async def test_detail_lines_follow_a_new_replay_and_theme() -> None:
    session = claude_like_session(3, big_lines=120)
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, session, get_preset("seed"))
        detail = screen.detail
        screen.select_message(2)
        await settle(pilot)
        before = _detail_lines(detail)
        assert before == _reference_lines(detail)
        screen.set_policy(get_preset("opencode"))
        await settle(pilot)
        assert _detail_lines(detail) == _reference_lines(detail)
        assert "opencode" in detail.as_text()
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        themed = _detail_lines(detail)
        assert themed != before and themed == _reference_lines(detail)
