"""The server behind ``ctxscope serve``: textual-serve's, guarded so only its owner can drive it.

textual-serve (:class:`textual_serve.server.Server`) serves a page and a websocket; each socket
starts an app process and passes it the browser's keys. As it comes, any web page the user
visits can open that socket. :class:`GuardedServer` keeps textual-serve's page and protocol and
adds, on every request but the page's static files:

* **A token.** ``ctxscope serve`` makes one at start (:func:`new_token`) and prints it in the
  address to open (``http://127.0.0.1:PORT/?token=...``). The page (``/``) needs it in its
  query; the page passes it on in the websocket's path (``/ws/TOKEN``); a download
  (``/download/KEY``, Textual's "deliver a file") takes it from the query or from the cookie the
  page sets (HttpOnly, SameSite=Strict, named after the port). A missing or wrong token is
  ``403`` with a one-line reason; tokens are compared in constant time.
* **The origin.** The websocket refuses (``403``) an ``Origin`` header other than the address
  the request came to (scheme, host and port), and a missing one (browsers always send it).
* **The host.** Served on loopback, a request whose ``Host`` is not a loopback name is refused
  (a web page cannot reach the server under a name of its own through DNS rebinding).
* **A session limit.** At most ``max_sessions`` app processes at once; a further socket is
  accepted, then closed at once with code 1013 ("try again later") and a reason, and starts
  nothing.
* **A bounded terminal.** The size in the socket's query and in every ``resize`` message is
  clamped to :data:`COLUMNS` x :data:`ROWS`; a malformed message is ignored.
* **Processes that end.** Each app process is started with ``exec`` as the leader of a process
  group of its own. When its socket closes it is asked to quit; after :data:`QUIT_GRACE_S` its
  group gets SIGTERM, after :data:`TERM_GRACE_S` more SIGKILL. When the process ends by itself
  (``q``), its socket is closed. Stopping the server stops every session.

Whether the app may write files is the command's business (``ctxscope open --read-only``,
which ``ctxscope serve`` passes unless ``--allow-writes``), not the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import secrets
import signal
from asyncio.subprocess import Process
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server
from yarl import URL

from core.llm.mock_server import is_loopback_host

log = logging.getLogger("ctxscope.serve")

COLUMNS = (20, 500)
"""The fewest and most columns a browser's terminal may have."""
ROWS = (10, 200)
"""The fewest and most rows a browser's terminal may have."""
DEFAULT_SIZE = (80, 24)
"""The size when the socket's query gives none (textual-serve's default)."""
QUIT_GRACE_S = 3.0
"""How long an app process is given to quit after its socket closed, before SIGTERM."""
TERM_GRACE_S = 2.0
"""How long after SIGTERM before SIGKILL."""
KILL_WAIT_S = 5.0
"""How long to wait for a killed process to be reaped."""
BUSY_CODE = 1013
"""The close code of a socket refused for the session limit (RFC 6455: try again later)."""
GOING_AWAY_CODE = 1001
"""The close code of the sockets still open when the server stops."""
MAX_MESSAGE_BYTES = 1 << 20
"""The largest message a browser may send (keys and sizes are a few bytes)."""


