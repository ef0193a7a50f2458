"""The local OpenAI-compatible mock server, spoken to over real HTTP, and its command line."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from core.agents.overflow_errors import is_context_overflow_message
from core.llm.mock import MockSummarizer
from core.llm.mock_server import MockLLMServer, MockServerConfig, is_loopback_host
from core.llm.protocol import ChatMessage
from tests.support.mock_llm import MockLLMProcess
from tests.support.paths import REPO

MODEL = "ctxscope-mock"
PROMPT = "Write a summary with these sections.\n\n## Goal\n\n## Discoveries\n\n## Relevant files\n"
HEAD = [
    {"role": "system", "content": "You summarise coding sessions."},
    {
        "role": "user",
        "content": "Fix the crash in core/algorithms/split.py when the session is empty.",
    },
    {"role": "assistant", "content": "I found the cause: the walk indexes messages[-1] first."},
]


def chat_body(stream: bool = False, **extra: object) -> dict[str, object]:
    return {
        "model": MODEL,
        "messages": [*HEAD, {"role": "user", "content": PROMPT}],
        "max_tokens": 300,
        "stream": stream,
        **extra,
    }


def expected_text() -> str:
    head = [ChatMessage(role=m["role"], content=m["content"]) for m in HEAD]
    return MockSummarizer().write(head, PROMPT, 300)


def sse_events(data: bytes) -> list[str]:
    """The ``data:`` payloads of a server-sent-events body, in order."""
    return [
        line.removeprefix("data: ")
        for line in data.decode().split("\n")
        if line.startswith("data: ")
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[MockLLMProcess]:
    process = MockLLMProcess("--quiet")
    try:
        yield process
    finally:
        process.close()


@pytest.fixture(autouse=True)
def fresh(request: pytest.FixtureRequest) -> None:
    if "server" in request.fixturenames:
        request.getfixturevalue("server").configure()


# --- the API ----------------------------------------------------------------------------------


def test_models_lists_the_served_models(server: MockLLMProcess) -> None:
    status, _, data = server.request("GET", "/v1/models")
    assert status == 200
    body = json.loads(data)
    assert body["object"] == "list"
    assert [m["id"] for m in body["data"]] == [MODEL]
    status, _, data = server.request("GET", f"/v1/models/{MODEL}")
    assert status == 200 and json.loads(data)["id"] == MODEL


def test_plain_completion_is_the_offline_mock_summary_with_usage(
    server: MockLLMProcess,
) -> None:
    status, headers, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert status == 200
    body = json.loads(data)
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == expected_text()
    assert body["choices"][0]["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert float(headers["x-mock-duration-ms"]) >= 0
    # The same request always gets the same answer.
    _, _, again = server.request("POST", "/v1/chat/completions", chat_body())
    assert json.loads(again)["choices"][0]["message"]["content"] == expected_text()


def test_stream_is_sse_chunks_then_usage_then_done(server: MockLLMProcess) -> None:
    body = chat_body(stream=True, stream_options={"include_usage": True})
    status, headers, data = server.request("POST", "/v1/chat/completions", body)
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = sse_events(data)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == expected_text()
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) > 1
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finishes[-1] == "stop" and finishes.count("stop") == 1
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_stream_without_include_usage_has_no_usage_chunk(server: MockLLMProcess) -> None:
    _, _, data = server.request("POST", "/v1/chat/completions", chat_body(stream=True))
    chunks = [json.loads(e) for e in sse_events(data)[:-1]]
    assert all(c["choices"] for c in chunks)
    assert all("usage" not in c for c in chunks)


def test_bad_requests_get_a_400_naming_the_problem(server: MockLLMProcess) -> None:
    status, _, data = server.request("POST", "/v1/chat/completions", {"model": MODEL})
    assert status == 400
    assert "messages" in json.loads(data)["error"]["message"]


# --- faults -----------------------------------------------------------------------------------


def test_429_sends_retry_after_for_the_first_k_requests(server: MockLLMProcess) -> None:
    server.configure(fail_429=2, retry_after_s=1.5)
    statuses = []
    for _ in range(3):
        status, headers, _ = server.request("POST", "/v1/chat/completions", chat_body())
        statuses.append(status)
        if status == 429:
            assert headers["retry-after"] == "2"
            assert headers["retry-after-ms"] == "1500"
    assert statuses == [429, 429, 200]


def test_fault_budgets_fire_in_order(server: MockLLMProcess) -> None:
    server.configure(fail_429=1, fail_500=1)
    statuses = [server.request("POST", "/v1/chat/completions", chat_body())[0] for _ in range(3)]
    assert statuses == [429, 500, 200]
    assert [e["fault"] for e in server.requests()] == ["429", "500", None]


@pytest.mark.parametrize(
    ("style", "phrase"),
    [
        ("openai", "maximum context length is 20 tokens"),
        ("anthropic", "prompt is too long"),
        ("llamacpp", "exceeds the available context size"),
        ("vllm", "However, you requested"),
        ("openrouter", "maximum context length is 20 tokens"),
    ],
)
def test_context_limit_answers_a_recognisable_400(
    server: MockLLMProcess, style: str, phrase: str
) -> None:
    server.configure(context_limit_tokens=20, overflow_style=style)
    status, _, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert status == 400
    body = json.loads(data)
    error = body.get("error", body)
    assert phrase in error["message"]
    assert is_context_overflow_message(error["message"])
    if style == "openai":
        assert error["code"] == "context_length_exceeded"
    # Under the limit, the same request succeeds.
    server.configure(context_limit_tokens=100_000, overflow_style=style)
    assert server.request("POST", "/v1/chat/completions", chat_body())[0] == 200


def test_wrong_or_missing_key_gets_401(server: MockLLMProcess) -> None:
    server.configure(api_key="right-key")
    wrong = {"Authorization": "Bearer wrong-key"}
    status, _, data = server.request("POST", "/v1/chat/completions", chat_body(), wrong)
    assert status == 401
    assert json.loads(data)["error"]["code"] == "invalid_api_key"
    assert server.request("POST", "/v1/chat/completions", chat_body())[0] == 401
    assert server.request("GET", "/v1/models")[0] == 401
    right = {"Authorization": "Bearer right-key"}
    assert server.request("POST", "/v1/chat/completions", chat_body(), right)[0] == 200


def test_unknown_model_gets_404_model_not_found(server: MockLLMProcess) -> None:
    body = chat_body()
    body["model"] = "gpt-nope"
    status, _, data = server.request("POST", "/v1/chat/completions", body)
    assert status == 404
    assert json.loads(data)["error"]["code"] == "model_not_found"
    assert server.request("GET", "/v1/models/gpt-nope")[0] == 404


def test_malformed_answers(server: MockLLMProcess) -> None:
    server.configure(malformed=1)
    status, _, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(data)
    server.configure(malformed=1, malformed_kind="no-choices")
    _, _, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert "choices" not in json.loads(data)
    server.configure(malformed=1, malformed_kind="html")
    _, headers, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert headers["content-type"] == "text/html" and data.startswith(b"<html>")
    # The budget is spent: the next answer is well formed.
    _, _, data = server.request("POST", "/v1/chat/completions", chat_body())
    assert json.loads(data)["choices"][0]["message"]["content"] == expected_text()


def _raw_post(server: MockLLMProcess, body: dict[str, object]) -> bytes:
    """POST over a bare socket and read until the server closes or ends the body."""
    payload = json.dumps(body).encode()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {server.host}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + payload
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(request)
        received = bytearray()
        while chunk := sock.recv(65536):
            received += chunk
    return bytes(received)


def test_drop_closes_the_connection_mid_stream(server: MockLLMProcess) -> None:
    server.configure(drop=1, drop_after_chunks=3)
    data = _raw_post(server, chat_body(stream=True))
    assert data.startswith(b"HTTP/1.1 200")
    assert b"[DONE]" not in data and b'"finish_reason":"stop"' not in data
    assert data.count(b"data: ") == 3
    assert not data.endswith(b"0\r\n\r\n")  # the chunked body never ends
    entry = server.requests()[0]
    assert entry["fault"] == "drop-close" and entry["chunks_sent"] == 3


def test_drop_end_finishes_the_body_early(server: MockLLMProcess) -> None:
    server.configure(drop=1, drop_after_chunks=2, drop_mode="end")
    data = _raw_post(server, chat_body(stream=True))
    assert data.endswith(b"0\r\n\r\n")
    assert b"[DONE]" not in data and data.count(b"data: ") == 2


def test_drop_cuts_a_plain_answer_in_half(server: MockLLMProcess) -> None:
    server.configure(drop=1)
    data = _raw_post(server, chat_body())
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[
            1
        ]
    )
    assert 0 < len(body) < length


def test_admin_config_names_the_bad_field(server: MockLLMProcess) -> None:
    status, _, data = server.request("POST", "/_mock/config", {"fail_429": -1})
    assert status == 400 and "fail_429" in json.loads(data)["error"]["message"]
    status, _, data = server.request("POST", "/_mock/config", {"no_such_fault": 1})
    assert status == 400 and "no_such_fault" in json.loads(data)["error"]["message"]
    # A rejected configuration leaves the server as it was.
    assert server.request("POST", "/v1/chat/completions", chat_body())[0] == 200


def test_requests_log_reports_handling_time(server: MockLLMProcess) -> None:
    server.request("POST", "/v1/chat/completions", chat_body())
    server.request("POST", "/v1/chat/completions", chat_body(stream=True))
    entries = server.requests()
    assert [e["stream"] for e in entries] == [False, True]
    assert all(e["status"] == 200 and e["duration_ms"] >= 0 for e in entries)
    assert entries[1]["chunks_sent"] > 2


def _post_chat(port: int, body: dict[str, object]) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_requests_log_waits_for_requests_in_flight_and_drops_them_on_reconfigure() -> None:
    import threading

    with MockLLMServer(MockServerConfig(delay_s=0.3)) as mock:
        statuses: list[int] = []
        slow = threading.Thread(target=lambda: statuses.append(_post_chat(mock.port, chat_body())))
        slow.start()
        deadline = 50
        while not mock._server.state.in_flight and deadline:  # the request has been accepted
            threading.Event().wait(0.01)
            deadline -= 1
        # read while the slow request is being answered: its entry is there, final
        entries = mock.requests()
        slow.join()
        assert statuses == [200]
        assert [e["status"] for e in entries] == [200] and entries[0]["duration_ms"] >= 300

        # a request still running when the server is reconfigured does not land in the new log
        slow = threading.Thread(target=lambda: statuses.append(_post_chat(mock.port, chat_body())))
        slow.start()
        deadline = 50
        while not mock._server.state.in_flight and deadline:
            threading.Event().wait(0.01)
            deadline -= 1
        mock.configure(MockServerConfig())
        slow.join()
        assert statuses == [200, 200]
        assert mock.requests() == []


def _raw_chat(port: int, body: dict[str, object], timeout: float) -> socket.socket:
    """A chat request sent over a bare socket (its answer is read by the caller)."""
    payload = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    return sock


def test_stall_reads_the_request_and_never_answers() -> None:
    with MockLLMServer(MockServerConfig(stall=1)) as mock:
        sock = _raw_chat(mock.port, chat_body(), timeout=0.5)
        with sock, pytest.raises(TimeoutError):
            sock.recv(1)  # not a byte, not even the status line
        assert [e["fault"] for e in mock.requests()] == ["stall"]  # ended when the client left
        assert _post_chat(mock.port, chat_body()) == 200  # one request only: the budget is spent


def test_drip_sends_the_body_one_byte_at_a_time() -> None:
    with MockLLMServer(MockServerConfig(drip=1, drip_interval_s=0.2)) as mock:
        sock = _raw_chat(mock.port, chat_body(), timeout=5)
        with sock:
            received = b""
            while b"\r\n\r\n" not in received:  # the headers come at once
                received += sock.recv(65536)
            body_so_far = received.partition(b"\r\n\r\n")[2]
            more = sock.recv(65536)
            assert len(body_so_far) + len(more) <= 2  # then a byte at a time
        assert [e["fault"] for e in mock.requests()] == ["drip"]


@pytest.mark.parametrize("stream", [False, True])
def test_huge_answers_carry_the_size_asked_for(stream: bool) -> None:
    size = 300_000
    with MockLLMServer(MockServerConfig(huge=1, huge_bytes=size)) as mock:
        conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
        try:
            conn.request("POST", "/v1/chat/completions", body=json.dumps(chat_body(stream)))
            data = conn.getresponse().read()
        finally:
            conn.close()
        if stream:
            text = "".join(
                c["delta"].get("content") or ""
                for event in sse_events(data)
                if event != "[DONE]"
                for c in json.loads(event)["choices"]
            )
        else:
            text = json.loads(data)["choices"][0]["message"]["content"]
        assert len(text) == size
        assert [e["fault"] for e in mock.requests()] == ["huge"]


# --- in-process use and the command line --------------------------------------------------------


def test_in_process_server_serves_and_stops() -> None:
    with MockLLMServer(MockServerConfig(models=["a", "b"])) as mock:
        assert mock.url.startswith("http://127.0.0.1:")
        sock = socket.create_connection(("127.0.0.1", mock.port), timeout=5)
        sock.close()
        mock.configure(MockServerConfig(fail_500=1))
        assert mock.config.fail_500 == 1
        port = mock.port
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_loopback_hosts() -> None:
    assert is_loopback_host("127.0.0.1") and is_loopback_host("localhost")
    assert is_loopback_host("::1") and is_loopback_host("[::1]") and is_loopback_host("127.3.4.5")
    assert not is_loopback_host("0.0.0.0") and not is_loopback_host("192.168.1.10")
    assert not is_loopback_host("example.com")


def test_cli_fault_options_and_model_names() -> None:
    process = MockLLMProcess("--quiet", "--fail-500", "1", "--model", "a", "--model", "b")
    try:
        status, _, data = process.request("GET", "/v1/models")
        assert status == 200
        assert [m["id"] for m in json.loads(data)["data"]] == ["a", "b"]
        body = chat_body()
        body["model"] = "b"
        statuses = [process.request("POST", "/v1/chat/completions", body)[0] for _ in range(2)]
        assert statuses == [500, 200]
        assert process.stop() == 0
    finally:
        process.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_stops_cleanly_on_signals(sig: int) -> None:
    process = MockLLMProcess()
    try:
        process.request("GET", "/v1/models")
        assert process.stop(sig) == 0
        log = process.stderr()
    finally:
        process.close()
    assert "stopped" in log
    assert "Traceback" not in log
    assert "GET /v1/models" in log  # requests are logged unless --quiet


def test_cli_reports_a_taken_port_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                "from tui.cli.main import main; main()",
                "mock-llm",
                "--port",
                str(port),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: cannot listen on 127.0.0.1:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_requires_the_key_variable_it_names() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from tui.cli.main import main; main()",
            "mock-llm",
            "--port",
            "0",
            "--require-key-env",
            "CTXSCOPE_TEST_UNSET_VARIABLE",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "CTXSCOPE_TEST_UNSET_VARIABLE" in result.stderr and "Traceback" not in result.stderr


def test_server_modules_do_not_load_openai_or_ui() -> None:
    code = (
        "import sys, core.llm.mock_server, core.agents.overflow_errors, tui.cli.commands.mock_llm; "
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'openai', 'textual', 'rich'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
