"""A local OpenAI-compatible chat-completions server, with fault injection, for testing live LLMs.

``ctxscope mock-llm`` runs it; tests and benchmarks can also run it in-process with
:class:`MockLLMServer`. It speaks enough of the OpenAI API for any client of that API:

* ``GET /v1/models`` and ``GET /v1/models/{id}``;
* ``POST /v1/chat/completions`` with and without ``stream: true`` (server-sent events
  ``data: {...}`` carrying ``choices[0].delta.content``, a final chunk with ``usage`` when
  ``stream_options.include_usage`` is set, then ``data: [DONE]``); ``usage`` in plain answers.

Answers come from the offline :class:`core.llm.mock.MockSummarizer`: the last user message of
the request is the prompt (the template), the messages before it are the head. The same request
always gets the same answer.

Faults (:class:`MockServerConfig`, set at start or per test through ``POST /_mock/config``): a
context limit (OpenAI-style ``400 context_length_exceeded``, or the wording of another server),
429 with ``Retry-After`` or 500 for the first K requests, a delay before answering and between
chunks, a connection dropped mid-response, malformed JSON, 401 for a wrong key, 404 for an unknown
model, a request never answered (``stall``), headers without end (``endless_headers``), an
answer dripped one byte at a time (``drip``), an answer of any size (``huge``); and two habits of real servers: answering a streamed request in one
piece, and refusing ``max_tokens``. Each "first K" fault has its own budget, spent only when it fires, checked in that
order.

Admin endpoints (no key needed): ``GET/POST /_mock/config`` (a POST applies its fields on top of
the start-up configuration and resets the fault budgets and the request log),
``POST /_mock/reset``, and ``GET /_mock/requests``: one entry per chat request with its status, the
fault it got and the server's own handling time (``duration_ms``, also sent as the response
header ``X-Mock-Duration-Ms`` on plain answers), so clients can subtract it from what they see.

Standard library HTTP (``ThreadingHTTPServer``); no dependency beyond the project's own.
"""

from __future__ import annotations

import contextlib
import ipaddress
import select
import socket
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.llm.mock import MockSummarizer
from core.llm.mock_requests import (
    Fault,
    chat_messages,
    error_answer,
    overflow_fault,
    pieces,
    split_prompt,
    status_fault,
)
from core.model.tokens import estimate_chars4

DEFAULT_MODEL = "ctxscope-mock"
DEFAULT_MAX_TOKENS = 1024
_MAX_LOG_ENTRIES = 10_000
_MAX_BODY_BYTES = 64 * 1024 * 1024

_FAULTS = ("fail_429", "fail_500", "malformed", "drop", "stall", "endless_headers", "drip", "huge")
"""The "next K requests" faults, in the order they are checked (each has its own budget)."""

OverflowStyle = Literal["openai", "anthropic", "llamacpp", "vllm", "openrouter"]
DropMode = Literal["close", "end"]
MalformedKind = Literal["json", "no-choices", "html"]


