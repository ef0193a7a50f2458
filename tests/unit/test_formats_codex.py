"""The Codex loader: one message per model call, last_token_usage, compaction, legacy files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import codex as cx
from core.formats import detect_format, load_session
from core.formats.jsonl import read_record
from core.model.session import Role, Session, SourceFormat, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "codex"
ROLLOUT = FIXTURES / "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
LEGACY = FIXTURES / "legacy-rollout.jsonl"
OLD_COMPACT = FIXTURES / "rollout-old-compacted.jsonl"
SAMPLES = REPO.parent / "shared" / "samples" / "codex"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _sample(fragment: str) -> Path:
    if not SAMPLES.is_dir():
        pytest.skip("shared samples are not available")
    matches = sorted(SAMPLES.glob(f"*{fragment}*.jsonl"))
    if not matches:
        pytest.skip(f"sample {fragment} is not available")
    return matches[0]


def _distinct_last_usages(path: Path) -> list[dict[str, int]]:
    """last_token_usage of each request, as an independent reader would extract it: skip null
    info, the repeated copies (same cumulative and last figures as the previous event) and the
    all-zero / input-less entries that follow a compaction."""
    out: list[dict[str, int]] = []
    previous = None
    for row in _lines(path):
        payload = row.get("payload") or {}
        if row.get("type") != "event_msg" or payload.get("type") != "token_count":
            continue
        info = payload.get("info")
        if not info or not info.get("last_token_usage"):
            continue
        stamp = json.dumps(
            [info.get("total_token_usage"), info["last_token_usage"]], sort_keys=True
        )
        if stamp == previous:
            continue
        previous = stamp
        last = info["last_token_usage"]
        if last["input_tokens"] == 0 and last["output_tokens"] == 0:
            continue
        out.append(last)
    return out


@pytest.fixture(scope="module")
def rollout() -> Session:
    return load_session(ROLLOUT)


# -- the fixture rollout --------------------------------------------------------------------


def test_detected_as_codex() -> None:
    for path in (ROLLOUT, LEGACY, OLD_COMPACT):
        assert detect_format(path) is SourceFormat.CODEX


def test_session_facts(rollout: Session) -> None:
    assert rollout.id == "019d0000-aaaa-7bbb-8ccc-000000000001"
    assert rollout.project == "/home/dev/shop"
    assert rollout.model == "gpt-5.1-codex-max"  # from the last turn_context
    assert rollout.metadata["models"] == ["gpt-5.1-codex", "gpt-5.1-codex-max"]
    assert rollout.metadata["cli_version"] == "0.130.0"
    assert rollout.metadata["truncation_policy"] == {"mode": "tokens", "limit": 10000}
    assert (rollout.context_window, rollout.window_source) == (272000, "recorded")


def test_context_messages_are_meta(rollout: Session) -> None:
    first = rollout.messages[0]
    assert first.role is Role.SYSTEM and first.meta
    assert first.text == "You are a coding agent. Be concise."  # base_instructions
    developer = rollout.messages[1]
    assert developer.role is Role.SYSTEM and developer.meta
    injected = [m for m in rollout.messages if m.role is Role.USER and m.meta]
    assert any(m.text.startswith("# AGENTS.md") for m in injected)
    assert any(m.text.startswith("<environment_context>") for m in injected)
    starts = [rollout.messages[i].text for i in rollout.turn_starts()]
    assert starts == ["Why does the checkout test fail?", "Apply the fix."]


def test_user_message_events_are_not_duplicated(rollout: Session) -> None:
    prompt = "Why does the checkout test fail?"
    real = [m for m in rollout.messages if m.text == prompt and not m.meta]
    assert len(real) == 1  # the event_msg/user_message copy is ignored
    assert not any(m.text == "Running the tests." for m in rollout.messages if m.role is Role.USER)


def test_one_assistant_message_per_model_call(rollout: Session) -> None:
    calls = rollout.model_calls()
    assert len(calls) == 5
    first = calls[0]
    # reasoning + commentary + two function calls of one response
    assert first.reasoning == "Run the failing test first."
    assert first.text == "Running the tests."
    assert [t.id for t in first.tool_calls] == ["call_run", "call_cat"]
    assert first.tool_calls[0].arguments == {
        "cmd": "pytest -q tests/test_checkout.py",
        "yield_time_ms": 1000,
    }
    assert first.tool_calls[1].arguments == '{"cmd": "cat cart.py"'  # invalid JSON kept as is
    assert first.model == "gpt-5.1-codex"
    assert [t.name for t in calls[1].tool_calls] == ["web_search", "apply_patch"]
    assert [t.name for t in calls[2].tool_calls] == ["local_shell", "update_plan"]


def test_usage_from_last_token_usage(rollout: Session) -> None:
    expected = _distinct_last_usages(ROLLOUT)
    calls = [m for m in rollout.model_calls() if m.usage is not None]
    assert len(calls) == len(expected) == 5
    for call, last in zip(calls, expected, strict=True):
        usage = call.usage
        assert usage is not None and usage.convention is UsageConvention.OPENAI
        assert usage.input == last["input_tokens"] - last["cached_input_tokens"]
        assert usage.cache_read == last["cached_input_tokens"]
        assert usage.prompt_tokens == last["input_tokens"]  # before the reply
        assert usage.context_after_reply == last["total_tokens"]  # after it
        assert usage.reasoning == last["reasoning_output_tokens"]
    # the repeated token_count (same totals) is not attached twice
    first_usage = rollout.model_calls()[0].usage
    assert first_usage is not None
    assert first_usage.total == 12300


def test_tool_outputs(rollout: Session) -> None:
    results = {m.tool_result.call_id: m.tool_result for m in rollout.messages if m.tool_result}
    assert results["call_run"].tool_name == "exec_command"
    assert (
        results["call_cat"].output
        == "def total(items):\n\n    return sum(i.price for i in items[1:])"
    )
    assert results["call_patch"].is_error is True  # exit_code 1 in the custom tool's metadata
    assert results["call_ls"].tool_name == "local_shell"
    assert results["call_ghost"].tool_name is None
    diagnostics = {(d.code, d.line) for d in rollout.diagnostics}
    assert ("orphan-tool-result", 26) in diagnostics
    assert ("missing-tool-result", 27) in diagnostics  # update_plan never answered
    # web_search runs on the server: no missing-result diagnostic for it
    assert not any("web_search" in d.message for d in rollout.diagnostics)
    assert ("unknown-record", 44) in diagnostics  # a newer envelope type, skipped


def test_compaction_replaces_history(rollout: Session) -> None:
    assert len(rollout.compactions) == 1
    event = rollout.compactions[0]
    raw = next(o for o in _lines(ROLLOUT) if o["type"] == "compacted")["payload"]
    assert event.summary == raw["message"]
    assert event.source_line == 35
    after = rollout.messages[event.message_index :]
    history = raw["replacement_history"]
    # the replacement history is emitted again, then the conversation goes on
    assert [m.text for m in after[: len(history)]] == [h["content"][0]["text"] for h in history]
    assert after[0].compaction_boundary and after[0].meta and not after[0].is_turn_start
    assert after[1].summary and not after[1].is_turn_start
    assert after[2].text == "Apply the fix." and after[2].is_turn_start
    # context_compacted is not a second event; the zero token_count attaches nowhere
    assert sum(1 for m in rollout.messages if m.compaction_boundary) == 1


def test_offsets_re_read_the_raw_record(rollout: Session) -> None:
    rows = _lines(ROLLOUT)
    for message in rollout.messages:
        raw = read_record(ROLLOUT, message.source_offset or 0)
        assert raw == rows[(message.source_line or 0) - 1]


def test_compacted_without_history_is_a_summary_message() -> None:
    session = load_session(OLD_COMPACT)
    assert len(session.compactions) == 1
    summary = session.messages[session.compactions[0].message_index]
    assert summary.summary and summary.compaction_boundary
    assert summary.text == "The parser was refactored into three functions."
    assert [session.messages[i].text for i in session.turn_starts()] == [
        "Refactor the parser.",
        "Now add tests.",
    ]


def test_legacy_unenveloped_rollout() -> None:
    session = load_session(LEGACY)
    assert session.metadata["legacy_format"] is True
    assert session.id == "5a1e0000-0000-4000-8000-00000000000a"
    assert session.messages[0].role is Role.SYSTEM and session.messages[0].meta
    calls = session.model_calls()
    assert [t.arguments for t in calls[0].tool_calls] == [{"command": ["ls"]}]
    assert calls[0].reasoning == "Use ls."
    tool = next(m for m in session.messages if m.role is Role.TOOL)
    assert tool.tool_result is not None and tool.tool_result.tool_name == "shell"
    assert calls[1].text == "One file: README.md."
    assert not session.diagnostics


def test_sniff_scores() -> None:
    head = ROLLOUT.read_bytes()[:65536]
    assert cx.sniff(ROLLOUT, head) == 1.0
    assert cx.sniff(Path("x.jsonl"), head) >= 0.9
    assert cx.sniff(LEGACY, LEGACY.read_bytes()) >= 0.6
    claude = b'{"type":"user","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n'
    assert cx.sniff(Path("x.jsonl"), claude) == 0.0


# -- real rollouts (skipped when the shared samples are absent) ------------------------------


def test_real_single_compaction_019c8a59() -> None:
    path = _sample("019c8a59")
    rows = _lines(path)
    compacted = [i + 1 for i, o in enumerate(rows) if o["type"] == "compacted"]
    session = load_session(path)
    assert len(compacted) == 1
    assert len(session.compactions) == 1
    event = session.compactions[0]
    assert event.source_line == compacted[0]
    history = rows[compacted[0] - 1]["payload"]["replacement_history"]
    replayed = session.messages[event.message_index : event.message_index + len(history)]
    assert all(m.source_line == compacted[0] for m in replayed)
    assert replayed[0].compaction_boundary
    assert replayed[-1].summary  # the encrypted compaction item
    # kept copies start no turn and are no model call
    assert not any(m.is_turn_start or m.is_model_call for m in replayed)
    kept_assistant = [m for m in replayed if m.role is Role.ASSISTANT]
    assert len(kept_assistant) == sum(1 for h in history if h.get("role") == "assistant") > 0


def test_real_per_call_context_follows_last_token_usage_019c8a59() -> None:
    path = _sample("019c8a59")
    expected = _distinct_last_usages(path)
    session = load_session(path)
    calls = [m for m in session.model_calls() if m.usage is not None]
    assert len(expected) > 100
    assert [m.usage.prompt_tokens for m in calls if m.usage] == [
        u["input_tokens"] for u in expected
    ]
    assert [m.usage.context_after_reply for m in calls if m.usage] == [
        u["total_tokens"] for u in expected
    ]
    # cumulative totals are never used as a context figure
    cumulative_max = max(
        o["payload"]["info"]["total_token_usage"]["input_tokens"]
        for o in _lines(path)
        if o["type"] == "event_msg"
        and o["payload"].get("type") == "token_count"
        and o["payload"].get("info")
    )
    assert max(m.usage.prompt_tokens for m in calls if m.usage) < cumulative_max


def test_real_turns_follow_user_message_events_019c8a59() -> None:
    path = _sample("019c8a59")
    echoes = sum(
        1
        for o in _lines(path)
        if o["type"] == "event_msg" and o["payload"].get("type") == "user_message"
    )
    session = load_session(path)
    assert len(session.turn_starts()) == echoes


def test_real_window_019e1625() -> None:
    path = _sample("019e1625")
    windows = {
        o["payload"]["info"]["model_context_window"]
        for o in _lines(path)
        if o["type"] == "event_msg"
        and o["payload"].get("type") == "token_count"
        and o["payload"].get("info")
    }
    session = load_session(path)
    assert windows == {258400}
    assert session.context_window == 258400
    assert session.window_source == "recorded"
    assert session.model == "gpt-5.5"


def test_real_function_calls_joined_019e1625() -> None:
    path = _sample("019e1625")
    rows = [o["payload"] for o in _lines(path) if o["type"] == "response_item"]
    call_ids = {p["call_id"] for p in rows if p["type"] in ("function_call", "custom_tool_call")}
    outputs = [
        p["call_id"]
        for p in rows
        if p["type"] in ("function_call_output", "custom_tool_call_output")
    ]
    session = load_session(path)
    tools = [m.tool_result for m in session.messages if m.tool_result]
    assert [t.call_id for t in tools] == outputs
    assert {t.call_id for t in tools} == call_ids
    assert all(t.tool_name for t in tools)


def test_codex_compaction_records_the_context_it_compacted_at(tmp_path: Path) -> None:
    lines = [
        {
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "session_meta",
            "payload": {"id": "s1", "cwd": "/w"},
        },
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hi"}],
            },
        },
        {
            "timestamp": "2026-01-01T00:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "yo"}],
            },
        },
        {
            "timestamp": "2026-01-01T00:00:03Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 900,
                        "cached_input_tokens": 0,
                        "output_tokens": 100,
                        "total_tokens": 1000,
                    },
                    "total_token_usage": {
                        "input_tokens": 900,
                        "output_tokens": 100,
                        "total_tokens": 1000,
                    },
                    "model_context_window": 258400,
                },
            },
        },
        {
            "timestamp": "2026-01-01T00:00:04Z",
            "type": "compacted",
            "payload": {"message": "summary text"},
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = load_session(path)
    assert [c.tokens_before for c in session.compactions] == [1000]
    assert session.metadata["model_window"] == 272_000
