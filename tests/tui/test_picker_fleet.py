"""The picker's fleet columns: each session's peak, share of
the window, compactions, overflows and cost, filled in by a worker from the analysis cache and
by analysing; sorted by a key or a header; filtered by agent and to the sessions near overflow.

Sessions are built (tests/support/fleet_sessions.py) in the test's folder; HOME and the XDG folders are
the test's own, so neither the user's sessions nor their cache are read or written.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from textual.app import App
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.worker import get_current_worker

import core.fleet.survey
from core.fleet.session_rows import FleetRow
from core.fleet.survey import analyse
from core.formats.discovery import DiscoveredSession
from core.insights.diagnosis import MARGIN
from core.model.session import SourceFormat
from tests.support.fleet_sessions import write_built, write_fleet
from tests.support.tui_harness import settle, wait_for
from tui.app import CtxscopeApp
from tui.figures import row_compactions, row_cost, row_peak, row_share
from tui.screens.help import KEYS
from tui.screens.picker import PickerScreen

SIZE = (120, 30)
BROKEN_TIME = datetime(2026, 1, 5, 12, 0).timestamp()
"""The broken file's time (it records none of its own): older than every built session."""
AGENT_OF = {"cx": SourceFormat.CODEX, "broken": SourceFormat.PI}
"""Each session's agent (the others: Claude Code)."""


