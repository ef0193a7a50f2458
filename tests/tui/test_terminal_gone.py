"""The app exits when its terminal goes away: closing the window or killing the
tmux session sends SIGHUP, or simply hangs the terminal up; either way ctxscope must not stay
behind spinning on end-of-file.

The app runs in a child process on a pseudo-terminal of its own, as ``ctxscope PATH`` would.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.support.paths import REPO
from tools.scenes import OVERFLOW
from tui.app import HANGUP_EXIT_CODE

pty = pytest.importorskip("pty")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX terminal")

STARTED_S = 30.0
"""Longest wait for the app's first frame (a busy machine)."""
EXIT_S = 10.0
"""Longest wait for the app to exit once its terminal is gone."""


def _read_until(master: int, needle: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    return seen


@pytest.fixture
def app_on_a_terminal() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``ctxscope`` on the main sample, on a pseudo-terminal; its first frame drawn."""
    if not OVERFLOW.exists():
        pytest.skip("sample_sessions are not generated")
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    child = subprocess.Popen(
        [sys.executable, "-c", "from tui.cli.main import main; main()", str(OVERFLOW)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=REPO,
        start_new_session=True,  # the terminal is its controlling one, as in a real window
    )
    os.close(slave)
    try:
        drawn = _read_until(master, b"overflow.jsonl", STARTED_S)
        assert b"overflow.jsonl" in drawn, "the app never drew its first frame"
        yield child, master
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        with contextlib.suppress(OSError):  # (closed by the test already)
            os.close(master)


def _exit_status(child: subprocess.Popen[bytes], master: int | None) -> int | None:
    deadline = time.monotonic() + EXIT_S
    while time.monotonic() < deadline:
        if master is not None:  # keep draining what it writes, as a terminal would
            _read_until(master, b"\0never", 0.1)
        status = child.poll()
        if status is not None:
            return status
        time.sleep(0.05)
    return None


def test_sighup_exits(app_on_a_terminal: tuple[subprocess.Popen[bytes], int]) -> None:
    child, master = app_on_a_terminal  # exits on its own, with the status a shell reports
    child.send_signal(signal.SIGHUP)
    assert _exit_status(child, master) == HANGUP_EXIT_CODE


def test_a_terminal_that_goes_away_without_a_signal_exits(
    app_on_a_terminal: tuple[subprocess.Popen[bytes], int],
) -> None:
    child, master = app_on_a_terminal
    # The pseudo-terminal is not the child's controlling one, so closing it sends no signal:
    # its reads only return end-of-file (which kept ctxscope spinning at half a core).
    os.close(master)
    status = _exit_status(child, None)
    assert status is not None, "ctxscope kept running after its terminal went away"
