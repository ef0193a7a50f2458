"""Claude Code compactions: the trigger and its evidence, overflow recovery, preserved segments
(partial compaction, 2.1.2xx), a file that begins at a boundary, and rewound compactions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.formats import load_session
from core.model.session import Session
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "claude"
OVERFLOW = FIXTURES / "overflow_recovery.jsonl"
COMPACT = FIXTURES / "compact_after_rewind.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _row(rows: list[dict[str, Any]], uuid: str) -> dict[str, Any]:
    return next(r for r in rows if r.get("uuid") == uuid)


def _replace(rows: list[dict[str, Any]], uuid: str, *new: dict[str, Any]) -> list[dict[str, Any]]:
    k = rows.index(_row(rows, uuid))
    return [*rows[:k], *new, *rows[k + 1 :]]


def _parents_are_messages(session: Session) -> bool:
    ids = {m.id for m in session.messages}
    return all(m.parent_id is None or m.parent_id in ids for m in session.messages)


# -- triggers ---------------------------------------------------------------------------------


def test_an_automatic_compaction_says_where_its_trigger_is_recorded() -> None:
    event = load_session(OVERFLOW).compactions[1]
    assert event.trigger == "auto"
    assert event.trigger_evidence == "compactMetadata.trigger is auto (line 11)"
    assert (event.tokens_before, event.tokens_after) == (167_020, 21_100)


def test_an_automatic_compaction_after_a_too_long_error_is_an_overflow_recovery() -> None:
    session = load_session(OVERFLOW)
    event = session.compactions[0]
    assert event.trigger == "overflow"
    assert event.trigger_evidence is not None
    assert "compactMetadata.trigger is auto (line 5)" in event.trigger_evidence
    assert "line 4: Prompt is too long" in event.trigger_evidence
    failed = session.messages[event.message_index - 1]
    assert failed.error == "Prompt is too long" and failed.usage is None
    assert session.messages[event.message_index].summary
    assert _parents_are_messages(session)


def test_an_api_error_line_saying_too_long_is_evidence_too(tmp_path: Path) -> None:
    rows = _rows(OVERFLOW)
    synthetic = _row(rows, "o-e1")
    api_error = {
        **{k: synthetic[k] for k in ("parentUuid", "sessionId", "version", "timestamp")},
        "type": "system",
        "subtype": "api_error",
        "level": "error",
        "uuid": "o-e1",
        "error": {
            "status": 400,
            "error": {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 212480 tokens > 200000 maximum",
                },
            },
        },
        "retryAttempt": 1,
        "maxRetries": 10,
    }
    session = load_session(_write(tmp_path / "e.jsonl", _replace(rows, "o-e1", api_error)))
    event = session.compactions[0]
    assert event.trigger == "overflow"
    assert event.trigger_evidence is not None and "(line 4: " in event.trigger_evidence
    assert "prompt is too long: 212480 tokens" in event.trigger_evidence
    assert session.context_window == 200_000  # the provider stated the window in the error
    assert session.window_source == "recorded"
    assert session.window_evidence == (
        "the provider's error says so: prompt is too long: 212480 tokens > 200000 maximum"
    )
    assert _parents_are_messages(session)


def test_a_successful_call_after_the_error_makes_it_automatic_again(tmp_path: Path) -> None:
    rows = _rows(OVERFLOW)
    retried = {**_row(rows, "o-a2"), "uuid": "o-ok", "parentUuid": "o-e1", "requestId": "req_ok"}
    retried["message"] = {**retried["message"], "id": "msg_ok"}
    rows = _replace(rows, "o-e1", _row(rows, "o-e1"), retried)
    _row(rows, "o-b1")["logicalParentUuid"] = "o-ok"
    event = load_session(_write(tmp_path / "ok.jsonl", rows)).compactions[0]
    assert event.trigger == "auto"


def test_a_rate_limit_error_is_no_overflow(tmp_path: Path) -> None:
    rows = _rows(OVERFLOW)
    error = _row(rows, "o-e1")
    error["message"]["content"] = [
        {"type": "text", "text": "API Error: 429 rate limit of 400,000 input tokens per minute"}
    ]
    assert load_session(_write(tmp_path / "r.jsonl", rows)).compactions[0].trigger == "auto"


def _manual(rows: list[dict[str, Any]], *, trigger: str | None = "manual") -> list[dict[str, Any]]:
    """The compaction of ``compact_after_rewind.jsonl`` made a manual one: the /compact line the
    user typed before the boundary, the command and its output written after the summary."""
    boundary = _row(rows, "c-b1")
    if trigger is None:
        del boundary["compactMetadata"]["trigger"]
    else:
        boundary["compactMetadata"]["trigger"] = trigger
    base = {k: _row(rows, "c-u4")[k] for k in ("sessionId", "version", "cwd", "timestamp")}

    def user(uuid: str, parent: str, text: str, **extra: Any) -> dict[str, Any]:
        return {
            **base,
            "type": "user",
            "uuid": uuid,
            "parentUuid": parent,
            "message": {"role": "user", "content": text},
            **extra,
        }

    typed = user("c-typed", "c-a3", "/compact")
    caveat = user("c-cv", "c-s1", "<local-command-caveat>Caveat: …</local-command-caveat>")
    caveat["isMeta"] = True
    command = user(
        "c-cmd", "c-cv", "<command-name>/compact</command-name>\n<command-args></command-args>"
    )
    stdout = user("c-out", "c-cmd", "<local-command-stdout>Compacted</local-command-stdout>")
    rows = _replace(rows, "c-b1", typed, boundary)
    rows = _replace(rows, "c-s1", _row(rows, "c-s1"), caveat, command, stdout)
    _row(rows, "c-u4")["parentUuid"] = "c-out"
    return rows


def test_a_manual_compaction_names_its_commands(tmp_path: Path) -> None:
    session = load_session(_write(tmp_path / "m.jsonl", _manual(_rows(COMPACT))))
    event = session.compactions[0]
    assert event.trigger == "manual"
    assert event.trigger_evidence == (
        "compactMetadata.trigger is manual (line 8); the /compact command is recorded (lines 7, 11)"
    )
    # The typed /compact line is a side branch of the tree, not a rewind of the conversation.
    assert not [d for d in session.diagnostics if d.code == "abandoned-branch" and d.line == 7]
    summary = session.messages[event.message_index]
    assert summary.summary
    commands = session.messages[event.message_index + 1 : event.message_index + 4]
    assert all(m.meta and not m.is_turn_start for m in commands)


def test_no_recorded_trigger_but_a_compact_command_is_manual(tmp_path: Path) -> None:
    rows = _manual(_rows(COMPACT), trigger=None)
    event = load_session(_write(tmp_path / "n.jsonl", rows)).compactions[0]
    assert event.trigger == "manual"
    assert event.trigger_evidence is not None
    assert event.trigger_evidence.startswith("compactMetadata has no trigger (line 8)")


def test_no_trigger_and_no_command_is_unknown(tmp_path: Path) -> None:
    rows = _rows(COMPACT)
    del _row(rows, "c-b1")["compactMetadata"]["trigger"]
    event = load_session(_write(tmp_path / "u.jsonl", rows)).compactions[0]
    assert (event.trigger, event.trigger_evidence) == (
        "unknown",
        "compactMetadata has no trigger (line 7)",
    )


# -- partial compaction: the preserved segment --------------------------------------------------

SEGMENT = FIXTURES / "preserved_segment.jsonl"
STARTS = FIXTURES / "starts_with_boundary.jsonl"


def test_a_segment_written_after_its_boundary_is_placed_before_the_compaction() -> None:
    session = load_session(SEGMENT)
    event = session.compactions[0]
    ids = [m.id for m in session.messages]
    # The kept call and its tool result happened before the compaction (11:48–11:52; the
    # boundary is written at 11:54 and the file puts them after the summary).
    kept = ids.index("msg_p3")
    assert ids[kept : kept + 2] == ["msg_p3", "p-r2"]
    assert event.message_index == kept + 2
    assert session.messages[event.message_index].id == "p-sum"
    assert session.messages[event.message_index].summary
    assert event.first_kept_id == "msg_p3"
    before = [m.timestamp or "" for m in session.messages[: event.message_index]]
    assert before == sorted(before)
    assert session.messages[event.message_index + 1].id == "p-f1"  # re-read after compacting


def test_the_kept_call_keeps_its_usage_from_iterations() -> None:
    session = load_session(SEGMENT)
    call = next(m for m in session.messages if m.id == "msg_p3")
    assert call.usage is not None
    assert (call.usage.prompt_tokens, call.usage.output) == (165_000, 900)
    assert [t.name for t in call.tool_calls] == ["Agent"]
    assert call.parent_id == "p-u2"  # the conversation it continued, not the summary
    assert _parents_are_messages(session)


def test_a_segment_written_in_place_sets_first_kept_too() -> None:
    session = load_session(SEGMENT)
    event = session.compactions[1]
    ids = [m.id for m in session.messages]
    assert event.first_kept_id == "msg_p5"
    assert ids.index("msg_p5") < event.message_index
    assert session.messages[event.message_index].id == "p-sum2"


def test_the_history_before_a_preserved_segment_is_on_the_conversation(tmp_path: Path) -> None:
    # The boundary's logical parent is written after it (a cycle in the tree); the chain goes on
    # from the line written before the boundary, so a rewind before it is still seen.
    rows = _rows(SEGMENT)
    base = _row(rows, "p-u2")
    rewound = [
        {
            **base,
            "uuid": "p-x1",
            "parentUuid": "p-a3",
            "message": {"role": "user", "content": "no"},
        },
        {**_row(rows, "p-a3"), "uuid": "p-x2", "parentUuid": "p-x1", "requestId": "req_x"},
    ]
    rewound[1]["message"] = {**rewound[1]["message"], "id": "msg_x"}
    rows = _replace(rows, "p-s1", _row(rows, "p-s1"), *rewound)
    session = load_session(_write(tmp_path / "x.jsonl", rows))
    assert "p-x1" not in {m.id for m in session.messages}
    assert [d.line for d in session.diagnostics if d.code == "abandoned-branch"] == [7]
    assert session.compactions[0].first_kept_id == "msg_p3"


def test_segments_missing_from_the_file_keep_nothing(tmp_path: Path) -> None:
    rows = [r for r in _rows(SEGMENT) if r.get("uuid") not in ("p-a7", "p-r3")]
    _row(rows, "p-b2")["logicalParentUuid"] = "p-u3"
    session = load_session(_write(tmp_path / "gone.jsonl", rows))
    assert session.compactions[1].first_kept_id is None


# -- a file that begins at a boundary ------------------------------------------------------------


def test_a_file_that_begins_at_a_boundary() -> None:
    session = load_session(STARTS)
    assert len(session.compactions) == 1
    event = session.compactions[0]
    assert event.message_index == 0
    assert (event.trigger, event.tokens_before, event.tokens_after) == ("auto", 998_659, 18_101)
    assert event.first_kept_id is None  # what it kept is before the file
    assert session.messages[0].summary and session.messages[0].compaction_boundary
    notes = [(d.code, d.line, d.severity.value) for d in session.diagnostics]
    # its compaction's own 998,659 is no window evidence (fidelity is scored on compactions)
    assert notes == [("history-not-in-file", 3, "info")]
    assert "not in the file" in session.diagnostics[0].message
    assert session.turn_starts() == [3]
    # The compaction measured ~1M tokens, but a compaction's own count is no window evidence:
    # no call in the file went past 200,000, so the table's window stands.
    assert (session.context_window, session.window_source) == (200_000, "table")


# -- a compaction the conversation was rewound from ---------------------------------------------


def test_a_compaction_on_a_rewound_branch_is_reported_not_applied(tmp_path: Path) -> None:
    # The next prompt continues from the line before the boundary (as in the 2.0.76 sample,
    # whose next request was as large as before the compaction): the compaction is reported,
    # marked rewound, and the conversation has no summary from it.
    rows = _rows(COMPACT)
    _row(rows, "c-u4")["parentUuid"] = "c-a3"
    session = load_session(_write(tmp_path / "rw.jsonl", rows))
    (event,) = session.compactions
    assert event.rewound and (event.trigger, event.tokens_before) == ("auto", 151_234)
    assert event.trigger_evidence is not None and "rewound" in event.trigger_evidence
    assert not any(m.summary for m in session.messages)
    assert session.metadata["rewound_compactions"] == [
        {"line": 7, "trigger": "auto", "tokens_before": 151_234}
    ]
    notes = [d for d in session.diagnostics if d.code == "rewound-compaction"]
    assert [(d.line, d.severity.value) for d in notes] == [(7, "info")]
    assert "rewound branch" in notes[0].message


def test_only_the_compact_command_itself_is_one(tmp_path: Path) -> None:
    rows = _rows(COMPACT)
    _row(rows, "c-u4")["message"]["content"] = "/compact keep the migration plan"
    session = load_session(_write(tmp_path / "c.jsonl", rows))
    typed = next(m for m in session.messages if m.id == "c-u4")
    assert typed.meta and not typed.is_turn_start  # a command, not a request to the model
    _row(rows, "c-u4")["message"]["content"] = "/compaction looks odd, why?"
    session = load_session(_write(tmp_path / "d.jsonl", rows))
    assert next(m for m in session.messages if m.id == "c-u4").is_turn_start
