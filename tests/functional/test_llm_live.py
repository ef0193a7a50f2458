"""The live summariser (``core.llm.live``) over real HTTP against ``ctxscope mock-llm``.

One mock server runs in a subprocess for the whole module; each test sets its faults with
``POST /_mock/config``. Retry waits are shortened through the summariser's backoff options (and
the mock's ``retry_after_s``); the tests assert on what happened, never on how long it took.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from core.agents.overflow_errors import is_context_overflow_code, is_context_overflow_message
from core.llm.factory import make_summarizer
from core.llm.live import OpenAISummarizer
from core.llm.live_errors import Retryable, parse_retry_after
from core.llm.live_stream import DeltaRelay
from core.llm.mock import MockSummarizer
from core.llm.protocol import (
    AuthError,
    ChatMessage,
    ContextOverflowError,
    LLMError,
    MalformedResponseError,
    ModelNotFoundError,
    RateLimitError,
    ServerError,
    Summarizer,
    UnreachableError,
)
from core.llm.transport import AnswerTooLarge, CappedBody
from core.model.session import Provenance
from core.policy import LLMConfig, Policy, PruningPolicy
from tests.support.builders import SessionBuilder
from tests.support.mock_llm import MockLLMProcess

MODEL = "ctxscope-mock"
KEY_ENV = "CTXSCOPE_TEST_LLM_KEY"
PROMPT = "Summarise the conversation.\n\n## Goal\n\n## Instructions\n\n## Discoveries\n\n## Relevant files\n"
HEAD = [
    ChatMessage(role="system", content="You write summaries of coding sessions."),
    ChatMessage(
        role="user",
        content="Fix the crash in core/algorithms/split.py when the session is empty.\nNever change the API.",
    ),
    ChatMessage(role="assistant", content="I found the cause: the walk reads messages[-1] first."),
]
MAX_TOKENS = 400


def expected_text() -> str:
    """What the offline mock writes for the same request (the server answers with it)."""
    return MockSummarizer().write(HEAD, PROMPT, MAX_TOKENS)


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMProcess]:
    process = MockLLMProcess("--quiet")
    try:
        yield process
    finally:
        process.close()


@pytest.fixture(autouse=True)
def fresh(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    if "server" in request.fixturenames:
        request.getfixturevalue("server").configure()


class Waits:
    """A ``sleep`` for the summariser that records each wait and sleeps only briefly."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        await asyncio.sleep(min(seconds, 0.01))


def summarizer(
    server: MockLLMProcess, waits: Waits | None = None, **config: object
) -> OpenAISummarizer:
    fields: dict[str, object] = {
        "provider": "openai",
        "base_url": server.url,
        "model": MODEL,
        "api_key_env": KEY_ENV,
        "max_retries": 3,
        "timeout_s": 20.0,
        **config,
    }
    return OpenAISummarizer(
        LLMConfig.model_validate(fields),
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        sleep=waits or Waits(),
    )


async def run(s: OpenAISummarizer, deltas: list[str] | None = None) -> tuple[str, int]:
    try:
        result = await s.summarize(
            HEAD, PROMPT, MAX_TOKENS, on_delta=deltas.append if deltas is not None else None
        )
        return result.text, result.retries
    finally:
        await s.aclose()


# --- happy paths ------------------------------------------------------------------------------


async def test_streamed_deltas_concatenate_to_the_final_text(server: MockLLMProcess) -> None:
    s = summarizer(server)
    deltas: list[str] = []
    result = await s.summarize(HEAD, PROMPT, MAX_TOKENS, on_delta=deltas.append)
    await s.aclose()
    assert len(deltas) > 1
    assert "".join(deltas) == result.text == expected_text()
    assert result.retries == 0
    assert result.model == MODEL
    assert result.usage.provenance == Provenance.RECORDED
    log = server.requests()
    assert result.usage.input_tokens == log[0]["prompt_tokens"] > 0
    assert result.usage.output_tokens == log[0]["completion_tokens"] > 0
    assert log[0]["stream"] is True


async def test_non_streaming_returns_the_same_text(server: MockLLMProcess) -> None:
    s = summarizer(server, stream=False)
    deltas: list[str] = []
    result = await s.summarize(HEAD, PROMPT, MAX_TOKENS, on_delta=deltas.append)
    await s.aclose()
    assert result.text == expected_text()
    assert deltas == [result.text]
    assert server.requests()[0]["stream"] is False
    assert result.usage.provenance == Provenance.RECORDED