def new_token() -> str:
    """A fresh random token for the address (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def clamp(value: int, bounds: tuple[int, int]) -> int:
    """``value`` within ``bounds`` (inclusive)."""
    low, high = bounds
    return max(low, min(high, value))


def query_size(query: Mapping[str, str]) -> tuple[int, int]:
    """The terminal size a socket's query asks for (``width``, ``height``), clamped; a value
    that is not a whole number is the default."""
    sizes = []
    for key, default, bounds in (
        ("width", DEFAULT_SIZE[0], COLUMNS),
        ("height", DEFAULT_SIZE[1], ROWS),
    ):
        try:
            value = int(query.get(key, default))
        except ValueError:
            value = default
        sizes.append(clamp(value, bounds))
    return sizes[0], sizes[1]


def message_size(data: object) -> tuple[int, int] | None:
    """The clamped size of a ``resize`` message's data, or None when it is not
    ``{"width": int, "height": int}``."""
    if not isinstance(data, dict):
        return None
    width, height = data.get("width"), data.get("height")
    if not _is_int(width) or not _is_int(height):
        return None
    assert isinstance(width, int) and isinstance(height, int)
    return clamp(width, COLUMNS), clamp(height, ROWS)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def envelope(text: str) -> tuple[str, object] | None:
    """A browser message's type and data (``["type", data]``), or None when it is malformed."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, list) or not parsed or not isinstance(parsed[0], str):
        return None
    return parsed[0], parsed[1] if len(parsed) > 1 else None


def same_origin(origin: str, request: web.Request) -> bool:
    """Whether ``origin`` (an ``Origin`` header) is the address ``request`` came to."""
    try:
        parsed = URL(origin)
        served = request.url
    except ValueError:
        return False
    if not parsed.is_absolute() or parsed.path not in ("", "/") or parsed.query_string:
        return False
    return (
        (parsed.scheme.lower(), (parsed.host or "").lower(), parsed.port)
        == (served.scheme.lower(), (served.host or "").lower(), served.port)
    )  # fmt: skip


