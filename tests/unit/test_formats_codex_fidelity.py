"""What the Codex loader reads for a faithful replay: turns and triggers, windows per turn, resumes
and forks, the post-compaction estimate, and Codex's own size estimates of its history items.
Every rollout here is hand-written with :class:`tests.support.codex_rollout.Rollout`."""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path
from typing import Any

from core.formats import load_session
from core.model.session import Role, Session, Severity, WindowChange
from tests.support.codex_rollout import SESSION_ID, SESSION_MS, Rollout, compact, uuid7


def _load(rollout: Rollout, folder: Path) -> Session:
    return load_session(rollout.write(folder))


def _codes(session: Session) -> list[str]:
    return [d.code for d in session.diagnostics]


def _tokens(obj: Any) -> int:
    """ceil(bytes / 4) of the compact JSON of ``obj``: Codex's estimate of an item."""
    return math.ceil(len(compact(obj).encode("utf-8")) / 4)


def _turn(rollout: Rollout, text: str, context: int) -> Rollout:
    """A whole turn: task, user message, one answer with its usage, task end."""
    return rollout.task().context().user(text).say("done").usage(context).done()


# -- the agent ------------------------------------------------------------------------------


def test_agent_version_provider_and_originator(tmp_path: Path) -> None:
    session = _load(_turn(Rollout().meta(), "hi", 1_000), tmp_path)
    assert session.agent_version == "0.142.0"
    assert session.provider == "openai"
    assert session.metadata["originator"] == "codex-tui"


# -- records that must load quietly ---------------------------------------------------------


def test_new_record_types_load_without_noise(tmp_path: Path) -> None:
    r = Rollout().meta().task()
    r.record("world_state", {"full": True, "state": {"agents_md": {"text": "rules"}}})
    r.event("thread_goal_updated", goal={"objective": "ship it"})
    r.context().user("find the tool")
    r.item(
        "tool_search_call",
        call_id="ts_1",
        status="completed",
        execution="client",
        arguments={"query": "spawn agents"},
    )
    r.item("tool_search_output", call_id="ts_1", status="completed", tools=[{"name": "spawn"}])
    r.usage(1_000)
    r.event("web_search_end", call_id="ws", query="q")
    r.event("item_completed", item={"type": "plan"})
    r.record("world_state", {"full": False, "state": {"environments": {"timezone": "UTC"}}})
    r.event("thread_settings_applied", thread_settings={"model": "gpt-5.5"})
    r.call("exec_command", {"cmd": "make"}).output("ok").usage(2_000)
    r.compacted(window_number=2, first_window_id="w1", previous_window_id="w1", window_id="w2")
    r.reset(900)
    r.event("turn_aborted", reason="interrupted")
    session = _load(r, tmp_path)
    assert session.diagnostics == []
    search = next(m for m in session.messages if m.tool_calls and m.tool_calls[0].id == "ts_1")
    assert search.tool_calls[0].name == "tool_search"
    assert search.tool_calls[0].arguments == {"query": "spawn agents"}
    result = next(m.tool_result for m in session.messages if m.tool_result)
    assert result is not None and result.tool_name == "tool_search"
    assert result.output == '[{"name":"spawn"}]'
    assert len(session.compactions) == 1


