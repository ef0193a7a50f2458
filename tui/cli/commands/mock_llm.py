"""``ctxscope mock-llm``: a local OpenAI-compatible server answering with the offline mock summariser."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

import click

DEFAULT_PORT = 8765


@click.command(name="mock-llm")
@click.option(
    "--host",
    default=None,
    help="Address to bind (default 127.0.0.1; anything but loopback prints a warning).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    help="Model name to serve (repeatable; default ctxscope-mock). Others get 404.",
)
@click.option(
    "--require-key-env",
    metavar="VAR",
    default=None,
    help="Require 'Authorization: Bearer $VAR' (the key is read from that environment variable); "
    "a wrong or missing key gets 401.",
)
@click.option(
    "--context-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Answer 400 context_length_exceeded when a request is larger than this many tokens "
    "(characters / 4).",
)
@click.option(
    "--overflow-style",
    type=click.Choice(["openai", "anthropic", "llamacpp", "vllm", "openrouter"]),
    default="openai",
    show_default=True,
    help="Whose wording the context-length error uses.",
)
@click.option(
    "--fail-429",
    type=click.IntRange(min=0),
    default=0,
    help="Answer the first K chat requests with 429 and Retry-After.",
)
@click.option(
    "--retry-after",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds the 429 answers ask the client to wait.",
)
@click.option(
    "--fail-500",
    type=click.IntRange(min=0),
    default=0,
    help="Answer the next K chat requests with 500.",
)
@click.option(
    "--malformed",
    type=click.IntRange(min=0),
    default=0,
    help="Answer the next K chat requests with a malformed body.",
)
@click.option(
    "--malformed-kind",
    type=click.Choice(["json", "no-choices", "html"]),
    default="json",
    show_default=True,
    help="What the malformed answers look like.",
)
@click.option(
    "--drop",
    type=click.IntRange(min=0),
    default=0,
    help="Drop the connection of the next K chat requests mid-response.",
)
@click.option(
    "--drop-after",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Chunks sent before a streamed answer is dropped.",
)
@click.option(
    "--drop-mode",
    type=click.Choice(["close", "end"]),
    default="close",
    show_default=True,
    help="close: the socket is closed mid-body; end: the stream ends early without [DONE].",
)
@click.option(
    "--delay",
    type=click.FloatRange(min=0),
    default=0.0,
    help="Seconds to wait before answering each chat request.",
)
@click.option(
    "--chunk-delay",
    type=click.FloatRange(min=0),
    default=0.0,
    help="Seconds to wait between streamed chunks.",
)
@click.option(
    "--no-usage",
    is_flag=True,
    help="Do not report token usage (clients must count tokens themselves).",
)
@click.option(
    "--ignore-stream",
    is_flag=True,
    help="Answer streamed requests with one plain JSON completion (as some servers do).",
)
@click.option(
    "--reject-max-tokens",
    is_flag=True,
    help="Answer 400 unsupported_parameter to max_tokens (clients must send max_completion_tokens).",
)
@click.option(
    "--stall",
    type=click.IntRange(min=0),
    default=0,
    help="Read the next K chat requests and never answer them.",
)
@click.option(
    "--endless-headers",
    type=click.IntRange(min=0),
    default=0,
    help="Answer the next K chat requests with headers that never end (one line every "
    "--drip-interval seconds).",
)
@click.option(
    "--drip",
    type=click.IntRange(min=0),
    default=0,
    help="Send the body of the next K answers one byte at a time (see --drip-interval).",
)
@click.option(
    "--drip-interval",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds between two bytes of a dripped answer (or two lines of endless headers).",
)
@click.option(
    "--huge",
    type=click.IntRange(min=0),
    default=0,
    help="Answer the next K chat requests with --huge-bytes characters of text.",
)
@click.option(
    "--huge-bytes",
    type=click.IntRange(min=1),
    default=64 * 1024 * 1024,
    show_default=True,
    help="Characters of text in a huge answer.",
)
@click.option("--quiet", "-q", is_flag=True, help="Do not log each request on stderr.")
def mock_llm(
    host: str | None,
    port: int,
    models: tuple[str, ...],
    require_key_env: str | None,
    context_limit: int | None,
    overflow_style: str,
    fail_429: int,
    retry_after: float,
    fail_500: int,
    malformed: int,
    malformed_kind: str,
    drop: int,
    drop_after: int,
    drop_mode: str,
    delay: float,
    chunk_delay: float,
    no_usage: bool,
    ignore_stream: bool,
    reject_max_tokens: bool,
    stall: int,
    endless_headers: int,
    drip: int,
    drip_interval: float,
    huge: int,
    huge_bytes: int,
    quiet: bool,
) -> None:
    """Run a local OpenAI-compatible chat-completions server for testing live compaction.

    Answers come from the offline mock summariser (deterministic). Point a client at the printed
    URL, e.g. `ctxscope replay SESSION --llm http://127.0.0.1:8765/v1 --model ctxscope-mock`.
    Fault options make it misbehave in the ways real endpoints do; tests can also change them at
    run time with POST /_mock/config. Stop it with Ctrl-C (or SIGTERM).
    """
    from pydantic import ValidationError

    from core.llm.mock_server import (
        DEFAULT_MODEL,
        MockLLMServer,
        MockServerConfig,
        is_loopback_host,
    )

    api_key: str | None = None
    if require_key_env is not None:
        api_key = os.environ.get(require_key_env, "").strip() or None
        if api_key is None:
            _fail(f"--require-key-env: the environment variable {require_key_env} is not set")
    try:
        config = MockServerConfig(
            models=list(models) or [DEFAULT_MODEL],
            api_key=api_key,
            context_limit_tokens=context_limit,
            overflow_style=overflow_style,
            fail_429=fail_429,
            retry_after_s=retry_after,
            fail_500=fail_500,
            malformed=malformed,
            malformed_kind=malformed_kind,
            drop=drop,
            drop_after_chunks=drop_after,
            drop_mode=drop_mode,
            delay_s=delay,
            chunk_delay_s=chunk_delay,
            send_usage=not no_usage,
            ignore_stream=ignore_stream,
            reject_max_tokens=reject_max_tokens,
            stall=stall,
            endless_headers=endless_headers,
            drip=drip,
            drip_interval_s=drip_interval,
            huge=huge,
            huge_bytes=huge_bytes,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        _fail(f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
    bind_host = host if host is not None else "127.0.0.1"
    if not is_loopback_host(bind_host):
        click.echo(
            f"warning: binding to {bind_host} makes the mock server reachable from other machines",
            err=True,
        )
    try:
        server = MockLLMServer(config, host=bind_host, port=port, quiet=quiet)
    except OSError as exc:
        _fail(f"cannot listen on {bind_host}:{port}: {exc.strerror or exc}")

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    server.start()
    click.echo(f"listening on {server.url}")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        click.echo("mock-llm: stopped", err=True)


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)
