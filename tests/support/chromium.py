"""A headless Chromium driven over the Chrome DevTools protocol, for the tests that need a real
browser (``ctxscope serve``).

Debian's ``chromium`` package is used as installed (``.ci/run`` installs it); nothing is
downloaded. The browser runs with a throw-away profile, listens for the protocol on a loopback
port it picks itself (read from ``DevToolsActivePort`` in the profile), and is killed on exit.
The protocol is spoken over aiohttp's WebSocket client (aiohttp comes with textual-serve).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Names the browser is looked for under, in order."""


def find_chromium() -> str | None:
    """The path of an installed Chromium, or None."""
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


class CdpError(Exception):
    """The browser answered a command with an error."""


class Chromium:
    """``async with Chromium(path) as browser: await browser.send("Page.navigate", url=...)``."""

    def __init__(self, binary: str, *, width: int = 1400, height: int = 900) -> None:
        self.binary = binary
        self.size = (width, height)
        self._ids = itertools.count(1)
        self._profile = Path(tempfile.mkdtemp(prefix="ctxscope-chromium-"))
        self._process: subprocess.Popen[bytes] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._socket: aiohttp.ClientWebSocketResponse | None = None

    async def __aenter__(self) -> Chromium:
        width, height = self.size
        self._process = subprocess.Popen(
            [
                self.binary,
                "--headless=new",
                "--no-sandbox",  # the tests run as root in CI
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                f"--user-data-dir={self._profile}",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = await self._devtools_port()
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as answer:
            targets = await answer.json()
        page = next(t for t in targets if t.get("type") == "page")
        self._socket = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        return self

    async def _devtools_port(self, timeout_s: float = 30.0) -> int:
        marker = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self._process.returncode}")
            if marker.exists():
                first = marker.read_text().splitlines()[:1]
                if first and first[0].isdigit():
                    return int(first[0])
            await asyncio.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer (events in between are skipped)."""
        assert self._socket is not None
        ident = next(self._ids)
        await self._socket.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = await self._socket.receive_json()
            if message.get("id") != ident:
                continue
            if "error" in message:
                raise CdpError(f"{method}: {message['error']}")
            result: dict[str, Any] = message.get("result", {})
            return result

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        answer = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return answer.get("result", {}).get("value")

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._http is not None:
            await self._http.close()
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=30)
        shutil.rmtree(self._profile, ignore_errors=True)
