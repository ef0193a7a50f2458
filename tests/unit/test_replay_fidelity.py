"""Replaying a real session under its own agent's policy fires where the agent fired.

The expectations are read from the raw files with plain ``json``, independently of our loaders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Session
from core.policy import get_preset
from core.replay import native_policy, replay
from tests.support.paths import REPO

SAMPLES = REPO.parent / "shared" / "samples"
PI_SAMPLE = SAMPLES / "pi" / "before-compaction.jsonl"
CLAUDE_SAMPLE = SAMPLES / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        pytest.skip(f"sample {path.name} is not available")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _call_of_line(session: Session, result_points: list[Any], line_number: int) -> int:
    """Index of the replay call whose message starts at ``line_number`` (1-based) of the file."""
    for point in result_points:
        if session.messages[point.message_index].source_line == line_number:
            return int(point.call_index)
    raise AssertionError(f"no model call starts at line {line_number}")


def test_pi_preset_reproduces_the_pi_sample() -> None:
    records = _lines(PI_SAMPLE)
    window, reserve = 200_000, 16_384
    limit = window - reserve
    assert limit == 183_616

    # From the raw file: the two compactions, and the first assistant message after the first
    # one whose totalTokens exceeds the threshold.
    compactions = [i for i, r in enumerate(records) if r.get("type") == "compaction"]
    assert [records[i]["tokensBefore"] for i in compactions] == [175_004, 185_014]
    assert records[compactions[0]]["tokensBefore"] <= limit  # below: the user compacted
    crossing = next(
        i
        for i in range(compactions[0] + 1, len(records))
        if records[i].get("type") == "message"
        and records[i]["message"].get("role") == "assistant"
        and (records[i]["message"].get("usage") or {}).get("totalTokens", 0) > limit
    )
    assert crossing < compactions[1]
    over_limit = [
        i
        for i, r in enumerate(records)
        if r.get("type") == "message"
        and r["message"].get("role") == "assistant"
        and (r["message"].get("usage") or {}).get("totalTokens", 0) > limit
    ]
    assert over_limit == [crossing]  # no other call of the session crosses it

    session = load_session(PI_SAMPLE)
    if session.context_window is None:  # pi files do not store the window
        session.context_window = window
    assert session.context_window == window

    result = replay(session, get_preset("pi"))
    assert result.threshold == limit
    assert result.recording_policy

    # Exactly one compaction of the policy's own, fired on the crossing call's figure ...
    own = [e for e in result.events if e.kind == "compact"]
    assert len(own) == 1
    (event,) = own
    crossing_call = _call_of_line(session, result.points, crossing + 1)
    assert event.trigger == "threshold"
    assert event.trigger_call_index == crossing_call
    assert event.tokens_before == 185_014
    # ... right before the next call, as the recording did.
    assert event.call_index is not None and event.call_index > crossing_call
    assert result.points[event.call_index - 1].call_index == crossing_call

    # The first, below-threshold compaction was the user's: applied where it happened.
    manual = [e for e in result.events if e.kind == "recorded-compaction"]
    assert len(manual) == 1
    assert manual[0].trigger == "manual"
    assert manual[0].recorded_index == 0

    assert [(row.trigger, row.outcome) for row in result.fidelity] == [
        ("manual", "manual"),
        ("auto", "same"),  # pi writes no trigger: over its threshold, so automatic
    ]
    assert result.fidelity[1].call_delta == 0
    assert result.summary.compactions == 2
    assert result.summary.overflows_simulated == 0

    # Before any change the policy sees the recorded figures themselves.
    first_change = min(
        e.call_index for e in result.events if e.kind != "truncate" and e.call_index is not None
    )
    for point in result.points[:first_change]:
        if point.recorded_tokens is not None:
            assert point.simulated_tokens == point.recorded_tokens


def test_other_policies_on_the_pi_sample_say_where_they_differ() -> None:
    _lines(PI_SAMPLE)
    session = load_session(PI_SAMPLE)
    if session.context_window is None:
        session.context_window = 200_000
    result = replay(session, get_preset("codex"))
    assert not result.recording_policy
    outcomes = [row.outcome for row in result.fidelity]
    assert outcomes[0] == "manual"
    assert outcomes[1] in ("earlier", "later", "missed")  # codex's 90% is 180,000, not 183,616


def test_claude_code_preset_reproduces_the_claude_sample() -> None:
    records = _lines(CLAUDE_SAMPLE)
    boundary = next(
        i
        for i, r in enumerate(records)
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary"
    )
    pre_tokens = records[boundary]["compactMetadata"]["preTokens"]
    assert records[boundary]["compactMetadata"]["trigger"] == "auto"
    assert pre_tokens > 167_000  # the claude-code preset's threshold: 200k - 33k
    last_assistant = max(
        i
        for i in range(boundary)
        if records[i].get("type") == "assistant" and records[i].get("message", {}).get("usage")
    )
    session = load_session(CLAUDE_SAMPLE)
    result = replay(session, get_preset("claude-code"))
    (row,) = result.fidelity
    assert row.outcome == "same"
    (event,) = [e for e in result.events if e.kind == "compact"]
    call = event.trigger_call_index
    assert call is not None
    line = session.messages[result.points[call].message_index].source_line
    assert line is not None
    # the crossing call is the last API call before the boundary (its lines share one message id)
    message_id = records[last_assistant]["message"]["id"]
    assert records[line - 1]["message"]["id"] == message_id


OUR_SAMPLES = REPO / "sample_sessions"


def _recorded_crossing_call(path: Path, limit: int) -> tuple[int, int]:
    """(index among calls, figure) of the first Codex call whose ``total_tokens`` plus Codex's
    own estimate of the tool outputs recorded after it (bytes of their compact JSON / 4) reached
    ``limit``, read from the raw rollout with plain json (repeated token_count copies and the
    reset one after a compaction skipped)."""
    calls = -1
    figure = 0
    previous = None
    for line in path.read_text().splitlines():
        row = json.loads(line)
        payload = row.get("payload") or {}
        kind = payload.get("type")
        if row.get("type") == "response_item" and kind in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            size = len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode())
            figure += (size + 3) // 4
            continue
        if row.get("type") == "response_item" and kind in ("function_call", "custom_tool_call"):
            if calls >= 0 and figure >= limit:
                return calls, figure
            continue
        if row.get("type") != "event_msg" or kind != "token_count":
            continue
        last = (payload.get("info") or {}).get("last_token_usage")
        if not last or last == previous or not last.get("input_tokens"):
            previous = last or previous
            continue
        previous = last
        calls += 1
        figure = last["total_tokens"]
    raise AssertionError("no call reached the limit")


def test_codex_preset_fires_where_codex_compacted() -> None:
    (path,) = (OUR_SAMPLES / "codex").glob("rollout-*.jsonl")
    session = load_session(path)
    # Codex records 95% of a 272k window and compacts at 90% of the full one.
    limit = session.metadata["model_window"] * 9 // 10
    assert limit == 244_800
    call, figure = _recorded_crossing_call(path, limit)
    result = replay(session, native_policy(session))
    assert result.threshold == limit and result.thresholds[0].source == "rule"
    assert [row.outcome for row in result.fidelity] == ["same"]
    compacts = [e for e in result.events if e.kind == "compact"]
    assert len(compacts) == 1
    # the compaction comes right after the call whose total, with its tool outputs, crossed it
    assert compacts[0].trigger_call_index == call
    assert compacts[0].tokens_before == figure


def test_compaction_cut_is_after_the_head_when_leading_context_stays() -> None:
    session = load_session(OUR_SAMPLES / "claude-code" / "compacted.jsonl")
    result = replay(session, get_preset("seed"))
    compacts = [e for e in result.events if e.kind == "compact"]
    assert compacts
    for event in compacts:
        assert event.head_indices
        assert event.message_index == min(
            j for j in event.tail_indices if j > max(event.head_indices)
        )
        assert event.message_index > max(event.head_indices)
