"""Opening sessions from files: every format, and every kind of bad input (never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.formats import load_session
from core.formats.ctxscope_jsonl import write_session
from tests.support.claude_jsonl import write_claude_session
from tests.support.paths import REPO
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import settle
from tui.app import CtxscopeApp, run_app
from tui.screens.picker import PickerScreen
from tui.screens.session import SessionScreen

SAMPLES = REPO / "sample_sessions"
SHARED_SAMPLES = REPO.parent / "shared" / "samples"


def _sample_files() -> list[Path]:
    """Each sample session: the files of each format folder, and opencode's storage folder."""
    if not SAMPLES.is_dir():
        return []
    found: list[Path] = []
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "live"):
        for entry in sorted(folder.iterdir()):
            if (entry.is_file() and entry.suffix in (".jsonl", ".json", ".db")) or (
                entry.is_dir() and entry.name == "storage"
            ):
                found.append(entry)
    return found


async def _open_path(app: CtxscopeApp, pilot, path: Path | str) -> SessionScreen | None:  # type: ignore[no-untyped-def]
    app.open_session(str(path))
    await settle(pilot)
    screen = app.screen
    return screen if isinstance(screen, SessionScreen) else None


async def _assert_opens(path: Path, *, size: tuple[int, int] = (120, 34)) -> SessionScreen:
    expected = load_session(path)
    app = CtxscopeApp(discover=lambda: [], live=False)
    async with app.run_test(size=size) as pilot:
        screen = await _open_path(app, pilot, path)
        assert screen is not None, f"{path} did not open: {app.picker and app.picker.error_text}"
        state = screen.state
        assert state is not None
        assert state.message_count == len(expected.messages)
        assert state.session.format == expected.format
        if expected.messages:
            assert state.result is not None, state.replay_error
            assert len(state.result.messages) == len(expected.messages)
            await pilot.press("end")
            assert screen.message_list.selected_message == len(expected.messages) - 1
            assert screen.detail.message_index == len(expected.messages) - 1
        return screen


async def test_opens_a_claude_code_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_claude_session(path, exchanges=5)
    screen = await _assert_opens(path)
    assert screen.load_seconds is not None


async def test_opens_a_ctxscope_file(tmp_path: Path) -> None:
    path = tmp_path / "session.ctxscope.jsonl"
    write_session(claude_like_session(4, big_lines=100), path)
    await _assert_opens(path)


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
async def test_opens_each_sample_session(path: Path) -> None:
    await _assert_opens(path)


def _shared(name: str) -> Path:
    path = SHARED_SAMPLES / name
    if not path.exists():
        pytest.skip(f"{path} is not available here")
    return path


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/tool_heavy.jsonl",
        "codex/turn-2.jsonl",
        "opencode/storage",
    ],
)
async def test_opens_real_public_samples(name: str) -> None:
    path = _shared(name)
    if path.is_dir():
        sessions = sorted((path / "session").rglob("*.json"))
        if not sessions:
            pytest.skip("no opencode session in the sample storage")
        path = sessions[0]
    await _assert_opens(path)


# -- bad input --------------------------------------------------------------------------------------


async def _picker_error_for(path: Path | str) -> str:
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen), "a bad path must land in the picker"
        picker = app.picker
        assert picker is not None
        return picker.error_text


async def test_missing_path_is_reported_in_the_picker(tmp_path: Path) -> None:
    error = await _picker_error_for(tmp_path / "nope.jsonl")
    assert "no such file" in error


async def test_a_text_file_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nnot json at all\n")
    error = await _picker_error_for(path)
    assert "not a session" in error


async def test_an_empty_file_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    error = await _picker_error_for(path)
    assert error and "empty" in error


async def test_binary_file_is_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "blob.jsonl"
    path.write_bytes(bytes(range(256)) * 64)
    error = await _picker_error_for(path)
    assert "not a session" in error


async def test_a_directory_that_is_not_a_session(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.txt").write_text("hello")
    error = await _picker_error_for(tmp_path / "x")
    assert error


async def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import io

    path = tmp_path / "locked.jsonl"
    write_claude_session(path, 1)
    real_open = builtins.open

    def refusing_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        # the OS refusing the file (permissions), whoever runs the test (root reads anything)
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    monkeypatch.setattr(io, "open", refusing_open)
    error = await _picker_error_for(path)
    assert "cannot read" in error or "Permission" in error


async def test_zero_message_session_opens_empty(tmp_path: Path) -> None:
    path = tmp_path / "zero.jsonl"
    # a Claude file with only bookkeeping lines: a session, but no message
    path.write_text(
        '{"type":"file-history-snapshot","messageId":"x","snapshot":{},"isSnapshotUpdate":false}\n'
        '{"type":"summary","summary":"a title","leafUuid":"y"}\n'
    )
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        if isinstance(screen, SessionScreen):
            assert screen.state is not None and screen.state.message_count == 0
            assert screen.message_list.selected_message is None
            await pilot.press("down", "end", "o", "c", "right_square_bracket", "slash", "escape")
            await settle(pilot)
        else:  # the loader may refuse a file without messages: then the picker says why
            assert app.picker is not None and app.picker.error_text


def test_run_app_rejects_an_unknown_policy(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run_app(path=None, policy_name="no-such-policy")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no-such-policy" in err and err[-1] == "\n" and err.count("\n") == 1


def test_run_app_rejects_a_bad_window(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run_app(path=None, window=0)
    assert exc.value.code == 2
    assert "--window" in capsys.readouterr().err


async def test_window_option_overrides_the_session(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    write_claude_session(path, exchanges=3)
    app = CtxscopeApp(str(path), window=50_000, discover=lambda: [], live=False)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.state is not None
        assert screen.state.window == 50_000
        assert screen.state.session.window_source == "user"
        assert screen.state.result is not None and screen.state.result.window == 50_000
