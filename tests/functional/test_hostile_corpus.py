"""Every malformed input through every command and the TUI: no traceback, no hang.

The corpus is ``tests/fixtures/hostile/`` (our own small files, one per case; what each holds is
in its name and in ``tests/fixtures/hostile/README.md``), the loaders' own
``tests/fixtures/malformed/`` when it is there, and what cannot be committed, made per run: a
FIFO, a socket, a device, a loop of symbolic links, a broken link, a folder, a message of 2 MB.

``analyze``, ``replay``, ``convert`` (to a file, read back) and ``fidelity`` run on each, in
process, each in a thread with a budget of CPU time (:func:`tests.support.hang.within`): a hang,
spinning or blocked, is a failure, not a stuck suite, and a busy machine fails nothing. The exit
status is 0, 1 or 2 (with one line on stderr), never an exception. ``fidelity`` also runs once over
the whole folder, as a batch over many sessions does. The TUI opens each (Pilot), moves through
it, opens the overflow view, and quits with ``q``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from core.formats import load_session
from tests.support import hostile_cases
from tests.support.hang import within
from tests.support.paths import TESTS
from tools.scenes import settle
from tui.app import CtxscopeApp
from tui.cli.main import cli
from tui.screens.session import SessionScreen

FIXTURES = TESTS / "fixtures"
COMMITTED = sorted(
    path
    for folder in (FIXTURES / "hostile", FIXTURES / "malformed")
    if folder.is_dir()
    for path in folder.iterdir()
    if path.is_file() and path.name != "README.md"
)
MADE = ["fifo", "socket", "device", "symlink-loop", "broken-link", "folder", "huge-message"]
GENERATED = list(hostile_cases.CASES)
"""Made by ``tests/support/hostile_cases.py``: deep, huge, wrongly typed, hostile names."""
CASES = [path.name for path in COMMITTED] + MADE + GENERATED
COMMANDS = ["analyze", "replay", "convert", "fidelity", "breakdown", "compactions", "report"]
HANG_S = 30.0
"""CPU seconds a command may spend on one case (the slowest, ``fidelity`` on a million lines of
``{}``, spends about 4); a case that blocks is caught by :func:`tests.support.hang.within`."""
TUI_OPEN_S = 15.0
"""Longest the TUI may take to show a case or refuse it (they take well under a second)."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Every case by name: the committed files, and the ones made here."""
    folder = tmp_path_factory.mktemp("hostile")
    cases = {path.name: path for path in COMMITTED}
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "socket.jsonl"))
    (folder / "loop-b.jsonl").symlink_to(folder / "loop-a.jsonl")
    (folder / "loop-a.jsonl").symlink_to(folder / "loop-b.jsonl")
    (folder / "broken.jsonl").symlink_to(folder / "missing.jsonl")
    (folder / "folder").mkdir()
    huge = folder / "huge-message.jsonl"
    huge.write_bytes(
        orjson.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}})
        + b"\n"
        + orjson.dumps(
            {
                "type": "user",
                "uuid": "u2",
                "parentUuid": "u1",
                "message": {"role": "user", "content": "log line with words\n" * 100_000},
            }
        )
        + b"\n"
    )
    cases.update(
        {
            "fifo": fifo,
            "socket": folder / "socket.jsonl",
            "device": Path(os.devnull),
            "symlink-loop": folder / "loop-a.jsonl",
            "broken-link": folder / "broken.jsonl",
            "folder": folder / "folder",
            "huge-message": huge,
        }
    )
    generated_folder = folder / "generated"
    generated_folder.mkdir()
    generated = hostile_cases.build(generated_folder)
    cases.update(generated)
    try:
        yield cases
    finally:
        listener.close()
        _let_readers_go(fifo)
        hostile_cases.let_readers_go(generated)


