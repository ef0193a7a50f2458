"""A live summariser: any OpenAI-compatible chat-completions endpoint, through the ``openai`` SDK.

Only :func:`core.llm.make_summarizer` imports this module, and only when a live LLM is
configured, so ``import core`` never loads ``openai``.

What it adds to the bare SDK (whose own retries are switched off, ``max_retries=0``, so every
retry here is explicit and testable):

* **Retries** on 429, 408/409 and 5xx, and on a connection that drops mid-response, with
  exponential backoff and jitter; ``Retry-After`` / ``retry-after-ms`` are honoured exactly. The
  total time spent waiting is capped. A dropped stream is retried from scratch: a partial summary
  is never returned as final.
* **One-line errors** mapped onto :mod:`core.llm`'s classes (auth, model not found, unreachable,
  malformed, rate limit, server, context overflow) with the API key scrubbed out of every message.
* **Usage** from the server when it reports it, else counted here (provenance ``counted`` or
  ``estimated``).
* **Cancellation**: cancelling the awaiting task closes the stream/request at once.

The API key is read from the environment variable ``config.api_key_env`` when a client is built;
it is never put in this object's repr, in an exception, a log line or anything saved.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import openai
import orjson

from core.agents.overflow_errors import is_context_overflow_code, is_context_overflow_message
from core.llm.budget import FailureBudget
from core.llm.deadline import RequestDeadline, request_deadline
from core.llm.live_errors import (
    KEY_LIKE_RE,
    REDACTED,
    TRANSPORT_ERRORS,
    UNREACHABLE_CAUSES,
    ParameterRejected,
    Retryable,
    cause_names,
    is_loopback,
    one_line,
    parse_retry_after,
    safe_url,
)
from core.llm.live_stream import Attempt, CallbackError, DeltaRelay, StreamGuard
from core.llm.protocol import (
    AnswerTooLargeError,
    AuthError,
    ChatMessage,
    ContextOverflowError,
    DeltaCallback,
    LLMError,
    LLMUsage,
    MalformedResponseError,
    ModelNotFoundError,
    RateLimitError,
    ServerError,
    SummaryResult,
    UnreachableError,
)
from core.llm.transport import AnswerTooLarge, CappedBody, transport_reason
from core.model.tokens import EstimatorError, get_counter
from core.policy import LLMConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_PLACEHOLDER_KEY = "ctxscope-local-no-key"
"""Sent to a loopback endpoint when the key variable is unset (local servers ignore it)."""
BACKOFF_BASE_S = 0.5
"""First backoff wait; doubled on each retry."""
BACKOFF_MAX_S = 20.0
"""Longest single backoff wait (a server's Retry-After may ask for more, within the budget)."""
MAX_TOTAL_WAIT_S = 60.0
"""Cap on the time one summary request spends waiting between retries."""
USAGE_ESTIMATOR = "tiktoken:cl100k_base"
"""How tokens are counted when the server reports no usage."""
_log = logging.getLogger("ctxscope.llm")
_log.addHandler(logging.NullHandler())  # silent unless the application configures logging


@dataclass
class _Answer:
    text: str
    finish_reason: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None


@dataclass
class _StreamState:
    pieces: list[str] = field(default_factory=list)
    finish: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


def _read_usage(usage: Any) -> tuple[int | None, int | None] | None:
    """(prompt_tokens, completion_tokens) of a ``usage`` object, None when it says nothing."""
    if not isinstance(usage, dict):
        return None
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    prompt_tokens = prompt if isinstance(prompt, int) and prompt >= 0 else None
    completion_tokens = completion if isinstance(completion, int) and completion >= 0 else None
    if prompt_tokens is None and completion_tokens is None:
        return None
    return prompt_tokens, completion_tokens


class OpenAISummarizer:
    """Summaries from an OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM,
    llama.cpp, Ollama, ``ctxscope mock-llm``).

    ``config`` gives the base URL, model, name of the key's environment variable, temperature,
    output cap, timeout, retry count and whether to stream. The keyword arguments tune the retry
    loop (tests shorten the waits; ``sleep`` and ``rng`` can be replaced to observe them).
    """

    name: str

    def __init__(
        self,
        config: LLMConfig,
        *,
        backoff_base_s: float = BACKOFF_BASE_S,
        backoff_max_s: float = BACKOFF_MAX_S,
        max_total_wait_s: float = MAX_TOTAL_WAIT_S,
        usage_estimator: str = USAGE_ESTIMATOR,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if not config.model:
            raise ModelNotFoundError(
                "no model configured for the live LLM (set llm.model or --model)"
            )
        base_url = (config.base_url or DEFAULT_BASE_URL).strip()
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UnreachableError(
                f"the LLM base URL must look like http://host:port/v1, got {safe_url(base_url)!r}"
            )
        self._config = config
        self._base_url = base_url.rstrip("/")
        self._where = safe_url(base_url)
        self._loopback = is_loopback(parts.hostname)
        self._model: str = config.model
        self.name = f"openai:{self._model}"
        self._backoff_base_s = backoff_base_s
        self._backoff_max_s = backoff_max_s
        self._max_total_wait_s = max_total_wait_s
        self._usage_estimator = usage_estimator
        self._sleep = sleep
        self._rng = rng
        # One SDK client per event loop: building one costs tens of milliseconds (TLS setup), and
        # its connection pool belongs to the loop that first used it.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._clients_lock = threading.Lock()
        # Request parameters the server refused (e.g. o-series models and ``max_tokens``).
        self._use_max_completion_tokens = False
        self._send_temperature = True
        self._send_stream_options = True
        self.budget = FailureBudget(
            config.max_consecutive_failures, self._where, config.max_failing_s
        )
        """This summariser's failures in a row (the replay keeps one summariser per run)."""
        self._requests = 0
        self._numbers_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"OpenAISummarizer(base_url={self._where!r}, model={self._model!r}, "
            f"api_key_env={self._config.api_key_env!r}, stream={self._config.stream})"
        )

    __str__ = __repr__

    @property
    def base_url(self) -> str:
        """The endpoint, without any credentials embedded in it."""
        return self._where

    @property
    def model(self) -> str:
        """The model name sent to the endpoint."""
        return self._model

    # -- the API key -------------------------------------------------------------------------

    def _read_key(self) -> tuple[str, bool]:
        """The key and whether it is real (else the loopback placeholder)."""
        key = os.environ.get(self._config.api_key_env, "").strip()
        if key:
            return key, True
        if self._loopback:
            return LOOPBACK_PLACEHOLDER_KEY, False
        raise AuthError(
            f"no API key for {self._where}: set the environment variable {self._config.api_key_env}"
        )

    def _scrub(self, text: str) -> str:
        """``text`` with our key (and anything that looks like a key) removed, on one line."""
        keys = {os.environ.get(self._config.api_key_env, "").strip()}
        with self._clients_lock:  # a key read earlier, if the variable has changed since
            keys.update(client.api_key for client in self._clients.values())
        for key in sorted(keys, key=len, reverse=True):
            if len(key) >= 4:
                text = text.replace(key, REDACTED)
        text = KEY_LIKE_RE.sub(REDACTED, text)
        return one_line(text)

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        key, _real = self._read_key()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None or client.api_key != key:
                client = openai.AsyncOpenAI(
                    api_key=key,
                    base_url=self._base_url,
                    timeout=self._config.timeout_s,
                    max_retries=0,
                )
                self._clients[loop] = client
            return client

    async def aclose(self) -> None:
        """Close the connections this summariser opened on the running event loop."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    # -- the request -------------------------------------------------------------------------

    def _request(
        self, messages: Sequence[ChatMessage], prompt: str, max_tokens: int
    ) -> dict[str, Any]:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        chat.append({"role": "user", "content": prompt})
        cap = self._config.max_tokens or max_tokens
        params: dict[str, Any] = {"model": self._model, "messages": chat}
        params["max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"] = cap
        if self._send_temperature:
            params["temperature"] = self._config.temperature
        return params

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        """Ask the endpoint for a summary of ``messages`` following ``prompt``.

        Streams when ``config.stream`` (``on_delta`` gets each piece; without streaming it gets
        the whole text once). Raises an :class:`core.llm.LLMError` subclass with a one-line
        message; never returns a partial summary. The whole request, retries included, ends
        within ``config.timeout_s`` and within what is left of the run's ``max_failing_s``
        (:mod:`core.llm.deadline`); once ``config.max_consecutive_failures`` requests in a row
        have failed, or failures in a row took ``max_failing_s``, nothing more is sent
        (:class:`~core.llm.protocol.StoppedCallingError`).
        """
        self.budget.check()
        deadline = request_deadline(self._config, self.budget)
        with self._numbers_lock:
            self._requests += 1
            number = self._requests
        _log.info(
            "summary request %d: asking %s (model %s, deadline %gs)",
            number,
            self._where,
            self._model,
            deadline.seconds,
            extra={"llm_event": "request"},
        )
        started = time.perf_counter()
        attempt = Attempt(DeltaRelay(on_delta))
        try:
            result = await self._summarize(
                messages, prompt, max_tokens, on_delta, (attempt, deadline)
            )
        except CallbackError as exc:
            raise exc.original from None
        except LLMError as exc:
            failure = exc
        else:
            self.budget.record_success()
            _log.info(
                "summary request %d: answered in %.1fs",
                number,
                result.duration_s,
                extra={"llm_event": "succeeded"},
            )
            return result
        seconds = time.perf_counter() - started
        if attempt.out_of_time:  # it had its whole deadline, whatever the clocks say
            seconds = max(seconds, deadline.seconds)
        self._note_failure(number, failure, seconds)
        # Raised here, outside the handler, as a fresh exception: no __context__/__cause__ chain
        # leads back to the SDK's exception (whose text and request may carry the key).
        raise type(failure)(str(failure))

    def _note_failure(self, number: int, failure: LLMError, seconds: float) -> None:
        """Log a failed request and count it against the run's budget (an overflow is no
        failure of the endpoint: compaction sends less and asks again)."""
        if isinstance(failure, ContextOverflowError):
            _log.info(
                "summary request %d: too large for the model's context",
                number,
                extra={"llm_event": "overflow"},
            )
            return
        _log.warning(
            "summary request %d failed after %.1fs: %s",
            number,
            seconds,
            failure,
            extra={"llm_event": "failed", "llm_error": str(failure)},
        )
        if self.budget.record_failure(failure, seconds):
            _log.error(
                "stopped calling %s after %d failed summary requests in a row (%.1fs; "
                "max_consecutive_failures %d, max_failing_s %g); the remaining compactions fail "
                "without a request",
                self._where,
                self.budget.consecutive,
                self.budget.failing_s,
                self.budget.limit,
                self._config.max_failing_s,
                extra={"llm_event": "stopped"},
            )

    async def _summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        on_delta: DeltaCallback | None,
        request: tuple[Attempt, RequestDeadline],
    ) -> SummaryResult:
        started = time.perf_counter()
        client = self._client()
        attempt, deadline = request
        try:
            async with asyncio.timeout(deadline.seconds) as timer:
                answer = await self._attempts(
                    client, messages, prompt, max_tokens, attempt, (started, deadline)
                )
        except TimeoutError:
            if not timer.expired():
                raise
            attempt.out_of_time = True
            raise deadline.passed(self._where, attempt.progress()) from None
        if not answer.text.strip():
            raise MalformedResponseError(f"{self._where} returned an empty summary")
        if answer.finish_reason == "length":
            _log.warning(
                "%s: the summary stopped at the output cap (finish_reason=length)", self._where
            )
        if not self._config.stream and on_delta is not None:
            on_delta(answer.text)  # the whole text once: the caller sees it the same way
        return SummaryResult(
            text=answer.text,
            usage=self._usage(answer, messages, prompt),
            model=answer.model or self._model,
            duration_s=time.perf_counter() - started,
            retries=attempt.retries,
        )

    async def _attempts(
        self,
        client: openai.AsyncOpenAI,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        attempt: Attempt,
        clock: tuple[float, RequestDeadline],
    ) -> _Answer:
        """Send the request until an answer comes back, retrying what is worth retrying
        (``clock``: when the request started and its deadline)."""
        waited_s = 0.0
        adapted: set[str] = set()
        while True:
            params = self._request(messages, prompt, max_tokens)
            try:
                if self._config.stream:
                    return await self._stream_once(client, params, attempt)
                return await self._complete_once(client, params, attempt)
            except ParameterRejected as rejected:
                if rejected.parameter in adapted:
                    raise LLMError(f"{self._where} rejected the request: {rejected}") from None
                adapted.add(rejected.parameter)
                self._adapt(rejected.parameter)
                _log.info("%s: %s; resending without it", self._where, rejected)
            except Retryable as failure:
                delay = self._next_wait(failure, attempt, waited_s, clock)
                attempt.retries += 1
                _log.warning(
                    "%s: %s; retry %d of %d in %.2fs",
                    self._where,
                    failure.detail,
                    attempt.retries,
                    self._config.max_retries,
                    delay,
                )
                await self._sleep(delay)
                waited_s += delay

    def _next_wait(
        self,
        failure: Retryable,
        attempt: Attempt,
        waited_s: float,
        clock: tuple[float, RequestDeadline],
    ) -> float:
        """The wait before the next retry; raises when no retry is left or the wait would pass
        the wait budget or the request's deadline (``clock``: its start and its deadline)."""
        retries = attempt.retries
        if retries >= self._config.max_retries:
            raise self._exhausted(failure, retries) from None
        delay = self._backoff(failure, retries)
        if waited_s + delay > self._max_total_wait_s:
            note = (
                f"waiting {delay:.1f}s more would pass the {self._max_total_wait_s:g}s wait budget"
            )
            raise self._exhausted(failure, retries, note=note) from None
        started, deadline = clock
        if time.perf_counter() - started + delay >= deadline.seconds:
            attempt.out_of_time = True
            which = "max_failing_s" if deadline.run_budget else "timeout_s"
            note = (
                f"waiting {delay:.1f}s more would pass the {deadline.seconds:g}s deadline ({which})"
            )
            raise self._exhausted(failure, retries, note=note) from None
        return delay

    def _adapt(self, parameter: str) -> None:
        if parameter == "max_tokens":
            self._use_max_completion_tokens = True
        elif parameter == "temperature":
            self._send_temperature = False
        elif parameter == "stream_options":
            self._send_stream_options = False

    def _backoff(self, failure: Retryable, retries: int) -> float:
        if failure.retry_after_s is not None:
            return failure.retry_after_s
        ceiling = min(self._backoff_max_s, self._backoff_base_s * float(2**retries))
        return ceiling * (0.5 + 0.5 * self._rng())

    def _exhausted(self, failure: Retryable, retries: int, note: str | None = None) -> LLMError:
        tries = f"after {retries} {'retry' if retries == 1 else 'retries'}"
        why = f"{tries} ({note})" if note else tries
        if failure.kind == "rate_limit":
            return RateLimitError(
                f"{self._where}: still rate-limited (HTTP 429) {why}: {failure.detail}"
            )
        if failure.kind == "dropped":
            return ServerError(
                f"{self._where}: the answer was cut off {why}, no partial summary was kept; "
                f"last attempt: {failure.detail}"
            )
        status = f"HTTP {failure.status}" if failure.status else "server error"
        return ServerError(f"{self._where}: still failing ({status}) {why}: {failure.detail}")

    async def _stream_once(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], attempt: Attempt
    ) -> _Answer:
        relay = attempt.relay
        relay.start_attempt()
        extra: dict[str, Any] = {"stream": True}
        if self._send_stream_options:
            extra["stream_options"] = {"include_usage": True}
        # The SDK builds, authenticates and sends the request and maps HTTP errors; the body is
        # read raw: building an SDK model per chunk costs ~1 ms, a summary streams hundreds.
        create: Any = client.chat.completions.with_streaming_response.create
        guard = StreamGuard(self._config.first_byte_timeout_s, self._config.stall_timeout_s)
        try:
            async with guard, create(**params, **extra) as response:
                guard.first_byte()
                body = attempt.start(response, self._config.max_answer_bytes)
                content_type = response.headers.get("content-type", "")
                if "json" in content_type and "event-stream" not in content_type:
                    # A server that ignores stream=true and answers in one piece.
                    data = await self._read_body(body, guard.progress)
                    answer = self._completion_answer(data, content_type)
                    relay.feed(answer.text)
                    return answer
                return await self._read_events(body, relay, content_type, guard.progress)
        except openai.OpenAIError as exc:
            raise self._translate(exc) from None
        except TimeoutError:
            if not guard.timeout.expired():
                raise  # the request's own deadline (timeout_s): _summarize says so
            raise UnreachableError(f"{self._where}: {guard.reason(attempt)}") from None

    async def _complete_once(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], attempt: Attempt
    ) -> _Answer:
        create: Any = client.chat.completions.with_streaming_response.create
        # No first-byte deadline: a server answering in one piece sends its headers once the
        # whole answer is written. Once they came, the body must not stall.
        guard = StreamGuard(None, self._config.stall_timeout_s)
        try:
            async with create(**params) as response:
                body = attempt.start(response, self._config.max_answer_bytes)
                content_type = response.headers.get("content-type", "")
                async with guard:
                    guard.first_byte()
                    data = await self._read_body(body, guard.progress)
                return self._completion_answer(data, content_type)
        except openai.OpenAIError as exc:
            raise self._translate(exc) from None
        except TimeoutError:
            if not guard.timeout.expired():
                raise  # the request's deadline: _summarize says so
            raise UnreachableError(f"{self._where}: {guard.reason(attempt)}") from None

    async def _read_body(
        self, body: CappedBody, progress: Callable[[], None] | None = None
    ) -> bytes:
        try:
            return await body.read(progress)
        except Exception as exc:
            raise self._transport_failure(exc, body) from None

    def _transport_failure(self, exc: Exception, body: CappedBody) -> Exception:
        """What a failure while reading a response body means (a dropped connection, mostly)."""
        if isinstance(exc, AnswerTooLarge):
            return AnswerTooLargeError(
                f"{self._where}: the answer passed max_answer_bytes ({exc}); "
                "reading stopped, no summary was kept"
            )
        names = {cls.__name__ for cls in type(exc).__mro__}
        if isinstance(exc, (LLMError, Retryable, CallbackError)) or not (
            names & TRANSPORT_ERRORS or isinstance(exc, OSError)
        ):
            return exc
        if "TimeoutException" in names:
            return UnreachableError(
                f"{self._where}: no answer within {self._config.timeout_s:g}s "
                f"(timeout; {body.received:,} bytes had arrived)"
            )
        reason = self._scrub(transport_reason(exc))
        return Retryable(
            "dropped", f"the connection dropped after {body.received:,} bytes ({reason})"
        )

    async def _read_events(
        self,
        body: CappedBody,
        relay: DeltaRelay,
        content_type: str,
        progress: Callable[[], None] | None = None,
    ) -> _Answer:
        """Read a server-sent-events body of chat-completion chunks until ``[DONE]``;
        ``progress`` is called at each line (the stall deadline starts again)."""
        stream = _StreamState()
        data_lines: list[str] = []
        events = 0
        try:
            async for line in body.lines():
                if progress is not None:
                    progress()
                if line:
                    if line.startswith(":"):  # a comment: keep-alive pings (OpenRouter)
                        continue
                    field, _, value = line.partition(":")
                    if field == "data":
                        data_lines.append(value[1:] if value.startswith(" ") else value)
                    continue  # event:, id:, retry: carry nothing we need
                if data_lines:
                    events += 1
                    data, data_lines = "\n".join(data_lines), []
                    if self._on_event(data, stream, relay):
                        break
            else:
                if data_lines:
                    events += 1
                    self._on_event("\n".join(data_lines), stream, relay)
        except Exception as exc:
            raise self._transport_failure(exc, body) from None
        if stream.finish is None:
            if events == 0 and "event-stream" not in content_type:
                raise MalformedResponseError(
                    f"{self._where} did not stream server-sent events "
                    f"(content-type {content_type or 'missing'!r})"
                )
            raise Retryable(
                "dropped",
                f"the stream ended after {body.received:,} bytes, before the summary was finished",
            )
        return _Answer(
            "".join(stream.pieces),
            stream.finish,
            stream.model,
            stream.input_tokens,
            stream.output_tokens,
        )

    def _on_event(self, data: str, stream: _StreamState, relay: DeltaRelay) -> bool:
        """Take one event's data into ``stream``; True at ``[DONE]``."""
        if data.strip() == "[DONE]":
            return True
        chunk = self._decode(data.encode(), "text/event-stream", what="streamed a chunk")
        model = chunk.get("model")
        if isinstance(model, str):
            stream.model = model
        usage = _read_usage(chunk.get("usage"))
        if usage is not None:
            stream.input_tokens, stream.output_tokens = usage
        choices = chunk.get("choices")
        if choices is None:
            if usage is None:  # a usage-only chunk may omit choices; anything else must not
                raise MalformedResponseError(
                    f"{self._where} streamed a chunk without choices: {self._scrub(data)[:80]!r}"
                )
            return False
        if not isinstance(choices, list):
            raise MalformedResponseError(
                f"{self._where} streamed a chunk whose choices is not a list"
            )
        for choice in choices:
            if not isinstance(choice, dict):
                raise MalformedResponseError(f"{self._where} streamed a malformed choice")
            if choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta") or {}
            piece = delta.get("content") if isinstance(delta, dict) else None
            if piece is not None and not isinstance(piece, str):
                raise MalformedResponseError(
                    f"{self._where} streamed a delta whose content is not text"
                )
            if piece:
                stream.pieces.append(piece)
                relay.feed(piece)
            reason = choice.get("finish_reason")
            if reason:
                stream.finish = str(reason)
        return False

    def _decode(self, body: bytes, content_type: str, *, what: str) -> dict[str, Any]:
        """``body`` as a JSON object; an error object in it raises what it stands for."""
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            shown = self._scrub(body[:60].decode("utf-8", "replace"))
            raise MalformedResponseError(
                f"{self._where} {what} that is not JSON (content-type "
                f"{content_type or 'missing'!r}): {shown!r}"
            ) from None
        if not isinstance(value, dict):
            raise MalformedResponseError(f"{self._where} {what} that is not a JSON object")
        error = value.get("error")
        if error:
            raise self._error_in_body(error)
        return value

    def _error_in_body(self, error: Any) -> Exception:
        """An error object sent with status 200 or inside a stream."""
        message = error.get("message") if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        detail = self._scrub(str(message or error))
        if is_context_overflow_code(code) or is_context_overflow_message(detail):
            return ContextOverflowError(
                f"{self._where}: the request exceeds the model's context: {detail}"
            )
        return Retryable("server", f"error in the answer: {detail}")

    def _completion_answer(self, body: bytes, content_type: str) -> _Answer:
        completion = self._decode(body, content_type, what="answered with something")
        choices = completion.get("choices")
        if not isinstance(choices, list) or not choices:
            raise MalformedResponseError(f"{self._where} answered without any choices")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise MalformedResponseError(f"{self._where} answered a choice without a message")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise MalformedResponseError(
                f"{self._where} answered a message whose content is not text"
            )
        finish = choice.get("finish_reason")
        model = completion.get("model")
        usage = _read_usage(completion.get("usage"))
        return _Answer(
            content,
            str(finish) if finish else None,
            model if isinstance(model, str) else None,
            usage[0] if usage else None,
            usage[1] if usage else None,
        )

    # -- errors --------------------------------------------------------------------------------

    def _translate(self, exc: openai.OpenAIError, *, mid_stream: bool = False) -> Exception:
        """The :class:`LLMError` (or internal retry signal) an SDK exception stands for."""
        if isinstance(exc, openai.APITimeoutError):
            return UnreachableError(
                f"{self._where}: no answer within {self._config.timeout_s:g}s (timeout)"
            )
        if isinstance(exc, openai.APIConnectionError):
            reason = self._scrub(transport_reason(exc))
            if not mid_stream and cause_names(exc) & UNREACHABLE_CAUSES:
                return UnreachableError(f"cannot connect to {self._where}: {reason}")
            return Retryable("dropped", f"the connection dropped before an answer ({reason})")
        if isinstance(exc, openai.APIResponseValidationError):
            return MalformedResponseError(
                f"{self._where} answered with something that is not a chat completion ({self._scrub(exc.message)})"
            )
        if isinstance(exc, openai.APIStatusError):
            return self._translate_status(exc)
        if isinstance(exc, openai.APIError):  # an error event inside a stream
            detail = self._detail(exc)
            if is_context_overflow_code(exc.code) or is_context_overflow_message(detail):
                return ContextOverflowError(
                    f"{self._where}: the request exceeds the model's context: {detail}"
                )
            return Retryable("server", f"error event in the stream: {detail}")
        return LLMError(f"{self._where}: {self._scrub(str(exc)) or type(exc).__name__}")

    def _detail(self, exc: openai.APIError) -> str:
        body = exc.body
        message: Any = None
        if isinstance(body, dict):
            message = body.get("message") or body.get("detail") or body.get("error")
        elif isinstance(body, str):
            message = body
        if not isinstance(message, str) or not message.strip():
            message = exc.message
        return self._scrub(str(message))

    def _translate_status(self, exc: openai.APIStatusError) -> Exception:
        status = exc.status_code
        detail = self._detail(exc)
        code = exc.code
        body_text = detail
        if isinstance(exc.body, dict):
            body_text = f"{detail} {exc.body.get('type') or ''} {code or ''}"
        if is_context_overflow_code(code) or (
            status in (400, 413, 422) and is_context_overflow_message(body_text)
        ):
            return ContextOverflowError(
                f"{self._where}: the request exceeds the model's context (HTTP {status}): {detail}"
            )
        if status == 413:
            return ContextOverflowError(
                f"{self._where}: the request is too large (HTTP 413): {detail}"
            )
        if status in (401, 403):
            _key, real = self._read_key()
            hint = (
                f"check the key in {self._config.api_key_env}"
                if real
                else f"set the environment variable {self._config.api_key_env}"
            )
            return AuthError(
                f"{self._where} refused the credentials (HTTP {status}; {hint}): {detail}"
            )
        if status == 404 or code == "model_not_found":
            return ModelNotFoundError(
                f"{self._where} does not serve model {self._model!r} (HTTP {status}; check the model "
                f"name and that the base URL ends in /v1): {detail}"
            )
        if status == 429:
            if code == "insufficient_quota":
                return RateLimitError(f"{self._where}: quota exhausted (HTTP 429): {detail}")
            return Retryable(
                "rate_limit",
                detail,
                status=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        if status in (408, 409) or status >= 500:
            return Retryable(
                "server",
                f"HTTP {status}: {detail}",
                status=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        if status == 400:
            rejected = self._rejected_parameter(exc, detail)
            if rejected is not None:
                return ParameterRejected(rejected, f"the server does not accept {rejected!r}")
        return LLMError(f"{self._where} rejected the request (HTTP {status}): {detail}")

    @staticmethod
    def _rejected_parameter(exc: openai.APIStatusError, detail: str) -> str | None:
        lowered = detail.lower()
        if not any(word in lowered for word in ("unsupported", "unrecognized", "not supported")):
            return None
        for parameter in ("max_tokens", "temperature", "stream_options"):
            if exc.param == parameter or f"'{parameter}'" in detail or f"`{parameter}`" in detail:
                return parameter
        return None

    def _usage(self, answer: _Answer, messages: Sequence[ChatMessage], prompt: str) -> LLMUsage:
        if answer.input_tokens is not None and answer.output_tokens is not None:
            return LLMUsage(input_tokens=answer.input_tokens, output_tokens=answer.output_tokens)
        try:
            counter = get_counter(self._usage_estimator)
        except EstimatorError:
            counter = get_counter("chars/4")
        input_tokens = answer.input_tokens
        if input_tokens is None:
            input_tokens = sum(counter.count_many([m.content for m in messages])) + counter.count(
                prompt
            )
        output_tokens = answer.output_tokens
        if output_tokens is None:
            output_tokens = counter.count(answer.text)
        return LLMUsage(
            input_tokens=input_tokens, output_tokens=output_tokens, provenance=counter.provenance
        )