class MockServerConfig(BaseModel):
    """What the mock server serves and which faults it injects."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    models: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL], min_length=1)
    """Model names served; any other name gets 404 ``model_not_found``."""
    api_key: str | None = Field(default=None, repr=False)
    """When set, requests must send ``Authorization: Bearer <api_key>`` (else 401)."""
    context_limit_tokens: int | None = Field(default=None, ge=1)
    """Requests larger than this (characters / 4 of every message) get a 400 context-length error."""
    overflow_style: OverflowStyle = "openai"
    """Whose wording the context-length error uses: openai, anthropic, llamacpp, vllm, openrouter."""
    fail_429: int = Field(default=0, ge=0)
    """The first K chat requests get 429 with ``Retry-After``."""
    retry_after_s: float = Field(default=1.0, ge=0)
    """Wait the 429 answers ask for (``Retry-After`` in whole seconds, ``retry-after-ms`` exact)."""
    fail_500: int = Field(default=0, ge=0)
    """The next K chat requests get 500."""
    malformed: int = Field(default=0, ge=0)
    """The next K chat requests get a malformed answer (see ``malformed_kind``)."""
    malformed_kind: MalformedKind = "json"
    """``json``: a body that is not JSON; ``no-choices``: JSON without choices; ``html``: an HTML page."""
    drop: int = Field(default=0, ge=0)
    """The next K chat requests lose their connection mid-response."""
    drop_after_chunks: int = Field(default=2, ge=0)
    """Chunks sent before a streamed answer is dropped."""
    drop_mode: DropMode = "close"
    """``close``: the socket is closed mid-body; ``end``: the stream ends cleanly but early (no
    finish_reason, no ``[DONE]``)."""
    delay_s: float = Field(default=0.0, ge=0)
    """Wait before answering each chat request."""
    chunk_delay_s: float = Field(default=0.0, ge=0)
    """Wait between streamed chunks."""
    chunk_chars: int = Field(default=24, ge=1)
    """Characters of text per streamed chunk."""
    send_usage: bool = True
    """Report ``usage``; False makes clients count tokens themselves."""
    ignore_stream: bool = False
    """Answer streamed requests with one plain JSON completion, as some servers do."""
    reject_max_tokens: bool = False
    """Answer 400 ``unsupported_parameter`` to ``max_tokens`` (OpenAI's reasoning models want
    ``max_completion_tokens``)."""
    stall: int = Field(default=0, ge=0)
    """The next K chat requests are read and never answered: the connection stays open, silent,
    until the client gives up (or the server stops)."""
    drip: int = Field(default=0, ge=0)
    """The next K chat requests get their answer's body one byte at a time, ``drip_interval_s``
    apart (the headers come at once)."""
    drip_interval_s: float = Field(default=1.0, ge=0)
    """Wait between two bytes of a dripped answer (and two lines of endless headers)."""
    endless_headers: int = Field(default=0, ge=0)
    """The next K chat requests get a status line, then a header line every
    ``drip_interval_s``, without end: the response never begins."""
    huge: int = Field(default=0, ge=0)
    """The next K chat requests get an answer of ``huge_bytes`` characters of text (streamed in
    pieces, or as one plain completion), written as it goes, never held whole."""
    huge_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    """Characters of text in a huge answer."""


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Budgets:
    """Remaining count of each "first K requests" fault."""

    def __init__(self, config: MockServerConfig) -> None:
        self.fail_429 = config.fail_429
        self.fail_500 = config.fail_500
        self.malformed = config.malformed
        self.drop = config.drop
        self.stall = config.stall
        self.drip = config.drip
        self.endless_headers = config.endless_headers
        self.huge = config.huge

    def take(self, name: str) -> bool:
        left: int = getattr(self, name)
        if left <= 0:
            return False
        setattr(self, name, left - 1)
        return True


class _State:
    """Configuration, fault budgets and request log, shared by the handler threads."""

    def __init__(self, config: MockServerConfig) -> None:
        self.lock = threading.Lock()
        self.settled = threading.Condition(self.lock)
        """Notified when a chat request's log entry is final (see :meth:`finished_log`)."""
        self.in_flight = 0
        """Chat requests of this configuration still being answered."""
        self.generation = 0
        """Bumped by each (re)configuration: a request that started before it is not logged."""
        self.startup = config
        self.config = config
        self.budgets = _Budgets(config)
        self.log: deque[dict[str, Any]] = deque(maxlen=_MAX_LOG_ENTRIES)
        self.counter = 0

    def apply(self, config: MockServerConfig) -> None:
        with self.lock:
            self.config = config
            self.budgets = _Budgets(config)
            self.log.clear()
            self.counter = 0
            self.in_flight = 0
            self.generation += 1
            self.settled.notify_all()

    def finished_log(self, wait_s: float = 2.0) -> list[dict[str, Any]]:
        """Copies of the log entries in the order the requests came (``n``), after the chat
        requests in flight have written theirs.

        A handler sends the last byte of its response before it logs the request, so a client
        that asks for the log right after reading a response could otherwise miss it; and a
        handler that a busy machine holds up after that byte logs after the requests that came
        next, hence the order by number rather than by logging.
        """
        with self.settled:
            self.settled.wait_for(lambda: self.in_flight == 0, timeout=wait_s)
            return sorted((dict(e) for e in self.log), key=lambda e: int(e["n"]))


