"""The worker that reads a session works out what showing it needs from every message (the
message list's table, the gauge's recorded series), so that the interface thread does not walk
the messages when the session arrives: the frame of the whole file, and the replay that starts
with it, do not wait for those walks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import core.replay.recorded as recorded_module
import tui.screen_state as screen_state_module
import tui.widgets.gauge_series as gauge_series_module
from core.formats import load_session
from core.model.session import Session, replace
from core.policy import get_preset
from core.replay import Replayer
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import HeldLoad, HeldReplay, settle, until
from tui.app import CtxscopeApp
from tui.screen_state import SessionState, read_messages
from tui.screens.session import SessionScreen
from tui.screens.session.loading import SessionLoader
from tui.screens.session.prepared import prepare
from tui.screens.session.view import SessionView
from tui.widgets.gauge_series import build_series


def _walks_on(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads the messages' walks run on (the table's, the recorded series')."""
    threads: list[str] = []
    real_flags = screen_state_module._message_flags
    real_columns = gauge_series_module._recorded_columns

    def flags(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real_flags(*args)

    def columns(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real_columns(*args)

    monkeypatch.setattr(screen_state_module, "_message_flags", flags)
    monkeypatch.setattr(gauge_series_module, "_recorded_columns", columns)
    return threads


async def _whole_shown(
    pilot: Pilot[None],
    app: CtxscopeApp,
    load: HeldLoad,
    replay: HeldReplay,
    meanwhile: Callable[[SessionScreen], None] = lambda _screen: None,
) -> SessionScreen:
    """The session screen once the big file's first part and its gauge are shown, then (after
    ``meanwhile``) the whole file, its replay started (and held)."""
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await until(pilot, lambda: screen.state is not None, "the first part shown")
    await until(pilot, lambda: screen.gauge.series.calls > 0, "the first part's gauge")
    meanwhile(screen)
    load.release.set()
    await until(pilot, replay.started.is_set, "the whole file shown, its replay started")
    assert not screen.partial
    return screen


async def test_the_interface_thread_does_not_walk_the_messages_of_a_file_it_opens(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _walks_on(monkeypatch)
    load = HeldLoad(monkeypatch)
    replay = HeldReplay(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _whole_shown(pilot, app, load, replay)
        walked = list(threads)  # (the checks below walk them here)
        state = screen.state
        assert state is not None
        # what the list and the gauge show is what the interface thread would have worked out
        fresh = SessionState(state.session, state.policy)
        assert list(fresh.rows) == list(state.rows)
        assert [fresh.flags(i) for i in range(state.message_count)] == [
            state.flags(i) for i in range(state.message_count)
        ]
        assert screen.gauge.series == build_series(state.session, None)
        replay.release.set()
        await until(pilot, lambda: state.result is not None, "the result")
    assert walked and threading.main_thread().name not in walked


async def test_a_window_set_while_the_rest_is_read_is_the_one_the_gauge_draws(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded series worked out with the file is drawn against the window it was read
    with: set another meanwhile (``w``), the gauge's series is worked out again with it."""

    def set_window(screen: SessionScreen) -> None:
        state = screen.state
        assert state is not None and state.session.context_window not in (None, 1_000)
        state.session.context_window = 1_000  # (as the window prompt sets it)
        state.session.window_source = "user"

    load = HeldLoad(monkeypatch)
    replay = HeldReplay(monkeypatch)
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _whole_shown(pilot, app, load, replay, set_window)
        state = screen.state
        assert state is not None and state.session.context_window == 1_000
        series = screen.gauge.series
        assert series.window == 1_000
        assert series == build_series(state.session, None)
        replay.release.set()
        await until(pilot, lambda: state.result is not None, "the result")


def test_a_state_takes_the_table_read_with_its_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    session = claude_like_session(6, with_compaction=True)
    table = read_messages(session)
    fresh = SessionState(session, get_preset("seed"))

    def no_walk(*_args: Any) -> Any:
        raise AssertionError("the messages were walked again")

    monkeypatch.setattr(screen_state_module, "_message_flags", no_walk)
    state = SessionState(session, get_preset("seed"), table=table)
    assert list(state.rows) == list(fresh.rows)
    assert state.recorded_calls == fresh.recorded_calls
    other = claude_like_session(6)
    with pytest.raises(AssertionError, match="walked again"):
        SessionState(other, get_preset("seed"), table=table)  # another list's: read again


def test_a_prepared_series_is_used_only_against_the_window_it_was_drawn_with() -> None:
    session = claude_like_session(6, with_compaction=True)
    prepared = prepare(session)
    assert prepared.recorded_for(session) == build_series(session, None)
    session.context_window = 1_000
    assert prepared.recorded_for(session) is None
    assert prepare(session, recorded=False).recorded_for(session) is None


class _Recorded(threading.Event):
    """An event that records what ``probe`` says when it is set."""

    def __init__(self, probe: Callable[[], object]) -> None:
        super().__init__()
        self.probe = probe
        self.seen: list[object] = []

    def set(self) -> None:
        self.seen.append(self.probe())
        super().set()


async def test_the_rest_of_a_big_file_is_read_once_the_first_parts_frame_is_out(
    big_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first part's frame does not share the interpreter with the rest of the read: the
    read waits until the frame that shows the first part's rows is out."""
    frames: list[bool] = []
    app = CtxscopeApp(str(big_file), discover=lambda: [], live=False)
    display = app._display

    def counted(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is not None and isinstance(screen, SessionScreen):
            frames.append(screen.message_list.painted)

    app._display = counted  # type: ignore[method-assign]
    events: list[_Recorded] = []
    real_init = SessionLoader.__init__

    def init(loader: SessionLoader, view: SessionView) -> None:
        real_init(loader, view)
        event = _Recorded(lambda: (view.message_list.painted, True in frames))
        loader._preview_painted = event
        events.append(event)

    monkeypatch.setattr(SessionLoader, "__init__", init)
    async with app.run_test(size=(120, 34)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await until(pilot, lambda: not screen.partial and screen.state is not None, "the whole")
    assert [event.seen for event in events] == [[(True, True)]]


async def test_work_waiting_for_the_lists_frame_runs_right_after_it_without_polling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What waits for the list's next frame (the rest of a big file, the inferred threshold)
    is called once that frame is out, not before, and no timer polls for it meanwhile."""
    session = claude_like_session(6)
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34)) as pilot:
        app.push_screen(SessionScreen(session=session, live=False))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)

        def no_timer(*_args: Any, **_kwargs: Any) -> Any:
            raise AssertionError("a timer polls for the frame")

        monkeypatch.setattr(screen, "set_timer", no_timer)
        called: list[bool] = []
        screen.after_list_painted(lambda: called.append(screen.message_list.painted))
        for _ in range(5):
            await pilot.pause()
        assert called == []  # (nothing asked the list for a frame)
        screen.message_list.refresh()
        await until(pilot, lambda: called, "the callback")
        assert called == [True]


_SAMPLES = Path(__file__).parents[2] / "sample_sessions"


def _sample_sessions() -> list[Session]:
    paths = [
        *sorted(_SAMPLES.glob("*/*.jsonl")),
        *sorted(_SAMPLES.glob("codex/*.jsonl.zst")),
        *sorted(_SAMPLES.glob("gemini-cli/*.json")),
    ]
    return [load_session(path) for path in paths]


def test_a_whole_file_s_calls_are_placed_for_its_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker that read the whole file places its calls as the replay does: the replay that
    follows finds them placed, and the recorded series is read from that placing."""
    session = claude_like_session(6, with_compaction=True)
    prepared = prepare(session, replayed=True)
    assert "placed" in session.derived
    assert prepared.recorded == build_series(session, None)

    def no_usage(*_args: Any) -> Any:
        raise AssertionError("the calls' usages were read again")

    monkeypatch.setattr(gauge_series_module, "usable_context", no_usage)
    monkeypatch.setattr(recorded_module, "Calls", no_usage)
    again = prepare(session, replayed=True)
    assert again.recorded == prepared.recorded
    Replayer(session).run(get_preset("seed"))  # (placed already: not again)


def test_the_recorded_series_from_the_placed_calls_is_the_one_from_the_usages() -> None:
    """The recorded series read from the replay's placing of the calls is the one read from
    each call's usage, for every sample session; with a model call out of the main conversation
    (not a call the replay places), it is read from the usages."""
    side = claude_like_session(6)
    side.messages[3] = replace(side.messages[3], sidechain=True)
    assert side.messages[3].is_model_call
    sessions = [*_sample_sessions(), claude_like_session(6, with_compaction=True), side]
    assert len(sessions) > 6
    for session in sessions:
        reference = build_series(session, None, calls=read_messages(session).calls)
        assert prepare(session, replayed=True).recorded == reference, session.path