def test_two_records_on_one_line_are_both_read(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("one").say("a").usage(1_000)
    r.task(window=300_000)
    r.lines[-2:] = [r.lines[-2] + r.lines[-1]]  # a token_count and a task_started glued
    glued = r.last_line
    r.context().user("two").say("b").usage(2_000, window=300_000).done()
    session = _load(r, tmp_path)
    assert [(d.line, d.code, d.severity) for d in session.diagnostics] == [
        (glued, "two-records-on-a-line", Severity.INFO)
    ]
    assert [m.usage.total for m in session.model_calls() if m.usage] == [1_100, 2_100]
    assert session.window_changes == [
        WindowChange(message_index=3, context_window=300_000, source_line=glued)
    ]


# -- resumes, forks, windows ----------------------------------------------------------------


def test_a_resume_keeps_one_session_and_the_window_per_turn(tmp_path: Path) -> None:
    r = Rollout().meta().task(window=353_400).context().user("one").say("a")
    r.usage(1_000, window=353_400).done()
    r.meta()  # the resume repeats the thread's id
    resumed = r.last_line
    r.event("thread_settings_applied", thread_settings={"model": "gpt-5.6-sol"})
    r.task(window=258_400)
    changed = r.last_line
    r.context().user("two").call("exec_command", {"cmd": "ls"}).usage(2_000)
    r.output("a.py").say("done").usage(3_000, window=250_000).done()
    session = _load(r, tmp_path)
    assert session.id == SESSION_ID
    stamp = json.loads(r.lines[resumed - 1])["timestamp"]
    assert session.metadata["resumed"] == [{"line": resumed, "timestamp": stamp}]
    assert [m.text for m in session.messages if m.role is Role.SYSTEM] == ["You are Codex."]
    assert (session.context_window, session.window_source) == (353_400, "recorded")
    assert session.metadata["model_window"] == 372_000  # the first window's model window
    second_user = next(m.index for m in session.messages if m.text == "two")
    last_call = session.model_calls()[-1].index
    assert session.window_changes == [
        WindowChange(message_index=second_user, context_window=258_400, source_line=changed),
        WindowChange(message_index=last_call, context_window=250_000, source_line=r.last_line - 1),
    ]
    assert not session.diagnostics


def test_a_sub_agent_fork_loads_the_parents_history_as_its_context(tmp_path: Path) -> None:
    parent = uuid7(SESSION_MS - 60_000, tail=7)
    r = Rollout().meta(
        forked_from_id=parent,
        source={"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
        agent_nickname="Euler",
    )
    r.meta(sid=parent, base_instructions={"text": "parent instructions"})
    r.task(turn_ms=SESSION_MS - 50_000).context().user("review everything")
    r.call("exec_command", {"cmd": "cat a.go"}).usage(240_000).output("package a")
    r.compacted()
    r.reset(9_000)
    r.call("spawn_agent", {"fork_context": True}).usage(20_000)
    r.output("You are the newly spawned agent.")
    last_inherited = r.last_line
    r.task(turn_ms=SESSION_MS + 200).context().user("review commit b074cde")
    r.say("looks fine").usage(21_000).done()
    session = _load(r, tmp_path)

    assert session.id == SESSION_ID
    assert session.metadata["forked_from"] == parent
    assert session.parent_session_id == parent  # thread_spawn.parent_thread_id
    own = next(m.index for m in session.messages if m.text == "review commit b074cde")
    assert session.metadata["forked_history"] == {
        "first_line": 3,
        "last_line": last_inherited,
        "first_own_message": own,  # right after the folded history
        "folded_messages": 4,  # from the compaction's summary on: the child's starting context
        "left_out_messages": 3,  # what that compaction replaced
        "parent_calls": 2,
        "parent_compactions": 1,
    }
    notes = [d for d in session.diagnostics if d.code == "forked-history"]
    assert len(notes) == 1 and notes[0].severity is Severity.INFO and notes[0].line == 3
    assert f"({last_inherited - 2} records)" in notes[0].message
    assert next(m.text for m in session.messages if m.role is Role.SYSTEM) == "You are Codex."
    # the parent's history is one message of this session's context: its calls and its
    # compaction are the parent's, not this session's
    history = session.messages[own - 1]
    assert history.meta and history.role is Role.USER
    assert "package a" not in history.text  # compacted away in the parent before the fork
    assert [m.text for m in session.model_calls()] == ["looks fine"]
    assert session.compactions == []
    assert {d.severity for d in session.diagnostics} == {Severity.INFO}


# -- the post-compaction token_count ---------------------------------------------------------


def test_the_reset_token_count_is_no_call_and_no_full_context(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("go")
    r.call("exec_command", {"cmd": "ls"}).usage(240_000).output("a.py")
    r.compacted().reset(15_000).event("context_compacted")
    r.say("continuing").usage(16_000).done()
    session = _load(r, tmp_path)
    assert _codes(session) == []
    assert [m.usage.total for m in session.model_calls() if m.usage] == [240_100, 16_100]
    [event] = session.compactions
    assert (event.tokens_before, event.tokens_after) == (240_100, 15_000)


def test_the_reset_written_before_the_compaction_0_104(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("go")
    r.call("exec_command", {"cmd": "ls"}).usage(240_000).output("a.py")
    r.reset(15_000).compacted().event("context_compacted")
    r.say("continuing").usage(16_000).done()
    session = _load(r, tmp_path)
    assert _codes(session) == []
    assert session.compactions[0].tokens_after == 15_000
    assert len([m for m in session.model_calls() if m.usage]) == 2


def test_the_context_full_marker_is_still_reported(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("go").say("a").usage(1_000)
    zero = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    info = {
        "total_token_usage": {**zero, "reasoning_output_tokens": 0, "total_tokens": 258_400},
        "last_token_usage": {**zero, "reasoning_output_tokens": 0, "total_tokens": 257_300},
        "model_context_window": 258_400,
    }
    r.event("token_count", info=info)
    session = _load(r, tmp_path)
    assert _codes(session) == ["context-full"]


# -- triggers -------------------------------------------------------------------------------


def test_a_compaction_inside_a_turn_after_a_tool_output_is_auto_mid_turn(tmp_path: Path) -> None:
    r = _turn(Rollout().meta(), "first", 10_000)
    r.task()
    started = r.last_line
    r.context().user("go").call("exec_command", {"cmd": "ls"}).usage(240_000)
    r.output("a.py")
    output = r.last_line
    r.compacted().reset(12_000).event("context_compacted").say("on").usage(13_000).done()
    [event] = _load(r, tmp_path).compactions
    assert (event.trigger, event.phase) == ("auto", "mid-turn")
    assert event.trigger_evidence == (
        f"inside the turn started at line {started}, after a function_call_output at line "
        f"{output}, before the turn ended"
    )


def test_a_compaction_before_the_turns_user_message_is_auto_pre_turn(tmp_path: Path) -> None:
    r = _turn(Rollout().meta(), "first", 240_000)
    r.task()
    started = r.last_line
    r.compacted()
    compacted = r.last_line
    r.reset(12_000).event("context_compacted")
    r.developer("<permissions instructions>sandboxed</permissions instructions>").context()
    r.user("second")
    r.say("ok").usage(13_000).done()
    [event] = _load(r, tmp_path).compactions
    assert (event.trigger, event.phase) == ("auto", "pre-turn")
    assert event.trigger_evidence == (
        f"task_started at line {started}, compacted at line {compacted} before its own user "
        f"message at line {compacted + 6} (only context records between)"
    )


def test_a_task_that_only_compacts_is_manual(tmp_path: Path) -> None:
    r = _turn(Rollout().meta(), "first", 50_000)
    r.task()
    started = r.last_line
    r.compacted().reset(8_000).event("context_compacted").done()
    ended = r.last_line
    _turn(r, "second", 9_000)
    [event] = _load(r, tmp_path).compactions
    assert (event.trigger, event.phase) == ("manual", None)
    assert event.trigger_evidence == (
        f"a task of its own (task_started at line {started}) that only compacted at line "
        f"{started + 1}: no user message and no model output before the task ended "
        f"(task_complete) at line {ended}"
    )


def test_a_compaction_the_records_do_not_explain_is_unknown(tmp_path: Path) -> None:
    r = Rollout().meta().context().user("go", echo=False).say("a").usage(1_000).compacted()
    session = _load(r, tmp_path)
    assert session.compactions[0].trigger == "unknown"
    assert "outside any turn" in (session.compactions[0].trigger_evidence or "")
    cut = _turn(Rollout().meta(), "first", 1_000).task().compacted()  # the file ends there
    event = _load(cut, tmp_path).compactions[0]
    assert event.trigger == "unknown" and "file ends" in (event.trigger_evidence or "")


# -- Codex's own size estimates -------------------------------------------------------------


def _message(role: str, *content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": list(content)}


def test_input_items_carry_codexs_estimate_of_their_serialised_size(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().developer("<permissions instructions>x")
    r.user("fix the parser")
    r.call("exec_command", {"cmd": "ls"}).output("a.py\nb.py").usage(1_000)
    session = _load(r, tmp_path)
    system, developer, user, _call, tool = session.messages
    assert system.agent_estimate_tokens == math.ceil(len("You are Codex.") / 4)
    assert developer.agent_estimate_tokens == _tokens(
        _message("developer", {"type": "input_text", "text": "<permissions instructions>x"})
    )
    assert user.agent_estimate_tokens == _tokens(
        _message("user", {"type": "input_text", "text": "fix the parser"})
    )
    assert tool.agent_estimate_tokens == _tokens(
        {"type": "function_call_output", "call_id": "call_1", "output": "a.py\nb.py"}
    )
    assert _call.agent_estimate_tokens is None  # model output: measured by the provider


def test_the_estimate_does_not_depend_on_how_the_file_spaced_its_json(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("héllo wörld")
    spaced = Rollout().meta().task().context().user("héllo wörld")
    spaced.lines = [line.replace('":', '": ') for line in spaced.lines]
    tight = _load(r, tmp_path).messages[1].agent_estimate_tokens
    loose = load_session(spaced.write(tmp_path, "rollout-spaced.jsonl")).messages[1]
    assert (
        tight
        == loose.agent_estimate_tokens
        == _tokens(_message("user", {"type": "input_text", "text": "héllo wörld"}))
    )


def _output_estimate(tmp_path: Path, output: Any, policy: dict[str, Any] | None) -> int | None:
    r = Rollout().meta().task().context(policy).user("go")
    r.call("exec_command", {"cmd": "cat big"}).output(output).usage(1_000)
    tool = next(m for m in _load(r, tmp_path).messages if m.tool_result)
    return tool.agent_estimate_tokens


def _output_item(output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": "call_1", "output": output}


def test_tool_outputs_are_measured_as_history_keeps_them(tmp_path: Path) -> None:
    # tokens 10 × 1.2 = 12 tokens = 48 bytes: 24 + marker + 24
    tokens = _output_estimate(tmp_path, "a" * 200, {"mode": "tokens", "limit": 10})
    assert tokens == _tokens(_output_item("a" * 24 + "…38 tokens truncated…" + "a" * 24))
    # bytes 40 × 1.2 = 48 bytes, the marker counts characters
    in_bytes = _output_estimate(tmp_path, "a" * 200, {"mode": "bytes", "limit": 40})
    assert in_bytes == _tokens(_output_item("a" * 24 + "…152 chars truncated…" + "a" * 24))
    # no policy recorded: tokens 10,000 → 48,000 bytes kept
    default = _output_estimate(tmp_path, "b" * 50_000, None)
    kept = "b" * 24_000 + "…500 tokens truncated…" + "b" * 24_000
    assert default == _tokens(_output_item(kept))
    # under the cap: the output as written
    small = _output_estimate(tmp_path, "c" * 40, {"mode": "tokens", "limit": 10})
    assert small == _tokens(_output_item("c" * 40))


def test_content_item_outputs_spend_one_budget_in_order(tmp_path: Path) -> None:
    items = [
        {"type": "input_text", "text": "x" * 100},
        {"type": "input_text", "text": "y" * 100},
        {"type": "input_text", "text": "z" * 100},
    ]
    estimate = _output_estimate(tmp_path, items, {"mode": "tokens", "limit": 30})
    # 36 tokens: x costs 25, y is cut to the 11 left (44 bytes), z is dropped
    kept = [
        items[0],
        {"type": "input_text", "text": "y" * 22 + "…14 tokens truncated…" + "y" * 22},
        {"type": "input_text", "text": "[omitted 1 text items ...]"},
    ]
    assert estimate == _tokens(_output_item(kept))


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", width, height)
    return base64.b64encode(header + b"\x08\x06\x00\x00\x00" + b"\x00" * 600).decode()


def test_images_count_as_codex_counts_them(tmp_path: Path) -> None:
    data = _png(640, 480)
    url = f"data:image/png;base64,{data}"
    resized = {"type": "input_image", "image_url": url}
    original = {"type": "input_image", "image_url": url, "detail": "original"}
    r = Rollout().meta().task().context()
    r.item("message", role="user", content=[{"type": "input_text", "text": "see"}, resized])
    r.item("message", role="user", content=[original])
    _system, first, second = _load(r, tmp_path).messages
    size = len(compact(_message("user", {"type": "input_text", "text": "see"}, resized)))
    assert first.agent_estimate_tokens == math.ceil((size - len(data) + 7_373) / 4)
    size = len(compact(_message("user", original)))
    patches = (640 // 32) * (480 // 32)
    assert second.agent_estimate_tokens == math.ceil((size - len(data) + patches * 4) / 4)


def test_encrypted_reasoning_is_estimated_per_call(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("think")
    r.reasoning(encrypted_content="g" * 4_000).reasoning(encrypted_content="h" * 4_000)
    r.say("a").usage(1_000, reasoning=500)
    r.reasoning(encrypted_content="[REDACTED_ENCRYPTED_CONTENT len=4000 sha=0a1b2c]")
    r.say("b").usage(2_000, reasoning=500)
    r.reasoning(content=None)  # no encrypted content at all: Codex counts none
    r.say("c").usage(3_000, reasoning=500)
    session = _load(r, tmp_path)
    per_item = math.ceil((4_000 * 3 // 4 - 650) / 4)
    assert [m.reasoning_estimate_tokens for m in session.model_calls()] == [
        2 * per_item,
        per_item,  # the placeholder keeps the length
        0,
    ]
    assert "reasoning_estimated" not in session.metadata


def test_redacted_reasoning_is_predicted_from_the_reasoning_tokens(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("think")
    r.reasoning(encrypted_content="REDACTED").reasoning(encrypted_content="REDACTED")
    r.say("a").usage(1_000, reasoning=100)
    r.record("response_item", {"content": None, "summary": [], "type": "reasoning"})  # key dropped
    r.say("b").usage(2_000, reasoning=40)
    session = _load(r, tmp_path)

    def item(reasoning_tokens: float) -> int:
        return math.ceil((int(922 + 6.3 * reasoning_tokens) * 3 // 4 - 650) / 4)

    assert [m.reasoning_estimate_tokens for m in session.model_calls()] == [
        2 * item(50),  # 100 tokens split over the call's two items
        item(40),
    ]
    assert session.metadata["reasoning_estimated"] is True


def test_the_compaction_items_carry_their_estimates(tmp_path: Path) -> None:
    r = Rollout().meta().task().context().user("go")
    r.call("exec_command", {"cmd": "ls"}).usage(240_000).output("a.py")
    kept = _message("user", {"type": "input_text", "text": "go"})
    r.compacted([kept, {"type": "compaction", "encrypted_content": "E" * 2_000}])
    session = _load(r, tmp_path)
    copy, summary = session.messages[session.compactions[0].message_index :]
    assert copy.agent_estimate_tokens == _tokens(kept)
    assert summary.summary and summary.agent_estimate_tokens == math.ceil((1_500 - 650) / 4)
