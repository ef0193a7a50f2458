"""The pi loader: v1 linear files, v2/v3 trees, compactions at the point they happened."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from core.formats import LoadError, detect_format, load_session
from core.formats import pi as pi_format
from core.model.session import Role, Session, SourceFormat, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "pi"
SAMPLES = REPO.parent / "shared" / "samples"
PI_SAMPLE = SAMPLES / "pi" / "before-compaction.jsonl"


def _snapshot(path: Path) -> tuple[int, bytes]:
    return path.stat().st_mtime_ns, path.read_bytes()


def _raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- the real v1 sample ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_raw() -> list[dict[str, Any]]:
    if not PI_SAMPLE.exists():
        pytest.skip("shared samples are not available")
    return _raw_lines(PI_SAMPLE)


@pytest.fixture(scope="module")
def sample_session(sample_raw: list[dict[str, Any]]) -> Session:
    return load_session(PI_SAMPLE)


def test_sample_is_detected_as_pi(sample_raw: list[dict[str, Any]]) -> None:
    assert detect_format(PI_SAMPLE) is SourceFormat.PI


def test_sample_compactions_match_the_file(
    sample_raw: list[dict[str, Any]], sample_session: Session
) -> None:
    raw_compactions = [(n, r) for n, r in enumerate(sample_raw, 1) if r["type"] == "compaction"]
    assert len(sample_session.compactions) == len(raw_compactions)
    assert [c.tokens_before for c in sample_session.compactions] == [
        r["tokensBefore"] for _, r in raw_compactions
    ]
    # The brief's figures, verified against the file above rather than assumed.
    assert [r["tokensBefore"] for _, r in raw_compactions] == [175004, 185014]
    for (line, record), event in zip(raw_compactions, sample_session.compactions, strict=True):
        assert event.source_line == line
        assert event.summary == record["summary"]
        # firstKeptEntryIndex counts parsed entries with the header at 0 -> line index + 1.
        kept_line = record["firstKeptEntryIndex"] + 1
        assert sample_raw[kept_line - 1]["type"] == "message"
        assert event.first_kept_id == f"line-{kept_line}"


def test_sample_tokens_before_equal_last_usage_before_each_compaction(
    sample_raw: list[dict[str, Any]], sample_session: Session
) -> None:
    last_total = None
    expected = []
    for record in sample_raw:
        if record["type"] == "message" and record["message"]["role"] == "assistant":
            last_total = record["message"]["usage"]["totalTokens"]
        if record["type"] == "compaction":
            assert record["tokensBefore"] == last_total
            expected.append(last_total)
    for event in sample_session.compactions:
        before = [m for m in sample_session.messages[: event.message_index] if m.is_model_call]
        assert before[-1].usage is not None
        assert before[-1].usage.total == event.tokens_before
        assert before[-1].usage.context_tokens == event.tokens_before
    assert [e.tokens_before for e in sample_session.compactions] == expected


def test_sample_keeps_the_full_recording_in_order(
    sample_raw: list[dict[str, Any]], sample_session: Session
) -> None:
    raw_messages = sum(1 for r in sample_raw if r["type"] == "message")
    raw_compactions = sum(1 for r in sample_raw if r["type"] == "compaction")
    messages = sample_session.messages
    assert len(messages) == raw_messages + raw_compactions
    assert [m.index for m in messages] == list(range(len(messages)))
    lines = [m.source_line for m in messages]
    assert None not in lines
    assert lines == sorted(line for line in lines if line is not None)
    for event in sample_session.compactions:
        summary = messages[event.message_index]
        assert summary.summary and summary.role is Role.USER
        assert summary.source_line == event.source_line
        assert summary.compaction_boundary
        kept = next(m for m in messages if m.id == event.first_kept_id)
        assert kept.index < event.message_index


def test_sample_roles_and_turns(sample_raw: list[dict[str, Any]], sample_session: Session) -> None:
    roles = [r["message"]["role"] for r in sample_raw if r["type"] == "message"]
    messages = sample_session.messages
    assert sum(m.role is Role.ASSISTANT for m in messages) == roles.count("assistant")
    assert sum(m.role is Role.TOOL for m in messages) == roles.count("toolResult")
    # pi counts the user's !commands (bashExecution) as turn starts.
    assert len(sample_session.turn_starts()) == roles.count("user") + roles.count("bashExecution")
    assert (
        sample_session.model
        == [r for r in sample_raw if r["type"] == "model_change"][-1]["modelId"]
    )
    assert sample_session.project == sample_raw[0]["cwd"]
    aborted = [m for m in messages if m.stop_reason == "aborted"]
    assert aborted and all(m.error for m in aborted)


# -- v3 tree fixture -------------------------------------------------------------------------


@pytest.fixture
def v3() -> Session:
    return pi_format.load(FIXTURES / "v3-tree.jsonl")


def test_v3_follows_the_leaf_path(v3: Session) -> None:
    ids = [m.id for m in v3.messages]
    assert "e000000a" not in ids and "e000000b" not in ids  # the abandoned branch
    assert [d.code for d in v3.diagnostics] == ["other-branches"]
    assert ids == [
        "e0000003",
        "e0000004",
        "e0000005",
        "e0000006",
        "e0000007",
        "e0000008",
        "e0000009",
        "e000000c",
        "e000000d",
        "e000000e",
        "e000000f",
        "e0000011",
        "e0000012",
        "e0000013",
    ]
    assert v3.messages[1].parent_id == "e0000003"


def test_v3_message_mapping(v3: Session) -> None:
    by_id = {m.id: m for m in v3.messages}
    first = by_id["e0000004"]
    assert first.reasoning == "I should read cart.py first."
    assert first.tool_calls[0].name == "read" and first.tool_calls[0].arguments == {
        "path": "shop/cart.py"
    }
    assert first.usage is not None and first.usage.convention is UsageConvention.PI
    assert first.usage.total == 3060 and first.usage.cache_write == 3000
    assert first.model == "claude-sonnet-4-5" and first.stop_reason == "toolUse"
    tool = by_id["e0000005"]
    assert tool.role is Role.TOOL and tool.tool_result is not None
    assert tool.tool_result.call_id == "call_read_1" and tool.tool_result.truncated_by_tool
    bash = by_id["e0000007"]
    assert bash.role is Role.USER and bash.is_turn_start
    assert "pytest -q" in bash.text and "2 failed" in bash.text and "code 1" in bash.text
    branch = by_id["e000000c"]
    assert branch.meta and not branch.is_turn_start and "percentage" in branch.text
    reminder = by_id["e0000011"]
    assert reminder.meta and reminder.text.startswith("Reminder")
    failed = by_id["e0000013"]
    assert failed.error and "prompt is too long" in failed.error and failed.stop_reason == "error"
    assert v3.turn_starts() == [
        by_id[i].index for i in ("e0000003", "e0000007", "e000000d", "e0000012")
    ]
    assert v3.metadata["thinking_level"] == "medium"
    assert v3.model == "claude-sonnet-4-5" and v3.provider == "anthropic"
    # pi records no window: the loader leaves it to load_session (the model table here)
    assert v3.context_window is None
    assert load_session(FIXTURES / "v3-tree.jsonl").context_window == 200_000


def test_v3_compaction(v3: Session) -> None:
    assert len(v3.compactions) == 1
    event = v3.compactions[0]
    summary = v3.messages[event.message_index]
    assert summary.id == "e000000f" and summary.summary and summary.text == event.summary
    assert event.first_kept_id == "e000000d"
    assert event.tokens_before == 5200
    previous_call = [m for m in v3.messages[: event.message_index] if m.is_model_call][-1]
    assert previous_call.usage is not None and previous_call.usage.total == event.tokens_before


# -- v1 fixture ------------------------------------------------------------------------------


def test_v1_synthesizes_line_ids_and_maps_first_kept_index() -> None:
    path = FIXTURES / "v1-linear.jsonl"
    raw = _raw_lines(path)
    session = pi_format.load(path)
    assert session.metadata["pi_version"] == 1
    assert all(m.id == f"line-{m.source_line}" for m in session.messages)
    assert session.messages[1].parent_id == session.messages[0].id
    (event,) = session.compactions
    index = next(r for r in raw if r["type"] == "compaction")["firstKeptEntryIndex"]
    assert raw[index]["type"] == "thinking_level_change"  # not a message: the next message is kept
    assert event.first_kept_id == f"line-{index + 2}"
    assert session.messages[event.message_index].summary
    assert session.metadata["thinking_level"] == "high"
    assert session.model == "claude-opus-4-5"
    assert session.diagnostics == []


# -- bad input -------------------------------------------------------------------------------


def test_broken_file_loads_with_diagnostics() -> None:
    path = FIXTURES / "broken.jsonl"
    before = _snapshot(path)
    session = load_session(path)
    codes = {(d.line, d.code) for d in session.diagnostics}
    assert (3, "invalid-json") in codes
    assert (4, "unknown-entry") in codes
    assert (6, "partial-last-line") in codes
    assert [m.role for m in session.messages] == [Role.USER, Role.ASSISTANT]
    assert _snapshot(path) == before


def test_missing_parent_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "x", "cwd": "/w"},
        {
            "type": "message",
            "id": "b",
            "parentId": "gone",
            "message": {"role": "user", "content": "hi"},
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    session = pi_format.load(path)
    assert [m.text for m in session.messages] == ["hi"]
    assert any(d.code == "missing-parent" for d in session.diagnostics)


def test_not_a_pi_file(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(LoadError):
        pi_format.load(path)
    assert pi_format.sniff(path, path.read_bytes()) == 0.0


def test_fixtures_are_detected_and_not_modified() -> None:
    for path in sorted(FIXTURES.glob("*.jsonl")):
        before = _snapshot(path)
        assert detect_format(path) is SourceFormat.PI, path.name
        load_session(path)
        assert _snapshot(path) == before
        assert os.access(path, os.R_OK)


def test_ctxscope_header_is_not_pi() -> None:
    head = b'{"type":"session","schema":"ctxscope","version":1,"id":"x","format":"pi"}\n'
    assert pi_format.sniff(Path("x.jsonl"), head) == 0.0
