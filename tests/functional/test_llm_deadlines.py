"""A dead endpoint is given up on within 30 s by default: a first-byte
deadline, a stall deadline on the stream and a time budget for the failures of a run, each
named in the message when it ends a request or the run.

The mock server (``core.llm.mock_server``) runs on 127.0.0.1 with the fault each test needs. The
request's own deadline (``timeout_s``) is set far beyond the one under test, so the message
proves which one fired; nothing asserts on how long anything took.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.llm.budget import FailureBudget
from core.llm.deadline import request_deadline
from core.llm.live import OpenAISummarizer
from core.llm.mock_server import MockLLMServer, MockServerConfig
from core.llm.protocol import LLMError, StoppedCallingError, UnreachableError
from core.policy import LLMConfig
from tests.functional.test_llm_faults import (
    MODEL,
    _failures,
    _files,
    _replay_cli,
    _session,
    ask,
    asked,
    live,
    replay_live,
)

FAR = 50.0
"""A request deadline no test here reaches."""


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as mock:
        yield mock


async def test_an_endpoint_that_never_answers_fails_at_the_first_byte_deadline(
    server: MockLLMServer,
) -> None:
    server.configure(MockServerConfig(stall=5))
    with pytest.raises(UnreachableError) as caught:
        await ask(live(server, timeout_s=FAR, first_byte_timeout_s=0.3))
    message = str(caught.value)
    assert "no answer began within 0.3s" in message and "first_byte_timeout_s" in message
    assert [e["fault"] for e in server.requests()] == ["stall"]


async def test_a_dripping_stream_fails_at_the_stall_deadline(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(drip=5, drip_interval_s=0.05))
    with pytest.raises(UnreachableError) as caught:
        await ask(live(server, timeout_s=FAR, stall_timeout_s=0.4))
    message = str(caught.value)
    assert "the answer stalled: nothing new for 0.4s" in message
    assert "stall_timeout_s" in message and "bytes of the answer had arrived" in message


async def test_a_healthy_stream_is_not_cut_by_the_stall_deadline(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(chunk_delay_s=0.01))
    text = await ask(live(server, timeout_s=FAR, stall_timeout_s=5.0, first_byte_timeout_s=5.0))
    assert text.strip()


def test_a_run_stops_once_its_failures_took_max_failing_s(
    server: MockLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.configure(MockServerConfig(stall=100))
    result = replay_live(
        _session(),
        base_url=server.url,
        timeout_s=FAR,
        first_byte_timeout_s=0.3,
        max_consecutive_failures=50,
        max_failing_s=2.0,  # far from the first request's 0.3 s, even on a busy machine
    )
    assert 1 <= len(server.requests()) < 50  # the time budget, not the count, stopped it
    assert "first_byte_timeout_s" in _failures(result)
    stopped = [r.getMessage() for r in caplog.records if "stopped calling" in r.getMessage()]
    assert len(stopped) == 1 and "max_failing_s 2" in stopped[0]


def test_the_failure_time_budget_resets_on_success() -> None:
    budget = FailureBudget(10, "http://x/v1", max_s=1.0)
    budget.record_failure(LLMError("slow"), 0.9)
    budget.record_success()
    budget.record_failure(LLMError("slow again"), 0.9)
    budget.check()  # 0.9 s in a row: still calling
    assert budget.record_failure(LLMError("third"), 0.2) is True
    with pytest.raises(StoppedCallingError, match=r"took 1\.1s \(max_failing_s = 1\)"):
        budget.check()


def test_the_defaults_give_up_on_a_dead_endpoint_within_30_s() -> None:
    config = LLMConfig()
    assert config.max_failing_s == 30.0
    # a silent endpoint or a stalled stream fails each request at 10 s: three of them spend it
    assert config.first_byte_timeout_s * config.max_consecutive_failures <= config.max_failing_s
    assert config.stall_timeout_s * config.max_consecutive_failures <= config.max_failing_s


def test_the_replay_flags_set_the_deadlines(server: MockLLMServer, tmp_path: Path) -> None:
    server.configure(MockServerConfig(stall=100))
    session, policy = _files(tmp_path)
    done = _replay_cli(
        str(session),
        "-p",
        str(policy),
        "--llm",
        server.url,
        "--model",
        MODEL,
        "--llm-timeout",
        str(FAR),
        "--llm-first-byte-timeout",
        "0.3",
        "--llm-max-failing",
        "2",
        "--llm-max-failures",
        "50",
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    # the first request ends at the first-byte deadline (the run's 2 s are far from it); the last
    # may end at what is left of them (then it names max_failing_s): the run stops within them
    assert "summary request 1 failed" in lines[1] and "no answer began within 0.3s" in lines[1]
    assert "max_failing_s" in done.stderr
    assert len(server.requests()) < 50


# --- every path ends within the run's budget: streamed or not, silent, dripping, endless headers --


@pytest.mark.parametrize(
    ("stream", "fault", "limits", "reason"),
    [
        # streamed: the first-byte and stall deadlines end it, whatever the request's deadline
        (True, {"endless_headers": 5, "drip_interval_s": 0.02}, {"first_byte_timeout_s": 0.3},
         "no answer began within 0.3s of the request (first_byte_timeout_s"),
        # not streamed: the headers come only once the answer is written, so no first-byte
        # deadline; what is left of the run's failure budget ends the request
        (False, {"stall": 5}, {"max_failing_s": 0.4},
         "no complete answer within 0.4s (max_failing_s, --llm-max-failing"),
        (False, {"endless_headers": 5, "drip_interval_s": 0.02}, {"max_failing_s": 0.4},
         "no complete answer within 0.4s (max_failing_s, --llm-max-failing"),
        (False, {"drip": 5, "drip_interval_s": 0.02}, {"max_failing_s": 0.4},
         "bytes of the answer had arrived"),
        # ... and a body that stops coming fails at the stall deadline, as a stream does
        (False, {"drip": 5, "drip_interval_s": 30.0}, {"stall_timeout_s": 0.3},
         "the answer stalled: nothing new for 0.3s (stall_timeout_s"),
    ],
    ids=["streamed-endless-headers", "plain-silent", "plain-endless-headers", "plain-drip",
         "plain-body-stalls"],
)  # fmt: skip
async def test_every_path_ends_at_a_deadline_it_names(
    server: MockLLMServer,
    stream: bool,
    fault: dict[str, float],
    limits: dict[str, float],
    reason: str,
) -> None:
    server.configure(MockServerConfig.model_validate(fault))
    # every deadline not under test is far away: the message proves which one fired
    far = {"first_byte_timeout_s": FAR, "stall_timeout_s": FAR, "max_failing_s": FAR}
    summarizer = live(server, timeout_s=FAR, stream=stream, **{**far, **limits})
    with pytest.raises(UnreachableError) as caught:
        await ask(summarizer)
    assert reason in str(caught.value)
    assert summarizer.budget.failed == 1 and len(server.requests()) <= 1


async def test_retries_stay_within_the_runs_failure_budget(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(fail_500=1000, delay_s=0.05))
    summarizer = live(server, timeout_s=FAR, max_retries=1000, max_failing_s=0.5, stream=False)
    with pytest.raises(LLMError) as caught:
        await ask(summarizer)
    assert "max_failing_s" in str(caught.value)
    assert summarizer.budget.spent  # the run calls no more: its budget went on this request


async def test_a_request_gets_only_what_is_left_of_the_runs_budget(
    server: MockLLMServer,
) -> None:
    server.configure(MockServerConfig(stall=5))
    summarizer = live(server, timeout_s=FAR, max_failing_s=FAR, stream=False)
    summarizer.budget.record_failure(LLMError("an earlier failure"), FAR - 0.3)
    with pytest.raises(UnreachableError) as caught:
        await ask(summarizer)
    message = str(caught.value)
    assert "no complete answer within 0.3s (max_failing_s" in message
    assert f"{FAR - 0.3:.1f}s of it spent by the failures before this one" in message
    with pytest.raises(StoppedCallingError, match="max_failing_s"):
        summarizer.budget.check()


def test_the_default_deadlines_bound_a_runs_failures_to_30_s() -> None:
    """Whatever fails and however (each request is given at most what is left), the failing
    requests of a run take at most max_failing_s, 30 s by default, before it stops calling."""
    config = LLMConfig()
    budget = FailureBudget(config.max_consecutive_failures, "http://x/v1", config.max_failing_s)
    spent = 0.0
    while not budget.spent:
        deadline = request_deadline(config, budget)  # the request fails at its deadline
        budget.record_failure(LLMError("silent"), deadline.seconds)
        spent += deadline.seconds
    assert spent <= 30.0
    assert request_deadline(config, FailureBudget(3, "x", config.max_failing_s)).seconds == 30.0


@pytest.mark.parametrize("fault", ["stall", "endless_headers"])
def test_a_plain_replay_against_a_dead_endpoint_ends_naming_the_budget(
    server: MockLLMServer, tmp_path: Path, fault: str
) -> None:
    server.configure(MockServerConfig.model_validate({fault: 100, "drip_interval_s": 0.02}))
    session, policy = _files(tmp_path, "stream = false\n")
    done = _replay_cli(
        str(session),
        "-p",
        str(policy),
        "--llm",
        server.url,
        "--model",
        MODEL,
        "--llm-timeout",
        str(FAR),
        "--llm-max-failing",
        "0.5",
    )
    assert done.returncode == 3, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "no complete answer within 0.5s (max_failing_s, --llm-max-failing" in last
    assert "Traceback" not in done.stderr
    assert asked(done.stderr) == 1  # the one request spent the run's budget: no other was sent


@pytest.fixture
def garbage_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers anything with bytes that are not TLS."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.1 200 OK garbage garbage garbage\r\n\r\n" * 4)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


async def test_tls_garbage_is_called_a_tls_failure(garbage_server: int) -> None:
    config = LLMConfig.model_validate(
        {
            "provider": "openai",
            "base_url": f"https://127.0.0.1:{garbage_server}/v1",
            "model": MODEL,
            "max_retries": 0,
            "timeout_s": FAR,
        }
    )
    with pytest.raises(LLMError) as caught:
        await ask(OpenAISummarizer(config, backoff_base_s=0.01, backoff_max_s=0.02))
    message = str(caught.value)
    assert "TLS" in message and "operation not permitted" not in message.lower()
