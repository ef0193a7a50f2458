"""The Claude Code loader on the real sessions of ``../shared/samples/claude-code`` (the training
set of ``SOURCES.md``): every file loads quietly, every compaction has the trigger the file
records, with its evidence. Skipped when the shared samples are not there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Role, Session, Severity
from tests.support.paths import REPO

SAMPLES = REPO.parent / "shared" / "samples" / "claude-code"
FILES = sorted(SAMPLES.rglob("*.jsonl")) if SAMPLES.is_dir() else []

K1 = "claude-2.1.226_auto-2x_flutter-docker-image_K1.jsonl"
OPUS_1M = "claude-2.1.232_manual-2x_opus-1m_entirecontext_8C.jsonl"
STARTS = "claude-2.1.219_auto-1x_1M-window_starts-with-boundary_oh-my-posh_10906611.jsonl"
HIVE_2076 = "claude-2.0.76_manual-1x_alignment-hive_dd381a75.jsonl"

COMPACTIONS = {
    # file: [(boundary line, trigger, preTokens, postTokens)], as SOURCES.md lists them
    "258c7280-ae70-4798-800f-63464d01a85d.jsonl": [(1256, "auto", 167_094, None)],
    "claude-2.1.4_auto-2x_alignment-hive_e7e29155.jsonl": [
        (369, "auto", 156_028, None),
        (713, "auto", 156_595, None),
    ],
    "claude-2.1.49_manual-1x_cipher-box_c644f3afc8.jsonl": [(297, "manual", 132_627, None)],
    K1: [(406, "auto", 213_002, 17_692), (750, "auto", 167_009, 20_255)],
    OPUS_1M: [(406, "manual", 115_665, 12_994), (875, "manual", 128_548, 18_169)],
    STARTS: [(5, "auto", 998_659, 18_101)],
    "dag_compact_after_rewind.jsonl": [(9, "auto", 150_000, None)],
}


def _sample(name: str) -> Path:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip("shared samples are not available")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.skipif(not FILES, reason="shared samples are not available")
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_loads_quietly(path: Path) -> None:
    session = load_session(path)
    assert session.messages
    loud = [d for d in session.diagnostics if d.severity is not Severity.INFO]
    assert loud == []
    assert session.agent_version is not None and session.provider is not None


@pytest.mark.parametrize("name", sorted(COMPACTIONS))
def test_each_compaction_has_its_recorded_trigger_with_evidence(name: str) -> None:
    session = load_session(_sample(name))
    found = [
        (e.source_line, e.trigger, e.tokens_before, e.tokens_after) for e in session.compactions
    ]
    assert found == COMPACTIONS[name]
    for event in session.compactions:
        assert event.trigger_evidence is not None
        assert f"compactMetadata.trigger is {event.trigger} (line {event.source_line})" in (
            event.trigger_evidence
        )
        assert session.messages[event.message_index].summary


def test_manual_compactions_name_their_commands() -> None:
    session = load_session(_sample(OPUS_1M))
    evidence = [e.trigger_evidence for e in session.compactions]
    assert evidence == [
        "compactMetadata.trigger is manual (line 406); the /compact command is recorded "
        "(lines 401, 409)",
        "compactMetadata.trigger is manual (line 875); the /compact command is recorded "
        "(lines 868, 878)",
    ]


def test_the_2_0_76_compaction_was_rewound() -> None:
    # The next prompt hangs off the line before the boundary and the next request is as large
    # as before it: the conversation went on without the compaction.
    session = load_session(_sample(HIVE_2076))
    (event,) = session.compactions
    assert event.rewound and (event.trigger, event.tokens_before) == ("manual", 46_742)
    assert session.metadata["rewound_compactions"] == [
        {"line": 145, "trigger": "manual", "tokens_before": 46_742}
    ]
    after = next(m for m in session.messages if m.source_line == 151)
    assert after.usage is not None and after.usage.prompt_tokens >= 46_742


def test_the_first_k1_compaction_sits_after_its_preserved_segment() -> None:
    path = _sample(K1)
    rows = _rows(path)
    boundary = rows[405]["compactMetadata"]["preservedSegment"]
    head_line = next(i for i, r in enumerate(rows, 1) if r.get("uuid") == boundary["headUuid"])
    assert head_line > 406  # the file writes the segment after the boundary and its summary
    session = load_session(path)
    event = session.compactions[0]
    assert event.first_kept_id == rows[head_line - 1]["message"]["id"]
    kept = next(m.index for m in session.messages if m.id == event.first_kept_id)
    assert kept < event.message_index
    segment = session.messages[kept : event.message_index]
    assert [m.source_line for m in segment if m.role is not Role.USER] == [408, 410]
    assert all(m.timestamp and m.timestamp < "2026-08-08T11:54" for m in segment)
    call = session.messages[kept]
    assert call.usage is not None and call.usage.prompt_tokens == 204_665  # from iterations
    assert session.messages[event.message_index].source_line == 407  # the summary
    # The second one keeps a segment written in place.
    second = session.compactions[1]
    kept_second = next(m.index for m in session.messages if m.id == second.first_kept_id)
    assert kept_second < second.message_index


def test_the_2_1_232_advisor_calls_show_their_real_context() -> None:
    session = load_session(_sample(OPUS_1M))
    advisor = [m for m in session.messages if m.source_line in (357, 494, 702)]
    assert len(advisor) == 3
    assert all(m.usage is not None and m.usage.prompt_tokens < 120_000 for m in advisor)
    calls = [m for m in session.model_calls() if m.usage is not None]
    assert max(m.usage.prompt_tokens for m in calls if m.usage) < 200_000  # not 212k–223k


def test_the_file_that_begins_at_a_boundary() -> None:
    session = load_session(_sample(STARTS))
    assert session.compactions[0].message_index == 0
    assert [d.line for d in session.diagnostics if d.code == "history-not-in-file"] == [5]
    assert (session.context_window, session.window_source) == (1_000_000, "inferred")
    assert session.metadata["entrypoint"] == "claude-desktop"


def test_attachments_are_counted_in_recent_files() -> None:
    session: Session = load_session(_sample(K1))
    rows = _rows(SAMPLES / K1)
    attachment_lines = {i for i, r in enumerate(rows, 1) if r.get("type") == "attachment"}
    counted = [m for m in session.messages if m.source_line in attachment_lines]
    assert counted and all(m.meta and not m.is_turn_start for m in counted)
    assert session.agent_version == "2.1.226" and session.provider == "anthropic"