@pytest.mark.parametrize("stream", [True, False])
async def test_without_server_usage_tokens_are_counted_here(
    server: MockLLMProcess, stream: bool
) -> None:
    server.configure(send_usage=False)
    s = summarizer(server, stream=stream)
    result = await s.summarize(HEAD, PROMPT, MAX_TOKENS)
    await s.aclose()
    assert result.text == expected_text()
    assert result.usage.provenance in (Provenance.COUNTED, Provenance.ESTIMATED)
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_make_summarizer_builds_the_live_client(server: MockLLMProcess) -> None:
    s = make_summarizer(LLMConfig(provider="openai", base_url=server.url, model=MODEL))
    assert isinstance(s, OpenAISummarizer) and isinstance(s, Summarizer)
    result = await s.summarize(HEAD, PROMPT, MAX_TOKENS)
    await s.aclose()
    assert result.text == expected_text()


def test_the_client_works_across_event_loops(server: MockLLMProcess) -> None:
    """compact_sync and replay run each compaction under its own asyncio.run."""
    s = summarizer(server)
    first = asyncio.run(s.summarize(HEAD, PROMPT, MAX_TOKENS))
    second = asyncio.run(s.summarize(HEAD, PROMPT, MAX_TOKENS))
    assert first.text == second.text == expected_text()


async def test_a_server_that_ignores_stream_true_still_works(server: MockLLMProcess) -> None:
    server.configure(ignore_stream=True)
    deltas: list[str] = []
    text, retries = await run(summarizer(server), deltas)
    assert text == expected_text() and retries == 0
    assert deltas == [text]
    assert server.requests()[0]["stream"] is False  # the server answered in one piece


async def test_a_refused_max_tokens_is_resent_as_max_completion_tokens(
    server: MockLLMProcess,
) -> None:
    server.configure(reject_max_tokens=True)
    s = summarizer(server)
    first = await s.summarize(HEAD, PROMPT, MAX_TOKENS)
    second = await s.summarize(HEAD, PROMPT, MAX_TOKENS)  # remembered: no refused request
    await s.aclose()
    assert first.text == second.text == expected_text()
    assert first.retries == 0  # an adapted request is not a retry
    assert [e["status"] for e in server.requests()] == [400, 200, 200]


async def test_an_exception_from_on_delta_reaches_the_caller_unretried(
    server: MockLLMProcess,
) -> None:
    def broken(_piece: str) -> None:
        raise BrokenPipeError("the terminal went away")

    s = summarizer(server)
    with pytest.raises(BrokenPipeError, match="terminal went away"):
        await s.summarize(HEAD, PROMPT, MAX_TOKENS, on_delta=broken)
    await s.aclose()
    assert len(server.requests()) == 1


def test_replay_with_a_live_llm_compacts_through_the_server(server: MockLLMProcess) -> None:
    """The path of `ctxscope replay --llm URL --model NAME`: policy.llm -> make_summarizer."""
    replay_module = pytest.importorskip("core.replay")
    from core.model.session import Session
    from core.policy import CompactionPolicy

    session = Session(id="live", format="ctxscope", context_window=8000, messages=_conversation())
    policy = Policy(
        pruning=PruningPolicy(enabled=False),
        compaction=CompactionPolicy(reserve_tokens=2000, threshold_rule="pi"),
    )
    offline = replay_module.replay(session, policy)
    live_policy = policy.model_copy(
        update={"llm": LLMConfig(provider="openai", base_url=server.url, model=MODEL)}
    )
    live = replay_module.replay(session, live_policy)
    summaries = [e.summary for e in live.events if e.kind == "compact"]
    assert live.summary.compactions == offline.summary.compactions >= 1
    assert summaries == [e.summary for e in offline.events if e.kind == "compact"]
    assert len(server.requests()) == live.summary.compactions


# --- the stream reader and the delta relay, piece by piece ----------------------------------------


class FakeResponse:
    """What the body reader needs of a response: its headers and its bytes, a few at a time."""

    def __init__(self, body: bytes, chunk_bytes: int = 7) -> None:
        self.body = body
        self.chunk_bytes = chunk_bytes
        self.headers: dict[str, str] = {}

    async def iter_bytes(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), self.chunk_bytes):
            yield self.body[start : start + self.chunk_bytes]


