"""``ctxscope serve``'s guard (tui/cli/commands/serve_guard.py): only the owner of the printed address
drives it. A server on 127.0.0.1, port 0, runs in the test's own loop; aiohttp's client speaks to
it as a browser (or a hostile page) would. The app each socket starts is a small stand-in that
speaks textual-serve's packets (``FAKE_APP``), so the checks run in a fraction of a second; the
real UI is driven through the socket by the read-only test at the end."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner

from core.analysis_cache import READ_ONLY_ENV, AnalysisCache, Fingerprint
from core.insights import prices
from tests.support.paths import REPO
from tui.app import CtxscopeApp
from tui.cli.commands.serve import TEMPLATES, app_command
from tui.cli.commands.serve_guard import BUSY_CODE, COLUMNS, ROWS, GuardedServer
from tui.cli.main import cli

ROOT = REPO
SESSION = ROOT / "sample_sessions" / "claude-code" / "overflow.jsonl"
TOKEN = "t0ken-for-the-test_only"
DEADLINE_S = 60.0
"""The longest any wait below may take (each polls for its condition)."""

FAKE_APP = r"""
import json, os, signal, subprocess, sys

stubborn = sys.argv[1] == "stubborn"
if stubborn:  # ignores SIGTERM, and the quit it is sent
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
out = sys.stdout.buffer

def send(**fields):
    payload = json.dumps(fields).encode()
    out.write(b"D" + len(payload).to_bytes(4, "big") + payload)
    out.flush()

out.write(b"__GANGLION__\n")
send(pid=os.getpid(), child=child.pid, columns=int(os.environ["COLUMNS"]),
     rows=int(os.environ["ROWS"]))
read = sys.stdin.buffer.read
while True:
    head = read(5)
    if len(head) < 5:
        break
    body = read(int.from_bytes(head[1:], "big"))
    if body == b"exit":  # the app ends by itself (the user pressed q)
        break
    if head[:1] == b"D":
        send(keys=body.decode())
        continue
    meta = json.loads(body)
    if meta["type"] == "resize":
        send(columns=meta["width"], rows=meta["height"])
    elif meta["type"] == "quit" and not stubborn:
        break
child.kill()
"""
"""Stands in for ``python -m tui open``: reports its pid, its child's and its size, echoes each
resize and key, quits when told (unless ``stubborn``) and when it reads the key ``exit``."""


@dataclass
class Served:
    """A guarded server running in the test's loop."""

    server: GuardedServer
    base: str
    http: aiohttp.ClientSession
    stop: Callable[[], Awaitable[None]]

    def socket_url(self, token: str = TOKEN, query: str = "") -> str:
        return f"ws://127.0.0.1:{self.base.rsplit(':', 1)[1]}/ws/{token}{query}"

    async def connect(
        self, *, token: str = TOKEN, query: str = ""
    ) -> aiohttp.ClientWebSocketResponse:
        return await self.http.ws_connect(self.socket_url(token, query), origin=self.base)


async def start(command: str, *, max_sessions: int = 2) -> Served:
    server = GuardedServer(
        command,
        token=TOKEN,
        max_sessions=max_sessions,
        host="127.0.0.1",
        port=0,
        title="ctxscope test",
        templates_path=TEMPLATES,
    )
    runner = web.AppRunner(await server.make_app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))  # (an IP host)

    async def stop() -> None:
        await http.close()
        await runner.cleanup()

    return Served(server, f"http://127.0.0.1:{port}", http, stop)


def fake_app(folder: Path, mode: str) -> str:
    """The command of :data:`FAKE_APP` (``polite`` or ``stubborn``), written in ``folder``."""
    script = folder / "fake_app.py"
    script.write_text(FAKE_APP, encoding="utf-8")
    return shlex.join([sys.executable, str(script), mode])


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    running = await start(fake_app(tmp_path, "polite"))
    yield running
    await running.stop()


@pytest.fixture
async def stubborn(tmp_path: Path) -> AsyncIterator[Served]:
    running = await start(fake_app(tmp_path, "stubborn"))
    yield running
    await running.stop()


