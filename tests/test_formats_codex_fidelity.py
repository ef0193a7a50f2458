"""What the Codex loader reads for a faithful replay: turns and triggers, windows per turn, resumes
and forks, the post-compaction estimate, and Codex's own size estimates of its history items.
Every rollout here is hand-written with :class:`tests.codex_rollout.Rollout`."""

from __future__ import annotations

import json
from pathlib import Path

from codex_rollout import SESSION_ID, SESSION_MS, Rollout, uuid7

from core.formats import load_session
from core.models import Role, Session, Severity, WindowChange


def _load(rollout: Rollout, folder: Path) -> Session:
    return load_session(rollout.write(folder))


def _codes(session: Session) -> list[str]:
    return [d.code for d in session.diagnostics]


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
    inherited_compaction = r.last_line
    r.reset(9_000)
    r.call("spawn_agent", {"fork_context": True}).usage(20_000)
    r.output("You are the newly spawned agent.")
    last_inherited = r.last_line
    r.task(turn_ms=SESSION_MS + 200).context().user("review commit b074cde")
    r.say("looks fine").usage(21_000).done()
    session = _load(r, tmp_path)

    assert session.id == SESSION_ID
    assert session.metadata["forked_from"] == parent
    own = next(m.index for m in session.messages if m.text == "review commit b074cde")
    assert session.metadata["forked_history"] == {
        "first_line": 3,
        "last_line": last_inherited,
        "first_own_message": own,
    }
    notes = [d for d in session.diagnostics if d.code == "forked-history"]
    assert len(notes) == 1 and notes[0].severity is Severity.INFO and notes[0].line == 3
    assert f"({last_inherited - 2} records)" in notes[0].message
    assert next(m.text for m in session.messages if m.role is Role.SYSTEM) == "You are Codex."
    # the inherited messages are this session's context, and its compaction stays in the file
    assert session.messages[own - 1].tool_result is not None
    [event] = session.compactions
    assert event.source_line == inherited_compaction
    assert (event.trigger, event.phase) == ("auto", "mid-turn")
    assert event.trigger_evidence is not None and parent in event.trigger_evidence
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