def event_body(lines: list[str], max_bytes: int = 1 << 20) -> CappedBody:
    """A streamed body of ``lines`` (CRLF line breaks, split across chunks anywhere)."""
    return CappedBody(FakeResponse("".join(f"{line}\r\n" for line in lines).encode()), max_bytes)


def offline_summarizer() -> OpenAISummarizer:
    return OpenAISummarizer(
        LLMConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model=MODEL)
    )


async def test_the_body_reader_splits_lines_across_chunks_and_stops_at_the_cap() -> None:
    raw = b"a\r\nb\nc\r\rd\r\n\r\ne"
    for size in range(1, len(raw) + 1):  # every way of cutting it into chunks
        body = CappedBody(FakeResponse(raw, size), 1024)
        assert [line async for line in body.lines()] == ["a", "b", "c", "", "d", "", "e"], size
        assert body.received == len(raw)
    capped = CappedBody(FakeResponse(b"x" * 5000, 100), 1024)
    with pytest.raises(AnswerTooLarge):
        [chunk async for chunk in capped.chunks()]
    assert capped.received <= 1024 + 100  # stopped at the first chunk past the cap


async def test_the_stream_reader_skips_comments_and_joins_multiline_data() -> None:
    lines = [
        ": OPENROUTER PROCESSING",
        "",
        "event: message",
        'data: {"choices": [{"index": 0,',
        'data:  "delta": {"content": "Hello "}, "finish_reason": null}]}',
        "",
        'data: {"choices": [{"index": 1, "delta": {"content": "ignored"}}]}',
        "",
        'data: {"choices": [{"index": 0, "delta": {"content": "world"}, "finish_reason": "stop"}]}',
        "",
    ]  # no [DONE]: the finish_reason already says the answer is complete
    shown: list[str] = []
    answer = await offline_summarizer()._read_events(
        event_body(lines), DeltaRelay(shown.append), "text/event-stream"
    )
    assert answer.text == "Hello world" == "".join(shown)
    assert answer.finish_reason == "stop"


async def test_an_error_event_in_the_stream() -> None:
    overflow = ['data: {"error": {"message": "prompt is too long: 300000 tokens > 200000"}}', ""]
    with pytest.raises(ContextOverflowError):
        await offline_summarizer()._read_events(
            event_body(overflow), DeltaRelay(None), "text/event-stream"
        )
    other = ['data: {"error": {"message": "upstream overloaded"}}', ""]
    with pytest.raises(Retryable) as caught:
        await offline_summarizer()._read_events(
            event_body(other), DeltaRelay(None), "text/event-stream"
        )
    assert caught.value.kind == "server"


async def test_a_stream_without_finish_is_cut_off() -> None:
    lines = [
        'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}',
        "",
        "data: [DONE]",
        "",
    ]
    with pytest.raises(Retryable) as caught:
        await offline_summarizer()._read_events(
            event_body(lines), DeltaRelay(None), "text/event-stream"
        )
    assert caught.value.kind == "dropped"


def test_the_relay_resumes_after_a_retry_and_stops_on_divergence() -> None:
    shown: list[str] = []
    relay = DeltaRelay(shown.append)
    relay.start_attempt()
    for piece in ["Hel", "lo wo"]:
        relay.feed(piece)
    relay.start_attempt()  # the retry writes the same words again, then more
    for piece in ["He", "llo", " world", "!"]:
        relay.feed(piece)
    assert "".join(shown) == "Hello world!"
    relay.start_attempt()  # a retry that says something else: nothing more is shown
    for piece in ["Goodbye", " all"]:
        relay.feed(piece)
    assert "".join(shown) == "Hello world!"


# --- retried and succeeded ----------------------------------------------------------------------


async def test_429_waits_the_retry_after_then_succeeds(server: MockLLMProcess) -> None:
    server.configure(fail_429=1, retry_after_s=0.25)
    waits = Waits()
    text, retries = await run(summarizer(server, waits))
    assert text == expected_text()
    assert retries == 1
    assert waits.seconds == [0.25]  # the server's retry-after-ms, honoured exactly
    assert [e["status"] for e in server.requests()] == [429, 200]