def _let_readers_go(fifo: Path) -> None:
    """Should a reader be blocked in open() on ``fifo`` (what this corpus guards against), let
    it go: a writer that opens and closes gives it an end of file."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _params() -> Iterator[Any]:
    for command in COMMANDS:
        for case in CASES:
            yield pytest.param(command, case, id=f"{command}-{case}")


def _check(result: Result, command: str) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert lines and lines[-1].startswith((f"ctxscope {command}:", "Error:")), result.stderr
        assert len(lines) == 1 or lines[-1].startswith("Error:"), result.stderr


@pytest.mark.parametrize(("command", "case"), list(_params()))
def test_every_command_on_every_input(
    corpus: dict[str, Path], tmp_path: Path, command: str, case: str
) -> None:
    path = corpus[case]
    out = tmp_path / "out.jsonl"
    args = [command, str(path)]
    if command == "convert":
        args += ["-o", str(out)]
    elif command == "report":
        args += ["-o", str(tmp_path / "out.html")]
    elif command in ("analyze", "replay"):
        args.append("--json")
    result: Result = within(HANG_S, lambda: CliRunner().invoke(cli, args))
    _check(result, command)
    assert "\x1b" not in result.output and "\x07" not in result.output  # names printed escaped
    if command in ("analyze", "replay") and result.exit_code == 0:
        orjson.loads(result.stdout)  # the JSON is whole
    if command == "convert" and result.exit_code == 0:
        again = load_session(out)  # what convert wrote reads back as the same messages
        assert [m.id for m in again.messages] == [m.id for m in load_session(path).messages]


def _batch_folder(corpus: dict[str, Path], tmp_path: Path) -> Path:
    """Every case in one folder, the special files as links (inside a folder they are skipped)."""
    folder = tmp_path / "batch"
    folder.mkdir()
    for name, path in corpus.items():
        if path.is_file() and not path.is_symlink() and name != "device":
            shutil.copy(path, folder / name)
    for name in ("fifo.jsonl", "socket.jsonl"):
        os.symlink(corpus[name.removesuffix(".jsonl")], folder / name)
    return folder


def test_fidelity_over_the_whole_corpus_at_once(corpus: dict[str, Path], tmp_path: Path) -> None:
    folder = _batch_folder(corpus, tmp_path)
    result: Result = within(HANG_S, lambda: CliRunner().invoke(cli, ["fidelity", str(folder)]))
    _check(result, "fidelity")


def test_fleet_over_the_whole_corpus_at_once(
    corpus: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch commands take the corpus as a folder: a row (or an error row) per session that
    could be read, one line per problem, never a traceback."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = _batch_folder(corpus, tmp_path)
    fleet = ["fleet", str(folder), "--jobs", "1", "--json"]
    result: Result = within(HANG_S, lambda: CliRunner().invoke(cli, fleet))
    _check(result, "fleet")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["rows"] and report["analysed"] == len(report["rows"])
    again: Result = within(HANG_S, lambda: CliRunner().invoke(cli, fleet))  # from the cache
    assert again.exit_code == 0
    cached = orjson.loads(again.stdout)
    readable = [row for row in report["rows"] if row["error"] is None]
    assert cached["cached"] == len(readable)  # an error row is never cached: read again

    def same(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in row.items() if k != "analysis_seconds"} for row in rows]

    assert same(cached["rows"]) == same(report["rows"])
    export = ["export", str(folder), "--to", str(tmp_path / "parquet"), "--jobs", "1"]
    exported: Result = within(HANG_S, lambda: CliRunner().invoke(cli, export))
    _check(exported, "export")


async def _open_and_quit(path: Path) -> None:
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(int(TUI_OPEN_S / 0.02)):
            screen = app.screen
            if isinstance(screen, SessionScreen) and screen.state is not None:
                break
            picker = app.picker
            if picker is not None and picker.error_text:
                break
            await pilot.pause(0.02)
        else:
            raise AssertionError("neither opened nor refused")
        await settle(pilot)
        if isinstance(app.screen, SessionScreen):
            for key in ("end", "up", "home", "o", "escape", "m"):
                await pilot.press(key)
            await settle(pilot)
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code in (0, None)


@pytest.mark.parametrize("case", CASES)
async def test_the_tui_opens_every_input_and_quits(corpus: dict[str, Path], case: str) -> None:
    try:
        await _open_and_quit(corpus[case])
    finally:
        _let_readers_go(corpus["fifo"])  # before the event loop closes: it waits for its threads