async def report(socket: aiohttp.ClientWebSocketResponse) -> dict[str, int | str]:
    """The next packet the fake app sent, decoded."""
    message = await socket.receive(timeout=DEADLINE_S)
    assert message.type == aiohttp.WSMsgType.BINARY, message
    decoded: dict[str, int | str] = json.loads(message.data)
    return decoded


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


async def until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` until it holds; fail after :data:`DEADLINE_S` saying ``what``."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still not so after {DEADLINE_S:.0f} s: {what}")
        await asyncio.sleep(0.05)


async def refused(
    served: Served, url: str, *, origin: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    """The status and body of a websocket handshake that is refused."""
    sent = dict(headers or {})
    if origin is not None:
        sent["Origin"] = origin
    with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
        await served.http.ws_connect(url, headers=sent)
    # the refusal's body, read with a plain GET carrying the same headers
    async with served.http.get(url.replace("ws://", "http://", 1), headers=sent) as answer:
        body = await answer.text()
        assert answer.status == caught.value.status
    return caught.value.status, body


# -- the token -------------------------------------------------------------------------------------


async def test_the_page_needs_the_token(served: Served) -> None:
    for query, reason in (("", "missing token"), ("?token=nope", "wrong token")):
        async with served.http.get(f"{served.base}/{query}") as answer:
            assert answer.status == 403
            assert reason in await answer.text()
    async with served.http.get(f"{served.base}/?token={TOKEN}") as answer:
        assert answer.status == 200
        page = await answer.text()
        assert answer.headers["Referrer-Policy"] == "no-referrer"
    # the page hands the token on to its websocket, at the address it was served from
    assert f'data-session-websocket-url="{served.socket_url()}"' in page
    assert served.server.sessions == {}


async def test_a_download_needs_the_token(served: Served) -> None:
    async with served.http.get(f"{served.base}/download/some-key") as answer:
        assert answer.status == 403 and "missing token" in await answer.text()
    async with served.http.get(f"{served.base}/download/some-key?token=nope") as answer:
        assert answer.status == 403 and "wrong token" in await answer.text()
    async with served.http.get(f"{served.base}/?token={TOKEN}"):
        pass  # the page sets the cookie a download carries
    async with served.http.get(f"{served.base}/download/some-key") as answer:
        assert answer.status == 404  # past the guard: no such download


async def test_the_socket_needs_the_token(served: Served) -> None:
    status, body = await refused(
        served, f"{served.base}/ws".replace("http", "ws"), origin=served.base
    )
    assert status == 403 and "missing token" in body
    status, body = await refused(served, served.socket_url("nope"), origin=served.base)
    assert status == 403 and "wrong token" in body
    assert served.server.sessions == {}  # no app was started


# -- the origin and the host -----------------------------------------------------------------------


async def test_another_origin_cannot_open_the_socket(served: Served) -> None:
    port = served.base.rsplit(":", 1)[1]
    for origin in (
        "http://evil.example",
        f"http://127.0.0.1:{int(port) + 1}",
        f"https://127.0.0.1:{port}",
        "null",
    ):
        status, body = await refused(served, served.socket_url(), origin=origin)
        assert status == 403 and "is not this server" in body, origin
    status, body = await refused(served, served.socket_url())  # no Origin at all
    assert status == 403 and "without an Origin" in body
    assert served.server.sessions == {}
    socket = await served.connect()  # the page's own origin is let in
    assert (await report(socket))["columns"] == 80
    await socket.close()


async def test_a_foreign_host_name_is_refused_on_loopback(served: Served) -> None:
    port = served.base.rsplit(":", 1)[1]
    headers = {"Host": f"rebound.example:{port}"}
    async with served.http.get(f"{served.base}/?token={TOKEN}", headers=headers) as answer:
        assert answer.status == 403 and "not this machine's loopback" in await answer.text()
    status, _body = await refused(
        served, served.socket_url(), origin=f"http://rebound.example:{port}", headers=headers
    )
    assert status == 403


# -- sessions, sizes, processes --------------------------------------------------------------------


async def test_a_third_socket_is_refused_and_starts_nothing(served: Served) -> None:
    first, second = await served.connect(), await served.connect()
    pids = {(await report(first))["pid"], (await report(second))["pid"]}
    third = await served.connect()
    closing = await third.receive(timeout=DEADLINE_S)
    assert closing.type == aiohttp.WSMsgType.CLOSE
    assert third.close_code == BUSY_CODE
    assert "at most 2 sessions at once" in str(closing.extra)
    assert len(served.server.sessions) == 2
    assert {service.pid for service in served.server.sessions} == pids
    await first.close()  # a place frees up when a tab closes
    await until(lambda: len(served.server.sessions) == 1, "the first session ended")
    fourth = await served.connect()
    assert (await report(fourth))["pid"] not in pids
    await second.close()
    await fourth.close()


async def test_the_terminal_size_is_clamped(served: Served) -> None:
    cases = {
        "?width=5000&height=5000": (COLUMNS[1], ROWS[1]),
        "?width=1&height=-3": (COLUMNS[0], ROWS[0]),
        "?width=wide&height=": (80, 24),
        "": (80, 24),
    }
    for query, (columns, rows) in cases.items():
        socket = await served.connect(query=query)
        first = await report(socket)
        assert (first["columns"], first["rows"]) == (columns, rows), query
        await socket.close()
        await until(lambda: not served.server.sessions, "the session ended")
    socket = await served.connect()
    await report(socket)
    await socket.send_str(json.dumps(["resize", {"width": 99_999, "height": 0}]))
    assert await report(socket) == {"columns": COLUMNS[1], "rows": ROWS[0]}
    await socket.close()


async def test_malformed_messages_are_ignored(served: Served) -> None:
    socket = await served.connect()
    await report(socket)
    for junk in (
        "not json",
        "[]",
        "{}",
        "[1, 2]",
        '["resize"]',
        '["resize", "wide"]',
        '["resize", {"width": "80", "height": 24}]',
        '["resize", {"width": true, "height": 24}]',
        '["resize", {"width": 1e400, "height": 24}]',
        '["stdin", 5]',
        '["stdin"]',
        '["unknown", {}]',
        "[" * 100_000,
    ):
        await socket.send_str(junk)
    await socket.send_bytes(b"\x00\xff binary")
    await socket.send_str(json.dumps(["stdin", "q"]))
    assert await report(socket) == {"keys": "q"}  # every piece of junk before it was skipped
    await socket.send_str(json.dumps(["ping", "p1"]))
    assert await socket.receive_json(timeout=DEADLINE_S) == ["pong", "p1"]
    await socket.close()


async def test_a_closed_sockets_process_group_ends(stubborn: Served) -> None:
    socket = await stubborn.connect()
    started = await report(socket)
    pid, child = int(started["pid"]), int(started["child"])
    assert alive(pid) and alive(child)
    await socket.close()  # the app ignores both the quit and SIGTERM: SIGKILL ends it
    await until(lambda: not alive(pid) and not alive(child), "the app and its child are gone")
    await until(lambda: not stubborn.server.sessions, "the session is forgotten")


async def test_an_app_that_ends_closes_its_socket_and_frees_its_place(served: Served) -> None:
    socket = await served.connect()
    pid = int((await report(socket))["pid"])
    await socket.send_str(json.dumps(["stdin", "exit"]))
    closing = await socket.receive(timeout=DEADLINE_S)
    assert closing.type == aiohttp.WSMsgType.CLOSE
    await until(lambda: not served.server.sessions and not alive(pid), "the session ended")


async def test_stopping_the_server_ends_every_session(tmp_path: Path) -> None:
    running = await start(fake_app(tmp_path, "stubborn"))
    socket = await running.connect()
    started = await report(socket)
    pid, child = int(started["pid"]), int(started["child"])
    await asyncio.wait_for(running.stop(), DEADLINE_S)
    await until(lambda: not alive(pid) and not alive(child), "the app and its child are gone")


# -- no file written from the browser ---------------------------------------------------------------


def test_each_browser_runs_read_only_unless_writes_are_allowed() -> None:
    assert "--read-only" in shlex.split(app_command(None, window=None, policy_spec=None))
    words = shlex.split(app_command(None, window=None, policy_spec=None, read_only=False))
    assert "--read-only" not in words


@pytest.mark.skipif(not SESSION.exists(), reason="the sample session is missing")
@pytest.mark.parametrize("read_only", [True, False])
async def test_saving_a_policy_from_the_browser(tmp_path: Path, read_only: bool) -> None:
    """The real UI, driven through the socket: ``p`` opens the policy panel, ctrl+s asks where
    to save, Enter saves; refused in the read-only mode ``serve`` runs by default."""
    target = tmp_path / "saved.toml"
    command = app_command(str(SESSION), window=None, policy_spec=None, read_only=read_only)
    running = await start(command, max_sessions=1)
    try:
        socket = await running.connect(query="?width=140&height=45")
        screen = Screen(socket)
        await screen.wait_for("209,658")  # the session is loaded and replayed
        await socket.send_str(json.dumps(["stdin", "p"]))
        await screen.wait_for("Load TOML")  # the policy panel is up
        screen.mark()
        await socket.send_str(json.dumps(["stdin", "\x13"]))  # ctrl+s
        if read_only:
            await screen.wait_for("writes no file")
            assert "Save the policy as TOML" not in screen.text
        else:
            await screen.wait_for("Save the policy as TOML")
            screen.mark()
            await screen.wait_for(".toml")  # the field drawn again: its cursor blinks, it has focus
            await socket.send_str(json.dumps(["stdin", "\x15"]))  # ctrl+u empties the field
            screen.mark()
            await screen.wait_for("policy.toml")  # its placeholder
            await socket.send_str(json.dumps(["stdin", str(target)]))
            await screen.wait_for(target.name)
            await socket.send_str(json.dumps(["stdin", "\r"]))
            await screen.wait_for("Saved")
        await screen.close()
    finally:
        await running.stop()
    assert target.exists() is not read_only
    cache = Path(os.environ["XDG_CACHE_HOME"])  # the test's own (conftest.py)
    written = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    if read_only:
        assert written == []
    else:
        assert "ctxscope/prices.json" in written  # the price memo, as a writing ctxscope keeps it


def test_read_only_keeps_the_caches_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    folder = tmp_path / "cache"
    AnalysisCache(folder, version="1").put("row", "/a/session.jsonl", Fingerprint(1, 2), b"{}")
    prices._Memo().entry("claude-sonnet-4-5", None, None)
    assert not folder.exists() and not prices._memo_path().exists()
    monkeypatch.delenv(READ_ONLY_ENV)  # the same calls, writing
    AnalysisCache(folder, version="1").put("row", "/a/session.jsonl", Fingerprint(1, 2), b"{}")
    prices._Memo().entry("claude-sonnet-4-5", None, None)
    assert (folder / "analyses.sqlite").exists() and prices._memo_path().exists()


def test_open_read_only_sets_the_switch_its_workers_inherit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(READ_ONLY_ENV, "0")  # (so that the "1" run_app sets is undone after)
    apps: list[CtxscopeApp] = []
    monkeypatch.setattr(CtxscopeApp, "run", lambda self, **_: apps.append(self))
    result = CliRunner().invoke(cli, ["open", "--read-only"])
    assert result.exit_code == 0, result.output
    assert apps[0].read_only and os.environ[READ_ONLY_ENV] == "1"


class Screen:
    """What the app has drawn so far, as text (escape sequences removed), read by a task."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.text = ""
        self.ended: str | None = None
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.text += _plain(message.data.decode("utf-8", "replace"))
        self.ended = f"the socket closed ({self.socket.close_code})"

    async def wait_for(self, needle: str) -> None:
        """Wait until ``needle`` has been drawn since the last :meth:`mark`."""
        deadline = time.monotonic() + DEADLINE_S
        while needle not in self.text:
            if self.ended is not None:
                pytest.fail(f"{self.ended} before {needle!r} was drawn")
            if time.monotonic() > deadline:
                pytest.fail(f"{needle!r} not drawn within {DEADLINE_S:.0f} s: {self.text[-800:]!r}")
            await asyncio.sleep(0.05)

    def mark(self) -> None:
        """Forget what was drawn so far."""
        self.text = ""

    async def close(self) -> None:
        await self.socket.close()
        await self._reader


def _plain(output: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]", "", output)