async def test_500_once_is_retried_with_backoff(server: MockLLMProcess) -> None:
    server.configure(fail_500=1)
    waits = Waits()
    text, retries = await run(summarizer(server, waits))
    assert text == expected_text() and retries == 1
    assert len(waits.seconds) == 1 and 0.005 <= waits.seconds[0] <= 0.01
    assert [e["status"] for e in server.requests()] == [500, 200]


async def test_backoff_doubles_and_is_capped(server: MockLLMProcess) -> None:
    server.configure(fail_500=3)
    waits = Waits()
    text, retries = await run(summarizer(server, waits))
    assert text == expected_text() and retries == 3
    # base 0.01 doubling, cap 0.05, jitter within [half, full] of each step
    for wait, ceiling in zip(waits.seconds, [0.01, 0.02, 0.04], strict=True):
        assert ceiling / 2 <= wait <= ceiling


@pytest.mark.parametrize("mode", ["close", "end"])
@pytest.mark.parametrize("stream", [True, False])
async def test_a_dropped_connection_is_retried_from_scratch(
    server: MockLLMProcess, mode: str, stream: bool
) -> None:
    server.configure(drop=1, drop_after_chunks=3, drop_mode=mode)
    deltas: list[str] = []
    text, retries = await run(summarizer(server, stream=stream), deltas)
    assert retries == 1
    assert text == expected_text()
    # What was shown before the drop is not shown twice.
    assert "".join(deltas) == text
    log = server.requests()
    assert log[0]["fault"] is not None and log[0]["fault"].startswith("drop")
    assert log[1]["fault"] is None


# --- errors -----------------------------------------------------------------------------------


async def test_dropped_on_every_attempt_raises_and_never_returns_partial_text(
    server: MockLLMProcess,
) -> None:
    server.configure(drop=10, drop_after_chunks=3)
    deltas: list[str] = []
    with pytest.raises(ServerError, match="cut off") as caught:
        await run(summarizer(server, max_retries=2), deltas)
    assert "no partial summary" in str(caught.value)
    assert deltas and "".join(deltas) != expected_text()  # only a fragment ever arrived
    assert len(server.requests()) == 3


async def test_500_on_every_attempt_is_a_server_error(server: MockLLMProcess) -> None:
    server.configure(fail_500=10)
    with pytest.raises(ServerError, match="HTTP 500") as caught:
        await run(summarizer(server, max_retries=2))
    assert "after 2 retries" in str(caught.value)
    assert len(server.requests()) == 3


async def test_429_on_every_attempt_is_a_rate_limit_error(server: MockLLMProcess) -> None:
    server.configure(fail_429=10, retry_after_s=0.01)
    with pytest.raises(RateLimitError, match="429"):
        await run(summarizer(server, max_retries=2))
    assert len(server.requests()) == 3


async def test_total_wait_is_capped(server: MockLLMProcess) -> None:
    server.configure(fail_429=1, retry_after_s=30)
    waits = Waits()
    s = OpenAISummarizer(
        LLMConfig(provider="openai", base_url=server.url, model=MODEL, api_key_env=KEY_ENV),
        max_total_wait_s=5.0,
        sleep=waits,
    )
    with pytest.raises(RateLimitError, match="wait budget"):
        await run(s)
    assert waits.seconds == []
    assert len(server.requests()) == 1


@pytest.mark.parametrize("style", ["openai", "anthropic", "llamacpp", "vllm", "openrouter"])
@pytest.mark.parametrize("stream", [True, False])
async def test_context_overflow_is_recognised(
    server: MockLLMProcess, style: str, stream: bool
) -> None:
    server.configure(context_limit_tokens=30, overflow_style=style)
    with pytest.raises(ContextOverflowError, match="context"):
        await run(summarizer(server, stream=stream))
    assert len(server.requests()) == 1  # an overflow is never retried as it is


