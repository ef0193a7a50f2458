"""The Gemini CLI loader: both forms of its chat log on our fixtures (rewind and last copy wins,
a compression checkpoint, the single-JSON form in another key order, a sub-agent chat) and on
the real chats of ``../shared/new-formats/gemini-cli`` (skipped when absent), with figures
counted from the raw JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.fleet.survey import analyse_row
from core.formats import LoadError, detect_format, load_session
from core.model.session import Role, SourceFormat, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "gemini"
REAL = REPO.parent / "shared" / "new-formats" / "gemini-cli"

# file: (session id, calls, recorded peak = largest tokens.input, tool calls), counted with jq
# over the raw JSON: [.messages[]|select(.type=="gemini")], [...|.tokens.input]|max,
# [.messages[]|.toolCalls[]?]|length.
REAL_FIGURES = {
    "gemini-cli-unversioned_testrepo-79d52455f160.json": (
        "5ac8a003-3138-4e2d-ad7e-600cf2d89ebc",
        4,
        6542,
        3,
    ),
    "gemini-cli-unversioned_testrepo-c81467b72ca0.json": (
        "9640edb1-da8c-4f11-8e8a-96de872f2548",
        2,
        6400,
        1,
    ),
    "gemini-cli-unversioned_testrepo-e6b2f769a273.json": (
        "677ceb30-baaf-4ead-97ee-528dcf922a62",
        5,
        8716,
        6,
    ),
}


def test_jsonl_last_copy_wins_and_a_rewind_drops_what_follows() -> None:
    path = FIXTURES / "rewind.jsonl"
    assert detect_format(path) is SourceFormat.GEMINI_CLI
    session = load_session(path)
    assert [m.id for m in session.messages] == ["u1", "g1", "g1:ls_1", "u3", "g3"]
    first = session.messages[1]
    assert first.usage is not None and first.usage.reasoning == 15  # the second copy's tokens
    assert first.tool_calls[0].name == "list_directory"
    result = session.messages[2].tool_result
    assert result is not None and result.output == "README.md\nsrc/" and not result.is_error
    assert [m.usage.prompt_tokens for m in session.model_calls() if m.usage] == [1000, 1090]
    assert session.metadata["rewinds"] == 1
    assert session.metadata["messages_rewound"] == 2
    assert session.metadata["title"] == "README questions"
    assert session.metadata["ui_messages"] == 1  # the "info" message is not sent to the model
    assert session.model == "gemini-2.5-flash" and session.messages[-1].model == "gemini-2.5-flash"
    assert session.project == "/home/dev/app"
    assert session.compactions == []


def test_gemini_usage_is_the_prompt_before_the_reply() -> None:
    session = load_session(FIXTURES / "rewind.jsonl")
    usage = session.messages[-1].usage
    assert usage is not None
    assert usage.convention is UsageConvention.GEMINI
    assert (usage.input, usage.cache_read, usage.reasoning) == (190, 900, 30)
    assert usage.output == 12 + 30  # the API counts thoughts apart from the candidates
    assert usage.context_tokens == 1090


def test_a_checkpoint_that_starts_with_a_state_snapshot_is_a_recorded_compaction() -> None:
    session = load_session(FIXTURES / "checkpoint.jsonl")
    ids = [m.id for m in session.messages]
    assert ids == [
        "c-u1",
        "c-g1",
        "c-g1:rf_1",
        "c-g2",
        "c-u2",
        "c-g3",
        "c-snap",
        "c-ack",
        "c-u3",
        "c-g4",
    ]
    (event,) = session.compactions
    assert event.message_index == ids.index("c-snap")
    assert event.first_kept_id == "c-u2"
    assert event.source_line == 7
    assert event.summary is not None and "<state_snapshot>" in event.summary
    snapshot, ack = session.messages[6], session.messages[7]
    assert snapshot.summary and snapshot.role is Role.USER and snapshot.compaction_boundary
    assert ack.summary and not ack.is_model_call  # the acknowledgement is no model call
    calls = session.model_calls()
    assert [c.id for c in calls] == ["c-g1", "c-g2", "c-g3", "c-g4"]
    row = analyse_row(str(FIXTURES / "checkpoint.jsonl"))
    assert (row.agent, row.calls, row.peak_tokens, row.compactions) == (
        "gemini-cli",
        4,
        541_000,
        1,
    )


def test_single_json_in_any_key_order() -> None:
    path = FIXTURES / "single.json"
    assert json.loads(path.read_text()).__iter__().__next__() == "kind"  # not sessionId first
    assert detect_format(path) is SourceFormat.GEMINI_CLI
    session = load_session(path)
    assert session.id == "gem-single-0001"
    assert session.metadata["gemini_form"] == "single-json"
    reply = session.messages[1]
    assert reply.reasoning == "Looking: check src"
    error = session.messages[2].tool_result
    assert error is not None and error.is_error and error.output == "Path not in workspace"
    assert session.messages[2].source_line is not None
    assert [m.usage.context_tokens for m in session.model_calls() if m.usage] == [6200, 6400]
    assert session.context_window == 1_048_576
    assert session.window_evidence is not None and "tokenLimits.ts" in session.window_evidence


def test_a_sub_agent_chat_is_a_session_of_its_own_with_its_parent() -> None:
    path = FIXTURES / "chats" / "1f0c2a9e-parent-session" / "sub-7.jsonl"
    session = load_session(path)
    assert session.id == "sub-7"
    assert session.metadata["kind"] == "subagent"
    assert session.parent_session_id == "1f0c2a9e-parent-session"
    assert load_session(FIXTURES / "rewind.jsonl").parent_session_id is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{\n  "sessionId": "x",\n  "projectHash": "y",\n  "messages": [\n', "not valid JSON"),
        ('{"id": "m1", "type": "user", "content": "hi"}\n', "no sessionId"),
        ("hello, world\n", "not valid JSON"),
    ],
)
def test_broken_chats_give_one_line(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "session-broken.json"
    path.write_text(text)
    with pytest.raises(LoadError) as caught:
        load_session(path, format="gemini-cli")
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert why in message


@pytest.mark.skipif(not REAL.is_dir(), reason="shared new-formats samples are not available")
@pytest.mark.parametrize("name", sorted(REAL_FIGURES))
def test_real_gemini_chats(name: str) -> None:
    path = REAL / name
    session_id, calls, peak, tools = REAL_FIGURES[name]
    assert detect_format(path) is SourceFormat.GEMINI_CLI
    session = load_session(path)
    assert session.id == session_id
    assert [d for d in session.diagnostics if d.severity != "info"] == []
    assert sum(len(m.tool_calls) for m in session.messages) == tools
    assert sum(1 for m in session.messages if m.role is Role.TOOL) == tools
    row = analyse_row(str(path))
    assert row.error is None
    assert (row.agent, row.calls, row.peak_tokens, row.compactions) == (
        "gemini-cli",
        calls,
        peak,
        0,
    )
    assert row.model == "gemini-3-flash-preview"