class GuardedAppService(AppService):
    """One browser's app process: started with ``exec`` as a process-group leader, ended for
    sure (quit, then SIGTERM, then SIGKILL to its group) by :meth:`stop`."""

    def __init__(self, command: str, **kwargs: Any) -> None:
        super().__init__(command, **kwargs)
        self._stopping: asyncio.Future[None] | None = None

    @property
    def pid(self) -> int | None:
        """The app process's id (also its process group's), once started."""
        return self._process.pid if self._process is not None else None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_shell(
            f"exec {self.command}",  # the shell becomes the app: no shell left holding it
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,  # its own process group, so its children end with it
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """Relay the app's output until it ends, then close its socket."""
        await super().run()
        with contextlib.suppress(Exception):
            await self.remote_close()

    async def stop(self) -> None:
        """Ask the app to quit, then end its process group; bounded in time. Every call waits
        for the one stop (which a cancelled caller does not cancel)."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send_meta({"type": "quit"}), QUIT_GRACE_S)
            if not await _exited(process, QUIT_GRACE_S):
                _signal_group(process.pid, signal.SIGTERM)
                if not await _exited(process, TERM_GRACE_S):
                    _signal_group(process.pid, signal.SIGKILL)
                    await _exited(process, KILL_WAIT_S)
        _signal_group(process.pid, signal.SIGKILL)  # what the app left behind in its group
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(task, KILL_WAIT_S)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()


async def _exited(process: Process, timeout_s: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), timeout_s)
    except TimeoutError:
        return False
    return True


def _signal_group(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)


class GuardedServer(Server):
    """textual-serve's server, with a token, an origin and host check, a session limit, a
    bounded terminal and app processes that end (see the module's docstring)."""

    def __init__(
        self,
        command: str,
        *,
        token: str,
        max_sessions: int,
        host: str,
        port: int,
        title: str,
        templates_path: Path,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title, templates_path=templates_path)
        self.token = token
        self.max_sessions = max_sessions
        self.sessions: dict[GuardedAppService, web.WebSocketResponse] = {}
        """The app processes running now, with their sockets."""
        self._open = 0

    async def make_app(self) -> web.Application:
        """The aiohttp application (textual-serve's routes, the websocket under ``/ws/TOKEN``),
        for a runner of the caller's (:meth:`serve` runs its own)."""
        return await self._make_app()

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.router.add_get("/ws/{token}", self.handle_websocket)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Print nothing: ``ctxscope serve`` prints the address, with its token."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every socket and end every app process."""
        running = list(self.sessions.items())
        for _service, websocket in running:
            with contextlib.suppress(Exception):
                await websocket.close(code=GOING_AWAY_CODE, message=b"ctxscope serve stopped")
        await asyncio.gather(*(service.stop() for service, _ in running), return_exceptions=True)

    # -- checks ------------------------------------------------------------------------------------

    def refusal(self, request: web.Request, token: str | None) -> str | None:
        """Why ``request`` is refused (a line), or None: its host, then its token."""
        host = request.url.host or ""
        if is_loopback_host(self.host) and not is_loopback_host(host):
            return f"ctxscope serve: host {host!r} is not this machine's loopback address"
        if not token:
            return "ctxscope serve: missing token (open the address ctxscope serve printed)"
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.token.encode()):
            return "ctxscope serve: wrong token (open the address ctxscope serve printed)"
        return None

    @property
    def cookie_name(self) -> str:
        """The cookie that carries the token to downloads (per port: cookies ignore ports)."""
        return f"ctxscope-serve-{self.port}"

    # -- routes ------------------------------------------------------------------------------------

    async def handle_index(self, request: web.Request) -> web.Response:
        """The page, for a request with the token; it opens the socket at ``/ws/TOKEN``."""
        reason = self.refusal(request, request.query.get("token"))
        if reason is not None:
            raise web.HTTPForbidden(text=reason)
        scheme = "wss" if request.secure else "ws"
        context = {
            "font_size": _font_size(request.query.get("fontsize", "16")),
            "app_websocket_url": f"{scheme}://{request.host}/ws/{self.token}",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict")
        return response

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        """A file the app delivers, for a request with the token (query or cookie)."""
        token = request.query.get("token") or request.cookies.get(self.cookie_name)
        reason = self.refusal(request, token)
        if reason is not None:
            raise web.HTTPForbidden(text=reason)
        return await super().handle_download(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser's session: refused (403) without the token or from another origin;
        closed at once (1013) past the session limit."""
        reason = self.refusal(request, request.match_info.get("token"))
        origin = request.headers.get("Origin")
        if reason is None and origin is None:
            reason = "ctxscope serve: a websocket without an Origin header is refused"
        elif reason is None and origin is not None and not same_origin(origin, request):
            reason = f"ctxscope serve: origin {origin!r} is not this server"
        if reason is not None:
            raise web.HTTPForbidden(text=reason)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_MESSAGE_BYTES)
        if self._open >= self.max_sessions:
            await websocket.prepare(request)
            message = f"ctxscope serve: at most {self.max_sessions} sessions at once"
            await websocket.close(code=BUSY_CODE, message=message.encode())
            return websocket
        self._open += 1  # counted before the first await: no two sockets take one place
        try:
            await self._run_session(request, websocket)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await websocket.close(code=GOING_AWAY_CODE)
        except Exception as error:  # one session's failure is logged, never the server's
            log.exception(error)
        finally:
            self._open -= 1
        return websocket

    async def _run_session(self, request: web.Request, websocket: web.WebSocketResponse) -> None:
        service: GuardedAppService | None = None
        try:
            await websocket.prepare(request)
            service = GuardedAppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            self.sessions[service] = websocket
            await service.start(*query_size(request.query))
            await self._process_messages(websocket, service)
        finally:
            if service is not None:
                try:
                    await service.stop()
                finally:
                    self.sessions.pop(service, None)

    async def _process_messages(
        self, websocket: web.WebSocketResponse, app_service: AppService
    ) -> None:
        """Pass the browser's keys, sizes (clamped) and focus to the app; answer its pings;
        ignore what is malformed."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            parsed = envelope(message.data)
            if parsed is None:
                continue
            kind, data = parsed
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and (size := message_size(data)) is not None:
                await app_service.set_terminal_size(*size)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()


def _font_size(text: str) -> int:
    try:
        return clamp(int(text), (6, 64))
    except ValueError:
        return 16
