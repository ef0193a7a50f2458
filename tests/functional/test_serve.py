"""``ctxscope serve``: the TUI in a real (headless) browser, and a host other than loopback only
when asked for."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner

from tests.support.chromium import Chromium, find_chromium
from tests.support.paths import REPO
from tui.cli.commands.serve import app_command, exposure
from tui.cli.main import cli

ROOT = REPO
SESSION = ROOT / "sample_sessions" / "claude-code" / "overflow.jsonl"

HOOK = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true});
    window.__ctxscopeTerminal = value;
  },
});
"""
"""Run in the page before its scripts: textual-serve's client keeps its xterm.js terminal in a
``terminal`` property and exposes nothing global, so the first object to set one hands it over.
The terminal draws on a canvas; its buffer is where the text is."""

SCREEN = """(() => {
  const terminal = window.__ctxscopeTerminal;
  if (!terminal || !terminal.buffer) return null;
  const buffer = terminal.buffer.active, lines = [];
  for (let i = 0; i < buffer.length; i++) {
    const line = buffer.getLine(i);
    if (line) lines.push(line.translateToString(true));
  }
  return lines.join("\\n");
})()"""
"""The characters on the browser's terminal, a line each."""


def test_only_loopback_is_served_without_public() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert exposure(host) is None
    for host in ("0.0.0.0", "192.0.2.7", "::", "example.invalid"):
        sentence = exposure(host)
        assert sentence is not None and "readable by anyone who can reach the port" in sentence
    result = CliRunner().invoke(cli, ["serve", str(SESSION), "--host", "192.0.2.7"])
    assert result.exit_code == 2
    assert "readable by anyone" in result.output and "--public" in result.output


def test_a_missing_session_is_refused_before_serving(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "nope.jsonl"), "--port", "0"])
    assert result.exit_code == 2 and "no such file or directory" in result.output


def test_each_browser_runs_this_python_on_the_session_quoted(tmp_path: Path) -> None:
    odd = tmp_path / "a session; rm -rf x $(y).jsonl"
    words = shlex.split(app_command(str(odd), window=1000, policy_spec="pi"))
    assert words == [
        sys.executable,
        "-m",
        "tui",
        "open",
        "--read-only",
        "--window",
        "1000",
        "--policy",
        "pi",
        str(odd.resolve()),
    ]
    assert shlex.split(app_command(None, window=None, policy_spec=None))[-2:] == [
        "open",
        "--read-only",
    ]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``ctxscope serve SESSION --port 0`` in its own process group; yields the address."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "160"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "serve", str(SESSION), "--port", "0"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    found = re.search(r"http://\S+", first)
    assert found, f"serve printed {first!r}"
    # keep reading its log, so that a full pipe never blocks it
    threading.Thread(target=process.stdout.read, daemon=True).start()
    try:
        yield found.group(0)
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the server and the ctxscope it started
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


@pytest.fixture
def chromium() -> str:
    """The installed Chromium; the test is skipped, saying why, without one."""
    binary = find_chromium()
    if binary is None:
        pytest.skip(
            "no Chromium installed (apt-get install chromium; .ci/run does): the browser test "
            "of ctxscope serve needs a real browser"
        )
    return binary


async def test_the_printed_address_carries_the_token_the_page_needs(server: str) -> None:
    base, _mark, token = server.partition("/?token=")
    assert len(token) >= 40  # secrets.token_urlsafe(32)
    async with aiohttp.ClientSession() as http:
        await _listening(http, base)
        for url in (f"{base}/", f"{base}/?token=x{token}"):
            async with http.get(url) as answer:
                assert answer.status == 403, url
        async with http.get(server) as answer:
            assert answer.status == 200
            assert f"/ws/{token}" in await answer.text()


async def _listening(http: aiohttp.ClientSession, base: str) -> None:
    """Wait until the server answers (it prints its address before it listens)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            async with http.get(f"{base}/static/css/xterm.css"):
                return
        except aiohttp.ClientConnectionError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


EXPECTED = ("overflow.jsonl", "200,000", "209,658")
"""On the browser's terminal once the session is loaded and replayed: the session screen's
title, the window and the recorded peak."""


async def test_the_session_screen_renders_in_a_real_browser(chromium: str, server: str) -> None:
    async with Chromium(chromium, width=1400, height=900) as browser:
        await browser.send("Page.enable")
        await browser.send("Page.addScriptToEvaluateOnNewDocument", source=HOOK)
        await browser.send("Page.navigate", url=server)
        screen, title = "", ""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # until everything asserted below is drawn
            screen = await browser.evaluate(SCREEN) or ""
            title = await browser.evaluate("document.title") or ""
            if all(text in screen for text in EXPECTED) and title == "ctxscope overflow.jsonl":
                break
            await asyncio.sleep(0.5)
    assert "overflow.jsonl" in screen, screen  # the session screen's title
    assert "200,000" in screen  # the window
    assert "209,658" in screen  # the recorded peak, once the session is loaded and replayed
    assert title == "ctxscope overflow.jsonl"
