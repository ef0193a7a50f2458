"""Claude Code's newer line types (2.1.1xx–2.1.2xx): bookkeeping read quietly, attachments the
model is sent counted as context, usage of advisor responses, the agent's version and provider.

``fixtures/claude/recent_lines.jsonl`` is a hand-written session in the shape of 2.1.226 files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.formats.claude_attachments import attachment_text, is_known
from core.model.session import Message, Role, Session, Severity, Usage
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "claude"
RECENT = FIXTURES / "recent_lines.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recent() -> Session:
    return load_session(RECENT)


def test_bookkeeping_lines_load_without_noise(recent: Session) -> None:
    # mode, permission-mode, agent-name, last-prompt, file-history-delta, custom-title, ai-title
    # and the system subtypes stop_hook_summary / turn_duration / away_summary / informational
    # are all known: nothing about them in the diagnostics (the one attachment type from a
    # future version is the only note).
    assert [d.code for d in recent.diagnostics if d.code != "unknown-attachment"] == []


def test_titles_and_agent_name(recent: Session) -> None:
    assert recent.metadata["title"] == "Cart totals"  # the user's custom title wins
    assert recent.metadata["agent_name"] == "Fix the cart total"


def test_custom_title_wins_whatever_the_order(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    custom = next(r for r in rows if r["type"] == "custom-title")
    rows.remove(custom)
    session = load_session(_write(tmp_path / "t.jsonl", [*rows, custom]))
    assert session.metadata["title"] == "Cart totals"
    without = [r for r in rows if r["type"] != "custom-title"]
    assert load_session(_write(tmp_path / "u.jsonl", without)).metadata["title"] == (
        "Fix cart total rounding"  # the last ai-title
    )


def test_a_header_line_of_another_tool_is_an_info(tmp_path: Path) -> None:
    rows = [{"_type": "hive-mind-meta", "version": "0.1", "sessionId": "x"}, *_rows(RECENT)]
    session = load_session(_write(tmp_path / "hive.jsonl", rows))
    notes = [d for d in session.diagnostics if d.code == "foreign-record"]
    assert [(d.line, d.severity) for d in notes] == [(1, Severity.INFO)]
    assert not [d for d in session.diagnostics if d.code == "unknown-record"]


# -- attachments ------------------------------------------------------------------------------


def _by_id(session: Session) -> dict[str, Message]:
    return {m.id: m for m in session.messages}


def test_attachments_the_model_is_sent_are_meta_user_messages(recent: Session) -> None:
    messages = _by_id(recent)
    expected = {
        "r-h1": "Project rule: money is Decimal, never float.",  # SessionStart hook output
        "r-d1": "WebFetch\nWebSearch",  # deferred tools listing
        "r-f1": "     1\tdef total(items):",  # an @-mentioned file, as the Read tool shows it
        "r-t1": "<total_tokens>15000000 tokens left</total_tokens>",  # a budget, not the window
        "r-h4": "Run the tests with -q.",  # a PreToolUse hook's additional context
        "r-dc": "2026-08-11",
    }
    for uuid, payload in expected.items():
        message = messages[uuid]
        assert message.role is Role.USER and message.meta and not message.is_turn_start
        assert payload in message.text
    # UI-only attachments are not messages: hook_system_message, command_permissions, and the
    # PreToolUse hook_success without content.
    assert not {"r-h2", "r-c1", "r-h3"} & messages.keys()


def test_attachments_start_no_turn(recent: Session) -> None:
    starts = [recent.messages[i].text for i in recent.turn_starts()]
    assert starts == ["Why is the cart total wrong?", "Fix it please."]


def test_a_hook_attachment_beside_a_tool_result_is_not_a_rewind(recent: Session) -> None:
    assert not [d for d in recent.diagnostics if d.code == "abandoned-branch"]
    order = [m.id for m in recent.messages]
    assert order.index("msg_r1") < order.index("r-h4") < order.index("r-r1")


def test_local_commands_are_context(recent: Session) -> None:
    messages = _by_id(recent)
    for uuid in ("r-l1", "r-l2"):
        assert messages[uuid].meta and not messages[uuid].is_turn_start
    assert "Set model to opus" in messages["r-l2"].text


def test_an_unknown_attachment_type_is_one_info(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    unknown = next(r for r in rows if r.get("attachment", {}).get("type") == "hologram_note")
    session = load_session(_write(tmp_path / "t.jsonl", [*rows, {**unknown, "uuid": "again"}]))
    notes = [d for d in session.diagnostics if d.code == "unknown-attachment"]
    assert [(d.line, d.severity) for d in notes] == [(28, Severity.INFO)]
    assert "hologram_note" in notes[0].message


def test_the_recorded_rendered_text_wins(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    for row in rows:
        if row.get("uuid") == "r-dc":
            row["rendered"] = [
                {"content": "<system-reminder>\nIt is the 11th.\n</system-reminder>"}
            ]
        if row.get("uuid") == "r-x1":  # the unknown type, rendered: its text is known now
            row["rendered"] = [{"content": "a hologram"}]
    session = load_session(_write(tmp_path / "r.jsonl", rows))
    messages = _by_id(session)
    assert messages["r-dc"].text == "<system-reminder>\nIt is the 11th.\n</system-reminder>"
    assert messages["r-x1"].text == "a hologram" and messages["r-x1"].meta
    assert not [d for d in session.diagnostics if d.code == "unknown-attachment"]


def test_an_attachment_line_without_its_object_is_a_diagnostic(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    for row in rows:
        if row.get("uuid") == "r-f1":
            row["attachment"] = "cart.py"
    session = load_session(_write(tmp_path / "a.jsonl", rows))
    bad = [d for d in session.diagnostics if d.code == "unreadable-record"]
    assert [d.line for d in bad] == [9]
    assert "r-f1" not in _by_id(session)
    assert len(session.messages) == len(load_session(RECENT).messages) - 1


@pytest.mark.parametrize(
    ("attachment", "visible"),
    [
        ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "ctx"}, True),
        ({"type": "hook_success", "hookEvent": "PostToolUse", "content": "ctx"}, False),
        ({"type": "hook_success", "hookEvent": "SessionStart", "content": ""}, False),
        ({"type": "hook_additional_context", "content": []}, False),
        ({"type": "async_hook_response", "response": {}, "stderr": "denied"}, False),
        ({"type": "async_hook_response", "response": {"systemMessage": "note"}}, True),
        ({"type": "invoked_skills", "skills": []}, False),
        ({"type": "task_reminder", "content": [], "itemCount": 0}, True),
        ({"type": "already_read_file", "filename": "a.py", "content": {}}, False),
        ({"type": "compact_file_reference", "filename": "big.py"}, True),
        ({"type": "queued_command", "prompt": [{"type": "text", "text": "also docs"}]}, True),
        ({"type": "skill_listing", "content": ""}, False),
    ],
)
def test_which_attachments_the_model_sees(attachment: dict[str, Any], visible: bool) -> None:
    record = {"type": "attachment", "attachment": attachment}
    assert bool(attachment_text(record, attachment)) is visible
    assert is_known(attachment["type"])


# -- usage ------------------------------------------------------------------------------------


def test_an_advisor_response_counts_its_last_main_model_pass(recent: Session) -> None:
    # The top-level usage of msg_r2 is the sum of its two main-model passes (a context of
    # 61,622 that never existed); the last pass is the request's context.
    call = _by_id(recent)["msg_r2"]
    assert call.usage is not None
    assert (call.usage.input, call.usage.cache_read, call.usage.cache_write) == (1, 30_080, 800)
    assert call.usage.output == 200
    assert call.usage.prompt_tokens == 30_881
    assert recent.metadata["max_recorded_context"] == 32_602  # msg_r3, not the 61,622 sum


def test_the_largest_recorded_context_is_the_prompt_of_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The session's largest recorded context is read with :attr:`Usage.prompt_tokens`, the one
    rule for what a call was sent (not a sum of its fields written again in the loader)."""
    monkeypatch.setattr(Usage, "prompt_tokens", property(lambda usage: 7 * usage.output))
    session = load_session(RECENT)
    outputs = [m.usage.output for m in session.messages if m.usage is not None]
    assert session.metadata["max_recorded_context"] == 7 * max(outputs)


