"""A live LLM that hangs, drips, floods, refuses or drops: each costs at most the deadline, says
what happened, and a run stops calling it after a few failures in a row.

Each test starts the mock server (``core.llm.mock_server``) on 127.0.0.1 with the fault it needs
and stops it at the end. Nothing here asserts on how long anything took: a hang is caught by a
generous timeout (a test that hits it fails), the deadlines are checked through what the errors
and the server's log say.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.formats.ctxscope_jsonl import write_session
from core.llm.budget import FailureBudget
from core.llm.live import OpenAISummarizer
from core.llm.mock_server import MockLLMServer, MockServerConfig
from core.llm.protocol import (
    AnswerTooLargeError,
    ChatMessage,
    ContextOverflowError,
    LLMError,
    RateLimitError,
    ServerError,
    StoppedCallingError,
    UnreachableError,
)
from core.model.session import Session
from core.policy import CompactionPolicy, LLMConfig, Policy, PruningPolicy
from core.replay import ReplayResult, replay
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO

MODEL = "ctxscope-mock"
HEAD = [
    ChatMessage(role="system", content="You write summaries of coding sessions."),
    ChatMessage(
        role="user", content="Fix the crash in core/algorithms/split.py when the session is empty."
    ),
]
PROMPT = "Summarise the conversation.\n\n## Goal\n\n## Discoveries\n"
HANG_S = 60.0
"""Longer than any test here needs: reaching it means something hung."""


def settled_requests(server: MockLLMServer, expected: int) -> int:
    """How many requests the server logged, once it logged ``expected`` or a few seconds passed.
    It logs a stalled request when it sees the client go, which may be after the client moved
    on; and on a busy machine a request's deadline may pass before it reached the server. So
    callers assert ``<=``, and count what the client says it sent for the exact figure."""
    deadline = time.monotonic() + 5.0
    while len(server.requests()) < expected and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for the log line, not waiting a fixed time
    return len(server.requests())


def asked(stderr: str) -> int:
    """Summary requests the command says it sent."""
    return sum(1 for line in stderr.splitlines() if ": asking " in line)


@pytest.fixture
def server() -> Iterator[MockLLMServer]:
    with MockLLMServer() as mock:
        yield mock


def live(server: MockLLMServer, **fields: object) -> OpenAISummarizer:
    config = LLMConfig.model_validate(
        {"provider": "openai", "base_url": server.url, "model": MODEL, **fields}
    )
    return OpenAISummarizer(config, backoff_base_s=0.01, backoff_max_s=0.02)


async def ask(summarizer: OpenAISummarizer) -> str:
    try:
        result = await asyncio.wait_for(summarizer.summarize(HEAD, PROMPT, 300), HANG_S)
        return result.text
    finally:
        await summarizer.aclose()


# --- one request: the deadline covers everything --------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_that_never_answers_fails_at_the_deadline(
    server: MockLLMServer, stream: bool
) -> None:
    server.configure(MockServerConfig(stall=5))
    with pytest.raises(UnreachableError) as caught:
        await ask(live(server, timeout_s=0.4, stream=stream))
    assert "no complete answer within 0.4s" in str(caught.value)
    assert "no answer had started" in str(caught.value)
    assert [e["fault"] for e in server.requests()] == ["stall"]  # the deadline is not retried


@pytest.mark.parametrize("stream", [True, False])
async def test_a_dripping_server_fails_at_the_deadline_saying_what_arrived(
    server: MockLLMServer, stream: bool
) -> None:
    # The answer drips one byte every 0.05 s: tens of seconds for the whole of it. The 2 s
    # deadline leaves the headers time to arrive on a loaded machine (at 0.5 s they once did
    # not, at load ~12, and the error rightly said no answer had started).
    server.configure(MockServerConfig(drip=5, drip_interval_s=0.05))
    with pytest.raises(UnreachableError) as caught:
        await ask(live(server, timeout_s=2.0, stream=stream))
    message = str(caught.value)
    assert "no complete answer within 2s" in message
    assert "bytes of the answer had arrived" in message


async def test_retries_and_their_waits_stay_within_the_deadline(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(fail_429=50, retry_after_s=0.3))
    with pytest.raises(RateLimitError, match="would pass the 1s deadline"):
        await ask(live(server, timeout_s=1.0, max_retries=20))
    assert 1 <= len(server.requests()) <= 4  # not the 21 attempts the retry count allows


@pytest.mark.parametrize("stream", [True, False])
async def test_a_huge_answer_is_refused_without_being_held(
    server: MockLLMServer, stream: bool
) -> None:
    cap = 256 * 1024
    server.configure(MockServerConfig(huge=1, huge_bytes=24 * 1024 * 1024))
    tracemalloc.start()
    try:
        with pytest.raises(AnswerTooLargeError, match="max_answer_bytes") as caught:
            await ask(live(server, stream=stream, max_answer_bytes=cap))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "no summary was kept" in str(caught.value)
    assert peak < 16 * cap  # the 24 MB answer was never held, only what arrived before the cap
    assert [e["fault"] for e in server.requests()] == ["huge"]  # not retried


async def test_an_answer_within_the_cap_is_a_summary(server: MockLLMServer) -> None:
    text = await ask(live(server, max_answer_bytes=1024 * 1024))
    assert "## Goal" in text


# --- what a failed connection is called -----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _session(rounds: int = 30) -> Session:
    """A session the policy below compacts about five times (offline)."""
    convo = SessionBuilder().user("Port the parser to the new tokenizer in core/parser.py.")
    for i in range(rounds):
        convo.tool("read", f"line {i} " + "token " * 400, {"path": f"core/module_{i}.py"})
        convo.reply(f"Step {i}: module {i} uses the old tokenizer; I will switch it. " * 3)
        convo.user(f"Good, now module {i + 1}.")
    return Session(
        id="faults", format="ctxscope", context_window=8000, messages=convo.reply("Done.").messages
    )


POLICY = Policy(
    pruning=PruningPolicy(enabled=False),
    compaction=CompactionPolicy(reserve_tokens=2000, threshold_rule="pi"),
)


def replay_live(session: Session, **fields: object) -> ReplayResult:
    """The replay with a live LLM, in a thread: a hang fails the test instead of blocking it."""
    llm = LLMConfig.model_validate({"provider": "openai", "model": MODEL, **fields})
    box: dict[str, ReplayResult] = {}
    worker = threading.Thread(
        target=lambda: box.setdefault(
            "result", replay(session, POLICY.model_copy(update={"llm": llm}))
        ),
        daemon=True,
    )
    worker.start()
    worker.join(HANG_S)
    assert "result" in box, "the replay hung"
    return box["result"]


def _failures(result: ReplayResult) -> str:
    return " ".join(note for note in result.notes if "compaction failed" in note)


def test_a_refused_connection_is_called_so_in_a_replay() -> None:
    result = replay_live(_session(), base_url=f"http://127.0.0.1:{_free_port()}/v1")
    failures = _failures(result)
    assert "cannot connect" in failures and "connection refused" in failures
    assert "event loop" not in failures


def test_a_dropped_stream_says_how_many_bytes_arrived(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(drop=100, drop_after_chunks=3))
    result = replay_live(_session(), base_url=server.url, max_retries=0)
    failures = _failures(result)
    assert "the connection dropped after" in failures and "bytes" in failures
    assert "event loop" not in failures


async def test_a_dropped_plain_answer_says_how_many_bytes_arrived(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(drop=100))
    with pytest.raises(ServerError) as caught:
        await ask(live(server, stream=False, max_retries=0))
    assert "the connection dropped after" in str(caught.value)
    assert "event loop" not in str(caught.value)


# --- a run: it stops calling after a few failures in a row -----------------------------------------


def test_a_run_stops_calling_a_hung_endpoint_after_the_budget(
    server: MockLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.configure(MockServerConfig(stall=100))
    result = replay_live(_session(), base_url=server.url, timeout_s=0.3, max_consecutive_failures=2)
    failed = [r for r in caplog.records if re.match(r"summary request \d+ failed", r.getMessage())]
    assert len(failed) == 2  # what the client sent (the server may log a stalled one late)
    assert settled_requests(server, 2) <= 2  # then nothing more was sent
    assert result.summary.compactions == 0
    assert "no complete answer within 0.3s" in _failures(result)


def test_the_budget_counts_failures_in_a_row_only() -> None:
    budget = FailureBudget(2, "http://x/v1")
    budget.record_failure(LLMError("one"))
    budget.record_success()
    budget.record_failure(LLMError("two"))
    budget.check()  # one in a row: still calling
    assert budget.record_failure(LLMError("three")) is True  # this one spent it
    with pytest.raises(StoppedCallingError, match="last error: three"):
        budget.check()
    assert (budget.succeeded, budget.failed, budget.refused) == (1, 3, 1)


async def test_context_overflows_do_not_spend_the_budget(server: MockLLMServer) -> None:
    server.configure(MockServerConfig(context_limit_tokens=5))
    summarizer = live(server, max_consecutive_failures=1)
    for _ in range(3):  # compaction answers an overflow by sending less: no failure of the endpoint
        with pytest.raises(ContextOverflowError):
            await ask(summarizer)
    assert summarizer.budget.consecutive == 0 and len(server.requests()) == 3


# --- the command line: progress, the exit status and its one line ---------------------------------


def _files(tmp_path: Path, llm_lines: str = "") -> tuple[Path, Path]:
    session_path = tmp_path / "session.jsonl"
    write_session(_session(), session_path)
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(
        "[pruning]\nenabled = false\n"
        '[compaction]\nreserve_tokens = 2000\nthreshold_rule = "pi"\n'
        f"[llm]\n{llm_lines}"
    )
    return session_path, policy_path


def _replay_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from tui.cli.main import main; main()",
            "replay",
            "--window",
            "8000",
            *args,
        ],
        cwd=REPO,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


def test_replay_against_a_hung_endpoint_exits_3_with_one_line(
    server: MockLLMServer, tmp_path: Path
) -> None:
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
        "0.3",
        "--llm-max-failures",
        "2",
        "--json",
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("ctxscope replay: no compaction could be made: every summary")
    assert "no complete answer within 0.3s" in lines[-1]
    assert any("summary request 1: asking" in line for line in lines)  # progress as it goes
    assert any("stopped calling" in line for line in lines)
    assert json.loads(done.stdout)["summary"]["compactions"] == 0  # the result is still printed
    assert asked(done.stderr) == 2 and settled_requests(server, 2) <= 2


def test_the_policy_file_sets_the_deadline_and_the_budget(
    server: MockLLMServer, tmp_path: Path
) -> None:
    server.configure(MockServerConfig(stall=100))
    session, policy = _files(tmp_path, "timeout_s = 0.3\nmax_consecutive_failures = 1\n")
    done = _replay_cli(str(session), "-p", str(policy), "--llm", server.url, "--model", MODEL)
    assert done.returncode == 3, done.stderr
    assert "within 0.3s" in done.stderr
    assert asked(done.stderr) == 1 and settled_requests(server, 1) <= 1


def test_replay_with_a_working_endpoint_exits_0_and_shows_progress(
    server: MockLLMServer, tmp_path: Path
) -> None:
    session, policy = _files(tmp_path)
    done = _replay_cli(str(session), "-p", str(policy), "--llm", server.url, "--model", MODEL)
    assert done.returncode == 0, done.stderr
    assert "summary request 1: answered" in done.stderr
    assert len(server.requests()) >= 3