async def test_wrong_key_is_an_auth_error(
    server: MockLLMProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.configure(api_key="the-right-key")
    monkeypatch.setenv(KEY_ENV, "a-wrong-key")
    with pytest.raises(AuthError, match="HTTP 401") as caught:
        await run(summarizer(server))
    assert KEY_ENV in str(caught.value)
    monkeypatch.setenv(KEY_ENV, "the-right-key")
    text, _ = await run(summarizer(server))
    assert text == expected_text()


async def test_a_remote_endpoint_without_a_key_fails_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s = OpenAISummarizer(
        LLMConfig(
            provider="openai",
            base_url="https://llm.example.invalid/v1",
            model="m",
            api_key_env=KEY_ENV,
        )
    )
    with pytest.raises(AuthError, match=f"set the environment variable {KEY_ENV}"):
        await s.summarize(HEAD, PROMPT, MAX_TOKENS)


async def test_unknown_model_is_model_not_found(server: MockLLMProcess) -> None:
    with pytest.raises(ModelNotFoundError, match="gpt-nope"):
        await run(summarizer(server, model="gpt-nope"))


def test_no_model_is_a_clear_error() -> None:
    with pytest.raises(ModelNotFoundError, match="no model"):
        OpenAISummarizer(LLMConfig(provider="openai", base_url="http://127.0.0.1:1/v1"))


async def test_unreachable_port_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = OpenAISummarizer(
        LLMConfig(provider="openai", base_url=f"http://127.0.0.1:{port}/v1", model=MODEL),
        sleep=Waits(),
    )
    with pytest.raises(UnreachableError, match="cannot connect"):
        await s.summarize(HEAD, PROMPT, MAX_TOKENS)


@pytest.mark.parametrize("kind", ["json", "no-choices", "html"])
@pytest.mark.parametrize("stream", [True, False])
async def test_malformed_answers_are_clear_errors(
    server: MockLLMProcess, kind: str, stream: bool
) -> None:
    server.configure(malformed=1, malformed_kind=kind)
    with pytest.raises(MalformedResponseError) as caught:
        await run(summarizer(server, stream=stream))
    assert "\n" not in str(caught.value)
    assert len(server.requests()) == 1


@pytest.mark.parametrize("stream", [True, False])
async def test_a_slow_answer_past_the_timeout_is_unreachable(
    server: MockLLMProcess, stream: bool
) -> None:
    server.configure(delay_s=5.0)
    with pytest.raises(UnreachableError, match="timeout"):
        await run(summarizer(server, stream=stream, timeout_s=0.3))
    assert len(server.requests()) <= 1  # not retried


async def test_cancelling_closes_the_stream(server: MockLLMProcess) -> None:
    server.configure(chunk_delay_s=0.05, chunk_chars=4)
    s = summarizer(server)
    first_piece = asyncio.Event()
    task = asyncio.create_task(
        s.summarize(HEAD, PROMPT, MAX_TOKENS, on_delta=lambda _piece: first_piece.set())
    )
    await asyncio.wait_for(first_piece.wait(), 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await s.aclose()
    # The server notices the closed connection when it writes its next chunk.
    for _ in range(200):
        log = server.requests()
        if log:
            break
        await asyncio.sleep(0.05)
    assert log and log[0]["client_disconnected"] is True
    assert log[0]["chunks_sent"] < len(expected_text()) // 4


# --- overflow recognition and Retry-After parsing --------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion).",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "the request exceeds the available context size, try increasing it",
        "This endpoint's maximum context length is 128000 tokens.",
        "context length exceeded",
        "Error: context_length_exceeded",
        "Your input exceeds the context window of this model.",
    ],
)
def test_overflow_messages_are_recognised(message: str) -> None:
    assert is_context_overflow_message(message)


@pytest.mark.parametrize(
    "message",
    [
        "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.",
        "You exceeded your current quota, please check your plan and billing details.",
        "Incorrect API key provided.",
        "The model `gpt-nope` does not exist or you do not have access to it.",
        "Invalid value for 'temperature': must be between 0 and 2.",
        "",
    ],
)
def test_other_errors_are_not_overflows(message: str) -> None:
    assert not is_context_overflow_message(message)


def test_overflow_codes() -> None:
    assert is_context_overflow_code("context_length_exceeded")
    assert not is_context_overflow_code("rate_limit_exceeded")
    assert not is_context_overflow_code(400)


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "-4"}) == 0.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


# --- secrets ----------------------------------------------------------------------------------

FAKE_KEY = "sk-ctxscope-FAKE-7f3a9c1e5b2d4680"