def test_a_zeroed_top_level_usage_with_its_iterations_is_read(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    for row in rows:
        if row.get("uuid") in ("r-a1", "r-a2"):  # the copies a partial compaction rewrites
            usage = row["message"]["usage"]
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                usage[key] = 0
            usage["output_tokens"] = 0
    call = _by_id(load_session(_write(tmp_path / "z.jsonl", rows)))["msg_r1"]
    assert call.usage is not None and call.usage.prompt_tokens == 30_003


def test_usage_without_iterations_is_the_top_level(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    for row in rows:
        if row.get("uuid") == "r-a3":
            del row["message"]["usage"]["iterations"]
        if row.get("uuid") == "r-a4":
            row["message"]["usage"]["iterations"] = [{"type": "advisor_message", "input_tokens": 5}]
    messages = _by_id(load_session(_write(tmp_path / "n.jsonl", rows)))
    assert messages["msg_r2"].usage is not None
    assert messages["msg_r2"].usage.prompt_tokens == 61_622
    assert messages["msg_r3"].usage is not None
    assert messages["msg_r3"].usage.prompt_tokens == 32_602  # no main-model pass listed


def test_a_synthetic_error_is_a_failed_call_with_its_text(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    error = {
        **next(r for r in rows if r.get("uuid") == "r-a4"),
        "uuid": "r-err",
        "parentUuid": "r-a4",
        "isApiErrorMessage": True,
        "error": "unknown",
    }
    error["message"] = {
        **error["message"],
        "id": "msg_err",
        "model": "<synthetic>",
        "content": [{"type": "text", "text": "API Error: 500 Internal server error"}],
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0},
    }
    failed = load_session(_write(tmp_path / "e.jsonl", [*rows, error])).messages[-1]
    assert failed.role is Role.ASSISTANT and failed.usage is None
    assert failed.error == "API Error: 500 Internal server error"


# -- the agent and the provider ----------------------------------------------------------------


def test_agent_version_is_the_last_and_its_changes_are_noted(recent: Session) -> None:
    assert recent.agent_version == "2.1.232"
    assert recent.metadata["version"] == "2.1.232"
    assert recent.metadata["version_changes"] == [
        {"line": 5, "version": "2.1.226"},
        {"line": 26, "version": "2.1.232"},
    ]
    assert recent.metadata["entrypoint"] == "cli"


def test_a_steady_version_notes_no_change(tmp_path: Path) -> None:
    rows = [r for r in _rows(RECENT) if r.get("version") != "2.1.232"]
    session = load_session(_write(tmp_path / "v.jsonl", rows))
    assert session.agent_version == "2.1.226"
    assert "version_changes" not in session.metadata


def test_the_header_line_of_another_tool_is_not_the_agent_version(tmp_path: Path) -> None:
    rows = [{"_type": "hive-mind-meta", "version": "0.1"}, *_rows(RECENT)]
    assert load_session(_write(tmp_path / "h.jsonl", rows)).agent_version == "2.1.232"


def _with_calls(tmp_path: Path, *, message_id: str = "", model: str = "") -> Session:
    rows = _rows(RECENT)
    for row in rows:
        if row["type"] == "assistant":
            message = row["message"]
            if message_id:
                message["id"] = message_id + message["id"]
            if model:
                message["model"] = model
    return load_session(_write(tmp_path / "p.jsonl", rows))


@pytest.mark.parametrize(
    ("message_id", "model", "provider"),
    [
        ("", "", "anthropic"),
        ("msg_bdrk_", "", "amazon-bedrock"),
        ("", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "amazon-bedrock"),
        ("", "anthropic.claude-opus-4-6-v1", "amazon-bedrock"),
        ("msg_vrtx_", "", "google-vertex"),
        ("", "claude-sonnet-4-5@20250929", "google-vertex"),
        ("", "claude-opus-4-6[1m]", "anthropic"),
    ],
)
def test_provider(tmp_path: Path, message_id: str, model: str, provider: str) -> None:
    session = _with_calls(tmp_path, message_id=message_id, model=model)
    assert session.provider == provider
    if provider != "anthropic":
        assert session.metadata["provider_evidence"]
    if model:
        assert session.model == model  # kept as recorded, [1m] included (the window reads it)


# -- the window the recording shows ------------------------------------------------------------


def test_a_request_above_200k_infers_a_larger_window(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    for row in rows:
        if row.get("uuid") == "r-a4":
            row["message"]["usage"]["iterations"][0]["cache_read_input_tokens"] = 230_000
    session = load_session(_write(tmp_path / "big.jsonl", rows))
    assert (session.context_window, session.window_source) == (1_000_000, "inferred")
    assert session.window_evidence is not None
    assert "230,602 tokens" in session.window_evidence and "200,000" in session.window_evidence


def test_a_1m_model_and_the_default_window(recent: Session, tmp_path: Path) -> None:
    assert (recent.context_window, recent.window_source) == (200_000, "table")
    assert recent.window_evidence is not None and "table" in recent.window_evidence
    session = _with_calls(tmp_path, model="claude-opus-4-6[1m]")
    assert (session.context_window, session.window_source) == (1_000_000, "table")
    assert (
        session.window_evidence == "the model id claude-opus-4-6[1m] asks for the 1M-token context"
    )
