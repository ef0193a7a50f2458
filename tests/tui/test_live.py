"""Live tail: the offset bookkeeping of LiveFile, and the app following a file as it is written."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path

import pytest

from core.formats import load_session
from tests.support.claude_jsonl import claude_exchange, write_claude_session
from tests.support.paths import REPO
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp
from tui.growing_file import LiveFile
from tui.screens.session import SessionScreen

LIVE_SAMPLE = REPO / "sample_sessions" / "live" / "growing.jsonl"
WAIT_S = 15.0
"""Upper bound for a change to show up (a liveness guard, not a timing assertion)."""


# -- LiveFile ----------------------------------------------------------------------------------------


def test_livefile_reports_only_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    live = LiveFile(path)
    assert live.offset == len(b'{"a":1}\n{"b":2}\n')
    assert live.check() is None
    with open(path, "ab") as f:
        f.write(b"3")  # still no newline: nothing to read
    assert live.check() is None
    with open(path, "ab") as f:
        f.write(b'}\n{"d":4}\n{"e"')
    change = live.check()
    assert change is not None and change.kind == "grew" and change.new_lines == 2
    assert live.offset == path.stat().st_size - len(b'{"e"')
    assert live.check() is None


def test_livefile_truncated_rotated_deleted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"1\n2\n3\n")
    live = LiveFile(path)
    path.write_bytes(b"1\n")  # same inode, shorter
    change = live.check()
    assert change is not None and change.kind == "truncated"
    assert live.offset == 2

    other = tmp_path / "new.jsonl"
    other.write_bytes(b"x\ny\n")
    os.replace(other, path)  # another file now has the name
    change = live.check()
    assert change is not None and change.kind == "rotated"
    assert live.offset == 4

    path.unlink()
    change = live.check()
    assert change is not None and change.kind == "deleted"
    assert live.check() is None


# -- the app -------------------------------------------------------------------------------------------


async def _wait_for(pilot, predicate, what: str) -> None:  # type: ignore[no-untyped-def]
    waited = 0.0
    while not predicate():
        if waited > WAIT_S:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)
        waited += 0.1
    await settle(pilot)


async def _open_live(pilot, path: Path) -> SessionScreen:  # type: ignore[no-untyped-def]
    app = pilot.app
    app.open_session(str(path))
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    assert screen.state is not None
    return screen


def _ids(screen: SessionScreen) -> list[str]:
    assert screen.state is not None
    return [m.id for m in screen.state.session.messages]


async def test_appended_lines_appear_once_and_a_partial_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    last = write_claude_session(path, exchanges=2)
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open_live(pilot, path)
        state = screen.state
        assert state is not None
        before = state.message_count
        assert before == len(load_session(path).messages)
        await pilot.press("end")  # at the end: the list follows new messages
        assert screen.message_list.at_end

        # one more exchange, complete lines
        lines, last = claude_exchange(100, last, 9_000)
        with open(path, "ab") as f:
            f.writelines(lines)
        expected = len(load_session(path).messages)
        assert expected > before
        await _wait_for(pilot, lambda: state.message_count == expected, "the appended exchange")
        assert state.message_count == expected
        assert screen.message_list.selected_message == expected - 1  # followed the end
        assert len(set(_ids(screen))) == len(_ids(screen))

        # a line written in two halves: nothing new until its newline arrives, then exactly once
        lines, last = claude_exchange(200, last, 9_500)
        first_line = lines[0]
        half = len(first_line) // 2
        with open(path, "ab") as f:
            f.write(first_line[:half])
        # an absence check (the half line must NOT appear): there is no condition to wait for,
        # so a short bounded wait (longer than the watcher's debounce) gives it the chance to
        # go wrong
        await pilot.pause(1.0)
        await settle(pilot)
        assert state.message_count == expected
        with open(path, "ab") as f:
            f.write(first_line[half:])
        expected_after = len(load_session(path).messages)
        assert expected_after == expected + 1
        await _wait_for(pilot, lambda: state.message_count == expected_after, "the completed line")
        # an absence check (the completed line must not be taken twice): a short bounded wait
        await pilot.pause(0.5)
        await settle(pilot)
        ids = _ids(screen)
        assert state.message_count == expected_after
        assert len(set(ids)) == len(ids)
        assert sum(1 for m in state.session.messages if "question number 200" in m.text) == 1
        # the replay caught up with the new messages
        assert state.result is not None and len(state.result.messages) == expected_after


async def test_not_following_when_the_user_is_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    last = write_claude_session(path, exchanges=3)
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open_live(pilot, path)
        state = screen.state
        assert state is not None
        await pilot.press("down")
        assert screen.message_list.selected_message == 1
        lines, last = claude_exchange(100, last, 9_000)
        with open(path, "ab") as f:
            f.writelines(lines)
        expected = len(load_session(path).messages)
        await _wait_for(pilot, lambda: state.message_count == expected, "the appended exchange")
        assert screen.message_list.selected_message == 1  # stayed where the user was
        assert screen.message_list.row_count >= expected


async def test_deleted_file_stops_the_tail_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    write_claude_session(path, exchanges=2)
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34), notifications=True) as pilot:
        screen = await _open_live(pilot, path)
        state = screen.state
        assert state is not None
        count = state.message_count
        path.unlink()
        await _wait_for(pilot, lambda: screen.live_status is not None, "the deletion notice")
        assert screen.live_status == "live tail stopped"
        assert any("deleted" in n.message for n in app._notifications)
        assert state.message_count == count  # what was loaded stays on screen
        await pilot.press("down", "end")
        assert screen.message_list.selected_message == count - 1


async def test_truncated_file_is_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    write_claude_session(path, exchanges=4)
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34), notifications=True) as pilot:
        screen = await _open_live(pilot, path)
        state = screen.state
        assert state is not None
        write_claude_session(path, exchanges=1)  # same file, rewritten shorter
        expected = len(load_session(path).messages)
        await _wait_for(pilot, lambda: state.message_count == expected, "the reload")
        assert any("truncated" in n.message for n in app._notifications)
        assert screen.message_list.selected_message is not None
        assert screen.message_list.selected_message < expected


@pytest.mark.skipif(not LIVE_SAMPLE.exists(), reason="sample_sessions/live is not generated")
async def test_the_live_sample_grows_to_what_the_loader_reads(tmp_path: Path) -> None:
    sys.path.insert(0, str(LIVE_SAMPLE.parents[1]))
    import generate  # sample_sessions/generate.py

    lines = generate.live_lines()
    head = generate.live_head_count()
    path = tmp_path / "growing.jsonl"
    path.write_bytes(LIVE_SAMPLE.read_bytes())
    app = CtxscopeApp(discover=lambda: [])
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await _open_live(pilot, path)
        state = screen.state
        assert state is not None
        for line in lines[head : head + 12]:
            with open(path, "ab") as f:
                f.write(line.encode() + b"\n")
        expected = load_session(path)
        await _wait_for(
            pilot, lambda: state.message_count == len(expected.messages), "the grown sample"
        )
        assert [m.id for m in state.session.messages] == [m.id for m in expected.messages]


def test_livefile_replaced_by_a_fifo_is_gone_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"1\n2\n")
    live = LiveFile(path)
    path.unlink()
    os.mkfifo(path)  # nothing ever writes to it: opening it for reading would block for good
    release = threading.Timer(WAIT_S, _let_readers_go, (path,))  # the old code blocked here
    release.start()
    try:
        change = live.check()
        assert change is not None and change.kind == "deleted"
        assert live.check() is None
        assert LiveFile(path).identity is None  # a FIFO from the start is not followed either
    finally:
        release.cancel()


def _let_readers_go(fifo: Path) -> None:
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def test_a_tailed_file_replaced_by_a_fifo_stops_the_tail_and_q_quits(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.jsonl"
    write_claude_session(path, exchanges=2)
    app = CtxscopeApp(discover=lambda: [])
    release = threading.Timer(WAIT_S, _let_readers_go, (path,))
    try:
        async with app.run_test(size=(120, 34), notifications=True) as pilot:
            screen = await _open_live(pilot, path)
            path.unlink()
            os.mkfifo(path)
            release.start()
            await _wait_for(pilot, lambda: screen.live_status is not None, "the tail stopped")
            assert screen.live_status == "live tail stopped"
            await pilot.press("q")
            await pilot.pause()
        assert not app.is_running
    finally:
        release.cancel()
        _let_readers_go(path)
