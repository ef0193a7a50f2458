"""Run ``ctxscope mock-llm`` as a subprocess for tests: start it, configure it, read its log, stop it."""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any
from urllib.parse import urlsplit

from tests.support.paths import REPO

_LISTENING = re.compile(r"listening on (http://\S+/v1)")


class MockLLMProcess:
    """``ctxscope mock-llm --port 0 ARGS`` in a subprocess; ``url`` is its OpenAI base URL."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, startup_s: float = 30.0):
        # Closed in stop(); a file (not a pipe) so a chatty server never blocks on a full pipe.
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        command = [sys.executable, "-c", "from tui.cli.main import main; main()", "mock-llm"]
        if "--port" not in args:
            command += ["--port", "0"]
        self.proc = subprocess.Popen(
            [*command, *args],
            cwd=REPO,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + startup_s
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        match = _LISTENING.search(line)
        if match is None:
            self.stop()
            raise RuntimeError(f"mock-llm did not start: {line!r} {self.stderr()!r}")
        self.url: str = match.group(1)
        parts = urlsplit(self.url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80

    # -- HTTP helpers --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float = 10.0,
    ) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request to the server; returns (status, headers, body)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            payload = None if body is None else json.dumps(body).encode()
            sent = {"Content-Type": "application/json", **(headers or {})}
            connection.request(method, path, body=payload, headers=sent)
            response = connection.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    def configure(self, **fields: Any) -> dict[str, Any]:
        """Apply ``fields`` on top of the start-up configuration (fresh fault budgets and log)."""
        status, _, data = self.request("POST", "/_mock/config", fields)
        assert status == 200, data
        result: dict[str, Any] = json.loads(data)
        return result

    def requests(self) -> list[dict[str, Any]]:
        """The server's log of chat requests since the last configuration."""
        status, _, data = self.request("GET", "/_mock/requests")
        assert status == 200, data
        entries: list[dict[str, Any]] = json.loads(data)["requests"]
        return entries

    # -- lifecycle -----------------------------------------------------------------------------

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Stop the server with ``sig`` and return its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode

    def close(self) -> None:
        """Stop the server (if running) and release its stderr file."""
        self.stop()
        self._stderr.close()

    def stderr(self) -> str:
        """Everything the server wrote on stderr so far."""
        self._stderr.seek(0)
        return self._stderr.read()