@pytest.fixture
def found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[DiscoveredSession]:
    """Four Claude Code sessions (peaks of 95%, 75%, 97.5% and 85% of the window), a Codex one
    (50%) and a file that is not a session, as discovery would list them."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))
    folder = home / "sessions"
    built = write_fleet(folder)
    built["cx"] = write_built(folder, "cx", [30_000, 100_000], days_ago=0.5, fmt=SourceFormat.CODEX)
    listed = [
        DiscoveredSession(
            path=str(folder / f"{name}.jsonl"),
            format=AGENT_OF.get(name, SourceFormat.CLAUDE_CODE),
            project="/home/dev/src/parcelhub",
            modified=BROKEN_TIME,
            size_bytes=(folder / f"{name}.jsonl").stat().st_size,
            title=f"session {name}",
            last_active=session.last_message_at.timestamp() if session else None,
        )
        for name, session in [*built.items(), ("broken", None)]
    ]
    return sorted(listed, key=lambda s: -s.when)


def _app(found: list[DiscoveredSession], jobs: int = 1) -> CtxscopeApp:
    return CtxscopeApp(discover=lambda: found, live=False, jobs=jobs)


def _picker(app: App[None]) -> PickerScreen:
    screen = app.screen
    assert isinstance(screen, PickerScreen)
    return screen


def _names(picker: PickerScreen) -> list[str]:
    """The sessions listed, in order, by name."""
    table = picker.query_one("#sessions", DataTable)
    return [
        Path(str(table.coordinate_to_cell_key(Coordinate(r, 0)).row_key.value)).stem
        for r in range(table.row_count)
    ]


def _cell(picker: PickerScreen, name: str, column: str) -> str:
    path = next(s.path for s in picker.sessions if Path(s.path).stem == name)
    return str(picker.query_one("#sessions", DataTable).get_cell(path, column))


def _footer_keys(app: App[None]) -> set[str]:
    return {
        binding.key
        for (_node, binding, enabled, _tip) in app.screen.active_bindings.values()
        if binding.show and enabled
    }


async def _opened(pilot: Pilot[None]) -> PickerScreen:
    """The picker once every session has its figures, the list focused (the keys work there)."""
    await settle(pilot)
    picker = _picker(pilot.app)
    await pilot.press("down")
    return picker


async def test_the_fleet_columns_fill_in_as_the_fleet_words_them(
    found: list[DiscoveredSession],
) -> None:
    app = _app(found, jobs=2)  # in processes, as for real
    async with app.run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        assert len(picker.rows) == len(found) and picker.analysed == len(found)
        for session in found:
            row = analyse(session.path).row  # what `ctxscope fleet` shows of it
            if row.error is not None:
                continue
            assert _cell(picker, Path(session.path).stem, "peak") == row_peak(row)
            assert _cell(picker, Path(session.path).stem, "share") == row_share(row.peak_share)
            assert _cell(picker, Path(session.path).stem, "compactions") == row_compactions(row)
            assert _cell(picker, Path(session.path).stem, "cost") == row_cost(row)
        assert _cell(picker, "near", "peak") == "190k"
        assert _cell(picker, "near", "share") == "95%"
        assert _cell(picker, "compacted", "compactions") == "1 auto, 1 manual"
        assert _cell(picker, "compacted", "cost") == "$1.11"
        header = [str(c.label) for c in picker.query_one("#sessions", DataTable).columns.values()]
        assert header[4:] == ["peak", "%", "compactions", "overflow", "cost"]  # the fleet's


async def test_a_session_that_cannot_be_read_is_a_row_with_its_reason(
    found: list[DiscoveredSession],
) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        assert picker.rows[next(s.path for s in found if "broken" in s.path)].error
        assert _cell(picker, "broken", "title").startswith("✗ not a session")
        assert _cell(picker, "broken", "peak") == "✗"
        assert _cell(picker, "near", "share") == "95%"  # the others are not held up
        assert "1 unreadable" in str(picker.query_one("#picker-count").render())


async def test_s_steps_through_the_sort_and_S_reverses_it(
    found: list[DiscoveredSession],
) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        assert _names(picker) == ["cx", "calm", "near", "compacted", "old", "broken"]  # newest
        await pilot.press("s")  # % of the window, fullest first
        assert _names(picker) == ["old", "near", "compacted", "calm", "cx", "broken"]
        table = picker.query_one("#sessions", DataTable)
        share = next(c for c in table.columns.values() if c.key == "share")
        assert str(share.label) == "% ↓"
        assert "sorted by % ↓" in str(picker.query_one("#picker-count").render())
        await pilot.press("S")  # emptiest first; the row without figures stays last
        assert _names(picker) == ["cx", "calm", "compacted", "near", "old", "broken"]
        await pilot.press("s")  # peak tokens
        assert _names(picker)[:2] == ["old", "near"]
        await pilot.press("s", "s")  # compactions, then overflows
        assert picker.view.sort == "overflow"
        await pilot.press("s")  # cost: the biggest bill first
        costs = [picker.rows[s.path].cost_usd or 0.0 for s in picker.shown[:-1]]
        assert costs == sorted(costs, reverse=True)
        await pilot.press("s")  # and round to the last message
        assert _names(picker)[0] == "cx"


async def test_a_click_on_a_header_sorts_by_it_and_again_reverses(
    found: list[DiscoveredSession],
) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        table = picker.query_one("#sessions", DataTable)
        columns = list(table.columns.values())
        x = sum(c.get_render_width(table) for c in columns[: table.get_column_index("share")])
        await pilot.click("#sessions", offset=(x + 1, 0))
        await pilot.pause()
        assert (picker.view.sort, picker.view.descending) == ("share", True)
        assert _names(picker)[0] == "old"
        await pilot.click("#sessions", offset=(x + 1, 0))
        await pilot.pause()
        assert picker.view.descending is False and _names(picker)[0] == "cx"


async def test_a_steps_through_the_agents(found: list[DiscoveredSession]) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        seen = []
        for _ in range(8):
            await pilot.press("a")
            seen.append((picker.view.agent, sorted(_names(picker))))
        assert seen == [
            ("claude-code", ["calm", "compacted", "near", "old"]),
            ("codex", ["cx"]),
            ("opencode", []),
            ("pi", ["broken"]),
            ("gemini-cli", []),
            ("qwen-code", []),
            ("copilot-cli", []),
            (None, sorted(["cx", "calm", "near", "compacted", "old", "broken"])),
        ]
        await pilot.press("a", "a")
        assert "codex only" in str(picker.query_one("#picker-count").render())


async def test_n_shows_the_sessions_near_overflow(found: list[DiscoveredSession]) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        picker = await _opened(pilot)
        await pilot.press("n")
        # within the diagnosis' 5% of the window: 97.5% and 95%; not 85%, nor the broken file
        assert sorted(_names(picker)) == ["near", "old"]
        assert "near overflow" in str(picker.query_one("#picker-count").render())
        await pilot.press("a", "a")  # and Codex's: none comes close
        assert _names(picker) == []
        await pilot.press("n")
        assert _names(picker) == ["cx"]


async def test_the_second_open_reads_the_cache(found: list[DiscoveredSession]) -> None:
    async with _app(found).run_test(size=SIZE) as pilot:
        first = await _opened(pilot)
        assert (first.analysed, first.from_cache) == (len(found), 0)
        cells = {s.path: _cell(first, Path(s.path).stem, "cost") for s in found}

    real = core.fleet.survey.analyse_row

    def never(path: str) -> FleetRow:
        if "broken" not in path:  # an error row is never cached: the broken one is read again
            raise AssertionError(f"analysed again: {path}")
        return real(path)

    cached = len(found) - 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core.fleet.survey, "analyse_row", never)
        async with _app(found).run_test(size=SIZE) as pilot:
            second = await _opened(pilot)
            assert (second.analysed, second.from_cache) == (1, cached)
            assert {s.path: _cell(second, Path(s.path).stem, "cost") for s in found} == cells
            assert f"{cached} from the cache" in str(second.query_one("#picker-count").render())


async def test_x_stops_the_analysis_and_ctrl_r_starts_it_again(
    found: list[DiscoveredSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = core.fleet.survey.analyse_row
    reached = threading.Event()
    let_go = threading.Event()

    def held(path: str) -> FleetRow:
        """Analyses ``calm`` only once let go (the test stops the run meanwhile)."""
        if path.endswith("calm.jsonl") and not let_go.is_set():
            reached.set()
            deadline = time.monotonic() + 5
            while not let_go.is_set() and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(path)

    monkeypatch.setattr(core.fleet.survey, "analyse_row", held)
    app = _app(found)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reached, "the analysis reached calm.jsonl")
        picker = _picker(app)
        picker.query_one("#sessions", DataTable).focus()
        await pilot.pause()
        assert picker.analysing and "x" in _footer_keys(app)
        await pilot.press("x")
        let_go.set()
        await settle(pilot)
        assert not picker.analysing and "x" not in _footer_keys(app)
        assert len(picker.rows) < len(found)  # the rest was never started
        assert "not analysed (ctrl+r)" in str(picker.query_one("#picker-count").render())
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert len(picker.rows) == len(found)


async def test_a_session_on_top_pauses_the_analysis(
    found: list[DiscoveredSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = core.fleet.survey.analyse_row
    reached = threading.Event()

    def held(path: str) -> FleetRow:
        """Analyses ``calm`` only once the worker is cancelled."""
        if path.endswith("calm.jsonl") and not reached.is_set():
            reached.set()
            worker = get_current_worker()  # the picker's, in whose thread this runs
            deadline = time.monotonic() + 5
            while not worker.is_cancelled and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(path)

    monkeypatch.setattr(core.fleet.survey, "analyse_row", held)
    async with _app(found).run_test(size=SIZE) as pilot:
        await wait_for(pilot, reached, "the analysis reached calm.jsonl")
        picker = _picker(pilot.app)
        picker.post_message(PickerScreen.OpenSession(found[0].path))
        await settle(pilot)
        assert pilot.app.screen is not picker and not picker.analysing
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.screen is picker and len(picker.rows) == len(found)  # went on


def test_the_help_says_the_diagnosis_margin() -> None:
    picker_keys = dict(next(rows for title, rows in KEYS if title == "Picker"))
    assert f"({MARGIN:.0%})" in picker_keys["n"]


async def test_rows_arriving_take_their_place_in_the_sort(
    found: list[DiscoveredSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = core.fleet.survey.analyse_row
    reached = threading.Event()
    let_go = threading.Event()

    def held(path: str) -> FleetRow:
        if path.endswith("calm.jsonl"):
            reached.set()
            deadline = time.monotonic() + 5
            while not let_go.is_set() and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(path)

    monkeypatch.setattr(core.fleet.survey, "analyse_row", held)
    app = _app(found)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reached, "the analysis reached calm.jsonl")
        picker = _picker(app)
        picker.query_one("#sessions", DataTable).focus()
        await pilot.press("s")  # by %, while calm (75%) has no figures yet: after those that do
        assert _names(picker).index("calm") >= len(picker.rows)
        let_go.set()
        await settle(pilot)
        assert _names(picker) == ["old", "near", "compacted", "calm", "cx", "broken"]