class _ClientGone(Exception):
    """The client closed the connection while we were writing."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server_version = "ctxscope-mock-llm/1"
    server: _Server

    # -- plumbing ----------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        if not self.server.quiet:
            sys.stderr.write(f"mock-llm: {self.address_string()} {format % args}\n")

    _drip_s: float | None = None
    """Set for a dripped answer: the body goes out one byte at a time, this far apart."""

    def _write(self, data: bytes) -> None:
        if self._drip_s is not None:
            self._drip(data, self._drip_s)
            return
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            self.close_connection = True
            raise _ClientGone() from exc

    def _drip(self, data: bytes, interval_s: float) -> None:
        for index in range(len(data)):
            if index and self.server.stopping.wait(interval_s):
                self._drop_connection()
            try:
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
                self.close_connection = True
                raise _ClientGone() from exc

    def _stall(self) -> None:
        """Say nothing until the client hangs up or the server stops."""
        self.close_connection = True
        while not self.server.stopping.wait(0.05):
            if self._client_closed():
                raise _ClientGone()
        self._drop_connection()

    def _answer_never_ends(
        self, fault: str, config: MockServerConfig, model: str, stream: bool, entry: dict[str, Any]
    ) -> None:
        """The faults whose answer does not come: silence, headers without end, a huge body."""
        entry["fault"] = fault.replace("_", "-")
        if fault == "stall":
            self._stall()
        elif fault == "endless_headers":
            self._endless_headers(config.drip_interval_s)
        else:
            self._send_huge(config, model, stream, entry)

    def _endless_headers(self, interval_s: float) -> None:
        """A status line, then header lines until the client hangs up or the server stops."""
        self.close_connection = True
        line = b"HTTP/1.1 200 OK\r\n"
        number = 0
        while not self._client_closed():
            try:
                self.wfile.write(line)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
                raise _ClientGone() from exc
            number += 1
            line = f"X-Mock-Header-{number}: still coming\r\n".encode()
            if self.server.stopping.wait(interval_s):
                self._drop_connection()
        raise _ClientGone()

    def _client_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _send_json(
        self,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> None:
        payload = raw if raw is not None else orjson.dumps(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(payload)

    def _read_body(self) -> bytes:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                return self._read_chunked()
            return b""
        length = int(length_header)
        if length < 0 or length > _MAX_BODY_BYTES:
            raise error_answer(413, "request body too large", "invalid_request_error")
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(body)
            body += self.rfile.read(size)
            self.rfile.readline()
            if len(body) > _MAX_BODY_BYTES:
                raise error_answer(413, "request body too large", "invalid_request_error")

    def _json_body(self) -> Any:
        raw = self._read_body()
        try:
            return orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            raise error_answer(
                400, "the request body is not valid JSON", "invalid_request_error"
            ) from None

    # -- routes ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        state = self.server.state
        try:
            if path == "/v1/models":
                config = state.config
                self._check_key(config)
                data = [self._model_entry(m) for m in config.models]
                self._send_json(200, {"object": "list", "data": data})
            elif path.startswith("/v1/models/"):
                config = state.config
                self._check_key(config)
                name = path.removeprefix("/v1/models/")
                if name not in config.models:
                    raise self._unknown_model(name)
                self._send_json(200, self._model_entry(name))
            elif path == "/_mock/config":
                self._send_json(200, state.config.model_dump(mode="json"))
            elif path == "/_mock/requests":
                self._send_json(200, {"requests": state.finished_log()})
            elif path in ("", "/", "/health", "/v1"):
                self._send_json(200, {"status": "ok"})
            else:
                raise error_answer(404, f"no route GET {path}", "invalid_request_error")
        except Fault as fault:
            self._send_fault(fault)
        except _ClientGone:
            pass

    def do_POST(self) -> None:
        started = time.perf_counter()
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            if path == "/v1/chat/completions":
                self._chat(started)
            elif path == "/_mock/config":
                self._configure(self._json_body())
            elif path == "/_mock/reset":
                self._read_body()
                self.server.state.apply(self.server.state.startup)
                self._send_json(200, self.server.state.config.model_dump(mode="json"))
            else:
                self._read_body()
                raise error_answer(404, f"no route POST {path}", "invalid_request_error")
        except Fault as fault:
            with contextlib.suppress(_ClientGone):
                self._send_fault(fault)
        except _ClientGone:
            pass

    def _send_fault(self, fault: Fault) -> None:
        self._send_json(fault.status, fault.body, fault.headers)

    @staticmethod
    def _model_entry(name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": 0, "owned_by": "ctxscope"}

    @staticmethod
    def _unknown_model(name: str) -> Fault:
        return error_answer(
            404,
            f"The model `{name}` does not exist or you do not have access to it.",
            "invalid_request_error",
            code="model_not_found",
            param="model",
        )

    def _check_key(self, config: MockServerConfig) -> None:
        if config.api_key is None:
            return
        header = self.headers.get("Authorization") or ""
        sent = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        if sent != config.api_key:
            # Echo what was sent, as some proxies do: clients must scrub keys from errors.
            shown = sent or "(none)"
            raise error_answer(
                401,
                f"Incorrect API key provided: {shown}. Check the key and try again.",
                "invalid_request_error",
                code="invalid_api_key",
            )

    def _configure(self, body: Any) -> None:
        state = self.server.state
        if not isinstance(body, dict):
            raise error_answer(
                400, "the configuration must be a JSON object", "invalid_request_error"
            )
        try:
            merged = state.startup.model_dump()
            merged.update(body)
            config = MockServerConfig.model_validate(merged)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "config"
            raise error_answer(400, f"{field}: {first['msg']}", "invalid_request_error") from None
        state.apply(config)
        self._send_json(200, config.model_dump(mode="json"))

    # -- chat completions --------------------------------------------------------------------

    def _chat(self, started: float) -> None:
        state = self.server.state
        body = self._json_body()
        with state.lock:
            config = state.config
            state.counter += 1
            state.in_flight += 1
            generation = state.generation
            entry: dict[str, Any] = {
                "n": state.counter,
                "path": "/v1/chat/completions",
                "model": None,
                "stream": False,
                "status": 200,
                "fault": None,
                "duration_ms": 0.0,
                "prompt_tokens": None,
                "completion_tokens": None,
                "chunks_sent": 0,
                "client_disconnected": False,
            }
        try:
            self._chat_answer(config, body, entry, started)
            self._drip_s = None
        except Fault as fault:
            self._drip_s = None
            entry["status"] = fault.status
            self._send_fault(fault)
        except _ClientGone:
            entry["client_disconnected"] = True
        finally:
            entry["duration_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
            with state.lock:
                if state.generation == generation:  # else: reconfigured meanwhile, log is new
                    state.log.append(entry)
                    state.in_flight -= 1
                    state.settled.notify_all()

    def _chat_answer(
        self, config: MockServerConfig, body: Any, entry: dict[str, Any], started: float
    ) -> None:
        state = self.server.state
        if not isinstance(body, dict):
            raise error_answer(
                400, "the request body must be a JSON object", "invalid_request_error"
            )
        model = body.get("model")
        stream = body.get("stream") is True and not config.ignore_stream
        entry["model"] = model
        entry["stream"] = stream
        self._check_key(config)
        if not isinstance(model, str) or model not in config.models:
            entry["fault"] = "unknown-model"
            raise self._unknown_model(str(model))
        if config.reject_max_tokens and "max_tokens" in body:
            entry["fault"] = "reject-max-tokens"
            raise error_answer(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "invalid_request_error",
                code="unsupported_parameter",
                param="max_tokens",
            )
        try:
            messages = chat_messages(body.get("messages"))
        except ValueError as exc:
            raise error_answer(400, str(exc), "invalid_request_error", param="messages") from None
        max_tokens = (
            body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        )
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise error_answer(
                400, "max_tokens must be a positive integer", "invalid_request_error"
            )

        with state.lock:
            fault = next(
                (name for name in _FAULTS if state.budgets.take(name)),
                None,
            )
        if fault in ("fail_429", "fail_500"):
            entry["fault"] = fault.removeprefix("fail_")
            raise status_fault(fault, config)

        if fault in ("stall", "huge", "endless_headers"):
            self._answer_never_ends(fault, config, model, stream, entry)
            return
        if fault == "drip":
            entry["fault"] = "drip"
            self._drip_s = config.drip_interval_s

        if config.delay_s and self.server.stopping.wait(config.delay_s):
            raise error_answer(503, "the mock server is shutting down", "server_error")

        summarizer = MockSummarizer()
        prompt_tokens = summarizer.request_tokens(messages, "")
        entry["prompt_tokens"] = prompt_tokens
        limit = config.context_limit_tokens
        if limit is not None and prompt_tokens > limit:
            entry["fault"] = "context-limit"
            raise overflow_fault(config.overflow_style, limit, prompt_tokens, max_tokens)

        if fault == "malformed":
            entry["fault"] = f"malformed-{config.malformed_kind}"
            self._send_malformed(config.malformed_kind, stream, model)
            return

        head, prompt = split_prompt(messages)
        text = summarizer.write(head, prompt, max_tokens)
        completion_tokens = estimate_chars4(text)
        entry["completion_tokens"] = completion_tokens
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        dropped = fault == "drop"
        if dropped:
            entry["fault"] = f"drop-{config.drop_mode}"
        if stream:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            self._stream(config, model, text, usage if include_usage else None, entry, dropped)
        else:
            self._complete(config, model, text, usage, entry, dropped, started)

    def _complete(
        self,
        config: MockServerConfig,
        model: str,
        text: str,
        usage: dict[str, int],
        entry: dict[str, Any],
        dropped: bool,
        started: float,
    ) -> None:
        answer: dict[str, Any] = {
            "id": f"chatcmpl-mock-{entry['n']}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
        if config.send_usage:
            answer["usage"] = usage
        payload = orjson.dumps(answer)
        duration_ms = (time.perf_counter() - started) * 1000.0
        headers = {"X-Mock-Duration-Ms": f"{duration_ms:.3f}"}
        if not dropped:
            self._send_json(200, None, headers, raw=payload)
            return
        # Promise the whole body, send half, close: the client sees a dropped connection.
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self._write(payload[: len(payload) // 2])
        self._drop_connection()

    def _stream(
        self,
        config: MockServerConfig,
        model: str,
        text: str,
        usage: dict[str, int] | None,
        entry: dict[str, Any],
        dropped: bool,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": f"chatcmpl-mock-{entry['n']}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def chunk(choices: list[dict[str, Any]], usage_value: Any = None) -> dict[str, Any]:
            data = {**base, "choices": choices}
            if usage is not None:
                data["usage"] = usage_value
            return data

        events: list[dict[str, Any]] = [
            chunk(
                [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
            )
        ]
        events.extend(
            chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
            for piece in pieces(text, config.chunk_chars)
        )
        events.append(chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
        if usage is not None and config.send_usage:
            events.append(chunk([], usage))
        for index, event in enumerate(events):
            if dropped and index >= config.drop_after_chunks:
                if config.drop_mode == "close":
                    self._drop_connection()
                else:
                    self._write(b"0\r\n\r\n")  # a clean end of body, but no finish and no [DONE]
                return
            if index and config.chunk_delay_s and self.server.stopping.wait(config.chunk_delay_s):
                self._drop_connection()
                return
            self._send_event(orjson.dumps(event))
            entry["chunks_sent"] = index + 1
        self._send_event(b"[DONE]")
        self._write(b"0\r\n\r\n")

    def _send_huge(
        self, config: MockServerConfig, model: str, stream: bool, entry: dict[str, Any]
    ) -> None:
        """An answer of ``config.huge_bytes`` characters, written piece by piece."""
        size = config.huge_bytes
        piece = b"lorem ipsum dolor sit amet " * 2400  # about 64 KB
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            sent = 0
            while sent < size:
                text = piece[: min(len(piece), size - sent)].decode()
                delta = {"index": 0, "delta": {"content": text}, "finish_reason": None}
                self._send_event(orjson.dumps({"model": model, "choices": [delta]}))
                sent += len(text)
                entry["chunks_sent"] += 1
            done = {"index": 0, "delta": {}, "finish_reason": "stop"}
            self._send_event(orjson.dumps({"model": model, "choices": [done]}))
            self._send_event(b"[DONE]")
            self._write(b"0\r\n\r\n")
            return
        head = b'{"id":"chatcmpl-mock-huge","object":"chat.completion","model":' + orjson.dumps(
            model
        )
        head += b',"choices":[{"index":0,"message":{"role":"assistant","content":"'
        tail = b'"},"finish_reason":"stop"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(head) + size + len(tail)))
        self.end_headers()
        self._write(head)
        sent = 0
        while sent < size:
            chunk = piece[: min(len(piece), size - sent)]
            self._write(chunk)
            sent += len(chunk)
        self._write(tail)

    def _send_event(self, data: bytes) -> None:
        event = b"data: " + data + b"\n\n"
        self._write(b"%x\r\n%s\r\n" % (len(event), event))

    def _send_malformed(self, kind: MalformedKind, stream: bool, model: str) -> None:
        if kind == "html":
            page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self._write(page)
            return
        if kind == "no-choices":
            answer = {"id": "chatcmpl-mock", "object": "chat.completion", "model": model}
            if not stream:
                self._send_json(200, answer)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._send_event(orjson.dumps({**answer, "object": "chat.completion.chunk"}))
            self._send_event(b"[DONE]")
            self._write(b"0\r\n\r\n")
            return
        if not stream:
            self._send_json(
                200, None, raw=b'{"id": "chatcmpl-mock", "choices": [{"message": {"content": "cut'
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._send_event(b'{"id": "chatcmpl-mock", "choices": [{"delta": {"content": "cut')
        self._send_event(b"[DONE]")
        self._write(b"0\r\n\r\n")

    def _drop_connection(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        raise _ClientGone()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    state: _State
    quiet: bool
    stopping: threading.Event
    _connections: set[socket.socket]
    _connections_lock: threading.Lock

    def track(self, connection: socket.socket, alive: bool) -> None:
        with self._connections_lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _Server6(_Server):
    address_family = socket.AF_INET6


class MockLLMServer:
    """The mock server, run in a background thread (``with MockLLMServer() as server: server.url``).

    Binds ``host:port`` at construction (port 0 picks a free one; raises ``OSError`` when the
    address is taken). :meth:`configure` changes the faults of a running server.
    """

    _server_classes: ClassVar[dict[int, type[_Server]]] = {
        socket.AF_INET: _Server,
        socket.AF_INET6: _Server6,
    }

    def __init__(
        self,
        config: MockServerConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server = self._server_classes[family]((host.strip("[]"), port), _Handler)
        server.state = _State(config or MockServerConfig())
        server.quiet = quiet
        server.stopping = threading.Event()
        server._connections = set()
        server._connections_lock = threading.Lock()
        self._server = server
        self._thread: threading.Thread | None = None
        self._serving = threading.Event()
        self.host = host.strip("[]")
        self.port: int = server.server_address[1]

    @property
    def url(self) -> str:
        """The OpenAI base URL of this server, e.g. ``http://127.0.0.1:8765/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def config(self) -> MockServerConfig:
        """The configuration in force."""
        return self._server.state.config

    def configure(self, config: MockServerConfig) -> None:
        """Serve ``config`` from now on; fault budgets and the request log start again."""
        self._server.state.apply(config)

    def reset(self) -> None:
        """Back to the start-up configuration, with fresh budgets and an empty log."""
        self._server.state.apply(self._server.state.startup)

    def requests(self) -> list[dict[str, Any]]:
        """One entry per chat request since the last (re)configuration."""
        return self._server.state.finished_log()

    def start(self) -> MockLLMServer:
        """Serve in a daemon thread; returns self."""
        if self._thread is None:
            self._serving.set()  # before the thread runs, so an immediate stop() still shuts down
            self._thread = threading.Thread(target=self.serve_forever, name="mock-llm", daemon=True)
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop` is called from another one."""
        self._serving.set()
        try:
            self._server.serve_forever()
        finally:
            self._serving.clear()

    def stop(self) -> None:
        """Stop serving, cut waits short, close open connections and the listening socket."""
        self._server.stopping.set()
        if self._serving.is_set():
            self._server.shutdown()
        self._server.close_connections()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