async def test_the_api_key_never_leaks(
    server: MockLLMProcess, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Errors (whose server text echoes the key), logs, reprs and saved policies never show it."""
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    caplog.set_level(logging.DEBUG)  # the SDK's own debug logging included
    seen: list[str] = []

    def record(error: BaseException) -> None:
        seen.extend([str(error), repr(error), *map(str, error.args)])
        chained = error.__cause__ or error.__context__
        while chained is not None:
            seen.extend([str(chained), repr(chained)])
            chained = chained.__cause__ or chained.__context__

    faults: list[dict[str, object]] = [
        {"api_key": "the-right-key"},  # 401, and the server echoes the key it got
        {"context_limit_tokens": 10},
        {"fail_500": 10},
        {"fail_429": 10, "retry_after_s": 0},
        {"malformed": 1},
        {"drop": 10},
    ]
    errors: list[LLMError] = []
    for fault in faults:
        server.configure(**fault)
        s = summarizer(server, max_retries=1)
        seen.append(repr(s))
        with pytest.raises(LLMError) as caught:
            await run(s)
        errors.append(caught.value)
        record(caught.value)
    server.configure()
    s = summarizer(server, model="gpt-nope")
    with pytest.raises(ModelNotFoundError) as not_found:
        await run(s)
    record(not_found.value)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = summarizer(server, base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(UnreachableError) as unreachable:
        await run(s)
    record(unreachable.value)

    assert isinstance(errors[0], AuthError)
    assert "[redacted]" in str(errors[0])  # the 401 text echoed the key: it was scrubbed
    config = LLMConfig(provider="openai", base_url=server.url, model=MODEL, api_key_env=KEY_ENV)
    policy = Policy(llm=config)
    seen.extend([policy.to_toml(), policy.model_dump_json(), repr(config), str(s)])
    seen.extend(entry.getMessage() for entry in caplog.records)
    seen.append(caplog.text)
    leaks = [text for text in seen if FAKE_KEY in text or FAKE_KEY[3:] in text]
    assert leaks == []
    assert os.environ[KEY_ENV] == FAKE_KEY  # the key was really there to leak


# --- end to end: compaction over HTTP ---------------------------------------------------------


def _conversation() -> list:  # type: ignore[type-arg]
    convo = SessionBuilder().user(
        "Port the parser to the new tokenizer in core/parser.py. Keep the API."
    )
    for i in range(12):
        convo.tool("read", f"line {i} " + "token " * 400, {"path": f"core/module_{i}.py"})
        convo.reply(f"Step {i}: the module {i} uses the old tokenizer; I will switch it. " * 3)
        convo.user(f"Good, now module {i + 1}.")
    return convo.reply("Running the tests.").messages


def test_compaction_over_http_drops_oldest_head_messages_until_it_fits(
    server: MockLLMProcess,
) -> None:
    compaction = pytest.importorskip("core.algorithms.compact")
    from core.model.tokens import get_counter

    messages = _conversation()
    policy = Policy(pruning=PruningPolicy(enabled=False))  # keep the head large
    counter = get_counter("chars/4")
    window = 30_000
    offline = compaction.compact_sync(
        messages, policy, MockSummarizer(), window=window, counter=counter
    )
    assert offline.compacted and offline.dropped_head_messages == 0
    sent = [m for m in messages if m.id in set(offline.head_ids)]
    assert len(sent) > 6
    # A context limit that the full head overflows but the head without its 3 oldest fits.
    request = compaction.build_request(sent[3:], policy.compaction.head_tool_output_max_chars)
    limit = MockSummarizer().request_tokens(request, offline.prompt)
    server.configure(context_limit_tokens=limit)

    live = make_summarizer(
        LLMConfig(provider="openai", base_url=server.url, model=MODEL, api_key_env=KEY_ENV)
    )
    deltas: list[str] = []
    result = compaction.compact_sync(
        messages, policy, live, window=window, counter=counter, on_delta=deltas.append
    )
    assert result.compacted
    assert result.dropped_head_messages == 3 > 0
    assert result.dropped_head_ids == [m.id for m in sent[:3]]
    # The summary is complete: exactly what the offline mock writes for the request that fit.
    complete = MockSummarizer().write(result.request_messages, result.prompt, result.max_tokens)
    assert result.summary == complete.strip()
    assert result.usage is not None and result.usage.provenance == Provenance.RECORDED
    statuses = [e["status"] for e in server.requests()]
    assert statuses == [400, 400, 400, 200]
