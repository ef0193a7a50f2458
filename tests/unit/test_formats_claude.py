"""The Claude Code loader: block lines merged per API call, tool results, compactions, branches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.formats import claude_code as cc
from core.formats import detect_format, load_session
from core.formats.jsonl import read_record
from core.model.session import Role, Session, SourceFormat, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "claude"
SID = "9b1c0e55-7a2d-4c3e-9f10-5a6b7c8d9e0f"
BASIC = FIXTURES / f"{SID}.jsonl"
SUBAGENT = FIXTURES / SID / "subagents" / "agent-a7f3c21.jsonl"
COMPACT = FIXTURES / "compact_after_rewind.jsonl"
ONE_MILLION = FIXTURES / "one_million.jsonl"
SAMPLES = REPO.parent / "shared" / "samples" / "claude-code"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _sample(name: str) -> Path:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip("shared samples are not available")
    return path


@pytest.fixture(scope="module")
def basic() -> Session:
    return load_session(BASIC)


# -- the fixture session --------------------------------------------------------------------


def test_detected_as_claude_code() -> None:
    for path in (BASIC, SUBAGENT, COMPACT, ONE_MILLION):
        assert detect_format(path) is SourceFormat.CLAUDE_CODE


def test_session_facts(basic: Session) -> None:
    assert basic.id == SID
    assert basic.format is SourceFormat.CLAUDE_CODE
    assert basic.project == "/home/dev/shop"
    assert basic.model == "claude-sonnet-4-5-20250929"
    assert basic.started_at == "2026-03-02T09:00:00.000Z"
    assert basic.metadata["version"] == "2.1.40"


def test_block_lines_merge_into_one_call_with_usage_once(basic: Session) -> None:
    raw = [o for o in _lines(BASIC) if o.get("type") == "assistant"]
    msg_01_lines = [o for o in raw if o["message"]["id"] == "msg_01"]
    assert len(msg_01_lines) == 4  # thinking, text, two tool_use lines
    calls = [m for m in basic.messages if m.id == "msg_01"]
    assert len(calls) == 1
    call = calls[0]
    assert call.role is Role.ASSISTANT
    assert call.reasoning == "Look at the test output first."
    assert call.text == "Let me run the tests and read the cart module."
    assert [t.name for t in call.tool_calls] == ["Bash", "Read"]
    assert call.tool_calls[0].arguments == {
        "command": "pytest tests/test_checkout.py -q",
        "description": "Run checkout tests",
    }
    # The largest copy of the repeated usage wins (earlier copies are mid-stream).
    final = max(msg_01_lines, key=lambda o: o["message"]["usage"]["output_tokens"])["message"]
    assert call.usage is not None
    assert call.usage.output == final["usage"]["output_tokens"] == 240
    assert call.usage.convention is UsageConvention.ANTHROPIC
    u = final["usage"]
    assert call.usage.prompt_tokens == (
        u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
    )
    assert call.stop_reason == "tool_use"
    assert call.source_line == 4  # the first block line (line 1 is a snapshot, 2 progress)


def test_one_model_call_per_distinct_message_id(basic: Session) -> None:
    ids = {
        o["message"]["id"]
        for o in _lines(BASIC)
        if o.get("type") == "assistant" and o["message"].get("model") != "<synthetic>"
    }
    with_usage = [m for m in basic.model_calls() if m.usage is not None]
    assert {m.id for m in with_usage} == ids


def test_tool_results_joined_to_their_calls(basic: Session) -> None:
    tools = [m for m in basic.messages if m.role is Role.TOOL]
    assert [(t.tool_result.call_id, t.tool_result.tool_name) for t in tools if t.tool_result] == [
        ("toolu_run", "Bash"),
        ("toolu_read", "Read"),
    ]
    run, read = (t.tool_result for t in tools)
    assert run is not None and read is not None
    assert run.is_error is True and "1 failed" in run.output
    # list content: the text blocks, in order; toolUseResult (the UI copy) is not the output
    assert read.is_error is False
    assert read.output.startswith("     1→def total(items):")
    assert read.output.endswith("(end of file)")
    # tool messages come after the call that asked for them
    call_index = next(m.index for m in basic.messages if m.id == "msg_01")
    assert all(t.index > call_index for t in tools)


def test_meta_lines_and_turns(basic: Session) -> None:
    caveat = next(m for m in basic.messages if m.text.startswith("<local-command-caveat>"))
    assert caveat.meta and not caveat.is_turn_start
    starts = [basic.messages[i].text for i in basic.turn_starts()]
    assert starts == ["Why does the checkout test fail?", "Fix it please."]


def test_api_error_line(basic: Session) -> None:
    failed = next(m for m in basic.messages if m.id == "msg_03")
    assert failed.error == "API Error: 529 Overloaded"
    assert failed.usage is None  # Claude Code wrote it itself: no model call behind it


def test_skipped_records_and_titles(basic: Session) -> None:
    assert basic.compactions == []  # the legacy summary line is a title, not a compaction
    assert basic.metadata["title"] == "Fix checkout total"  # ai-title is the last title line
    codes = [d.code for d in basic.diagnostics]
    # progress, file-history-snapshot, queue-operation, system/turn_duration: silent
    assert codes == ["unknown-record"]
    assert basic.diagnostics[0].line == 18
    assert "hologram-state" in basic.diagnostics[0].message
    # unknown fields from a newer version are ignored
    fixed = next(m for m in basic.messages if m.id == "msg_04")
    assert fixed.usage is not None and fixed.usage.output == 60


def test_source_offsets_re_read_the_raw_record(basic: Session) -> None:
    for message in basic.messages:
        assert message.source_line is not None and message.source_offset is not None
        raw = read_record(BASIC, message.source_offset)
        assert raw is not None
        assert raw == _lines(BASIC)[message.source_line - 1]


def test_parent_ids_point_at_messages(basic: Session) -> None:
    ids = {m.id for m in basic.messages}
    assert basic.messages[0].parent_id is None  # its parent is a progress line
    for message in basic.messages[1:]:
        assert message.parent_id in ids
    assert len(ids) == len(basic.messages)


def test_window_defaults_to_200k(basic: Session) -> None:
    assert basic.context_window == 200_000
    assert basic.window_source == "table"


def test_window_override() -> None:
    session = load_session(BASIC, window=123_456)
    assert (session.context_window, session.window_source) == (123_456, "user")


def test_one_million_model() -> None:
    session = load_session(ONE_MILLION)
    assert session.model == "claude-sonnet-4-5[1m]"
    assert session.context_window == 1_000_000


def test_context_above_200k_implies_1m_window(tmp_path: Path) -> None:
    rows = _lines(ONE_MILLION)
    for row in rows:
        if row["type"] == "assistant":
            row["message"]["model"] = "claude-sonnet-4-5-20250929"
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = load_session(path)
    assert session.context_window == 1_000_000
    assert any(d.code == "window-inferred" for d in session.diagnostics)


def test_progress_callback_reaches_the_total(tmp_path: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    session = load_session(BASIC, progress=lambda a, b, c: seen.append((a, b, c)))
    size = BASIC.stat().st_size
    assert seen and seen[-1][0] == size and all(total == size for _, total, _ in seen)
    assert [a for a, _, _ in seen] == sorted(a for a, _, _ in seen)
    assert seen[-1][2] > 0  # messages read so far, before they are assembled
    assert session.messages


# -- compaction and rewinds -----------------------------------------------------------------


def test_compact_boundary_becomes_an_event() -> None:
    session = load_session(COMPACT)
    assert len(session.compactions) == 1
    event = session.compactions[0]
    raw = next(o for o in _lines(COMPACT) if o.get("subtype") == "compact_boundary")
    assert event.trigger == raw["compactMetadata"]["trigger"] == "auto"
    assert event.tokens_before == raw["compactMetadata"]["preTokens"]
    assert event.tokens_after == raw["compactMetadata"]["postTokens"]
    summary = session.messages[event.message_index]
    assert summary.summary and summary.compaction_boundary
    assert not summary.is_turn_start
    assert event.summary == summary.text
    assert event.source_line == 7
    # the history before the compaction is kept (reached through logicalParentUuid)
    assert session.messages[0].text == "Plan the migration."


def test_rewound_branch_is_left_out_with_a_diagnostic() -> None:
    session = load_session(COMPACT)
    texts = [m.text for m in session.messages]
    assert "Use Postgres 15." not in texts and "Postgres 15 plan drafted." not in texts
    assert "Actually, use Postgres 16." in texts
    abandoned = [d for d in session.diagnostics if d.code == "abandoned-branch"]
    assert len(abandoned) == 1 and abandoned[0].line == 3
    assert [m.is_turn_start for m in session.messages].count(True) == 3


# -- sub-agents and sidechains --------------------------------------------------------------


def test_subagent_file_loads_on_its_own() -> None:
    session = load_session(SUBAGENT)
    assert session.metadata["subagent"] is True
    assert session.metadata["agent_id"] == "a7f3c21"
    assert session.id == "a7f3c21"  # the sub-agent's own id
    assert session.parent_session_id == SID  # its lines carry the parent's session id
    assert [m.role for m in session.messages] == [Role.USER, Role.ASSISTANT]
    assert session.turn_starts() == [0]
    assert not any(m.sidechain for m in session.messages)


def test_session_lists_its_subagent_files(basic: Session) -> None:
    assert basic.metadata["subagent_files"] == [str(SUBAGENT)]


def test_sidechain_lines_in_a_main_file_are_flagged(tmp_path: Path) -> None:
    rows = _lines(BASIC) + [
        {**row, "uuid": f"side-{i}", "parentUuid": None if i == 0 else "side-0"}
        for i, row in enumerate(_lines(SUBAGENT))
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = load_session(path)
    side = [m for m in session.messages if m.sidechain]
    assert [m.text for m in side] == ["Find where totals are computed.", "In cart.py, total()."]
    assert session.turn_starts() == load_session(BASIC).turn_starts()  # sidechains start no turn
    assert session.model == "claude-sonnet-4-5-20250929"  # the main model, not the sub-agent's


def test_old_style_agent_file_next_to_the_session(tmp_path: Path) -> None:
    shutil.copy(BASIC, tmp_path / BASIC.name)
    rows = _lines(SUBAGENT)
    (tmp_path / "agent-0badc0de.jsonl").write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    )
    (tmp_path / "agent-other.jsonl").write_text(
        json.dumps({**rows[0], "sessionId": "someone-else"}, separators=(",", ":")) + "\n"
    )
    session = load_session(tmp_path / BASIC.name)
    assert session.metadata["subagent_files"] == [str(tmp_path / "agent-0badc0de.jsonl")]


def test_sniff_ignores_other_formats() -> None:
    codex_line = b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n'
    assert cc.sniff(Path("rollout.jsonl"), codex_line) == 0.0
    assert cc.sniff(Path("x.jsonl"), b"") == 0.0
    assert cc.sniff(Path("x.jsonl"), BASIC.read_bytes()[:65536]) >= 0.9


# -- real sessions (skipped when the shared samples are absent) ------------------------------


def test_real_compact_boundary_258c7280() -> None:
    path = _sample("258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    rows = _lines(path)
    boundaries = [(i + 1, o) for i, o in enumerate(rows) if o.get("subtype") == "compact_boundary"]
    session = load_session(path)
    assert len(session.compactions) == len(boundaries) == 1
    line, raw = boundaries[0]
    event = session.compactions[0]
    assert event.trigger == raw["compactMetadata"]["trigger"]
    assert event.tokens_before == raw["compactMetadata"]["preTokens"]
    assert event.source_line == line
    first_after = session.messages[event.message_index]
    assert first_after.compaction_boundary and first_after.summary
    summary_rows = [o for o in rows if o.get("isCompactSummary")]
    assert first_after.text == summary_rows[0]["message"]["content"]


def test_real_usage_dedupe_258c7280() -> None:
    path = _sample("258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    best: dict[str, dict[str, Any]] = {}
    lines_with_usage = 0
    for o in _lines(path):
        if o.get("type") != "assistant" or o.get("isSidechain"):
            continue
        usage = o["message"].get("usage")
        if not usage:
            continue
        lines_with_usage += 1
        key = o["message"]["id"]
        if key not in best or usage["output_tokens"] > best[key]["output_tokens"]:
            best[key] = usage
    session = load_session(path)
    calls = [m for m in session.model_calls() if m.usage is not None]
    assert lines_with_usage > len(best)  # the file does repeat usage across block lines
    assert len(calls) == len(best)
    assert sum(m.usage.output for m in calls if m.usage) == sum(
        u["output_tokens"] for u in best.values()
    )
    assert max(m.usage.prompt_tokens for m in calls if m.usage) == max(
        u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        for u in best.values()
    )


def test_real_tool_results_all_joined_258c7280() -> None:
    path = _sample("258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    result_blocks = sum(
        1
        for o in _lines(path)
        if o.get("type") == "user" and isinstance(o["message"]["content"], list)
        for b in o["message"]["content"]
        if b.get("type") == "tool_result"
    )
    session = load_session(path)
    tools = [m for m in session.messages if m.role is Role.TOOL]
    assert len(tools) == result_blocks
    assert all(m.tool_result and m.tool_result.tool_name for m in tools)
    assert not [d for d in session.diagnostics if d.code.endswith("tool-result")]


def test_real_legacy_summary_lines_are_not_compactions() -> None:
    path = _sample("session-9eda1058.jsonl")
    titles = [o["summary"] for o in _lines(path) if o.get("type") == "summary"]
    assert len(titles) > 1
    session = load_session(path)
    assert session.compactions == []
    assert not any(m.summary for m in session.messages)
    assert session.metadata["title"] == titles[-1]


def test_real_rewind_sample() -> None:
    path = _sample("dag_compact_after_rewind.jsonl")
    session = load_session(path)
    texts = [m.text for m in session.messages]
    assert "First attempt" not in texts and "Second attempt" in texts
    assert len(session.compactions) == 1
    assert session.messages[session.compactions[0].message_index].summary


def test_real_old_subagent_file() -> None:
    main = _sample("4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl")
    agent = SAMPLES / "agent-36541525.jsonl"
    session = load_session(main)
    assert str(agent) in session.metadata["subagent_files"]
    sub = load_session(agent)
    assert sub.metadata["subagent"] is True and sub.turn_starts() == [0]


def test_window_stated_by_a_prompt_too_long_error(tmp_path: Path) -> None:
    rows = _lines(ONE_MILLION)
    for row in rows:
        if row["type"] == "assistant":
            row["message"]["model"] = "claude-sonnet-4-5-20250929"
            row["message"]["usage"]["cache_read_input_tokens"] = 205_000
    error = {
        **rows[-1],
        "uuid": "m-err",
        "parentUuid": "m-a1",
        "isApiErrorMessage": True,
        "message": {
            **rows[-1]["message"],
            "id": "msg_err",
            "model": "<synthetic>",
            "content": [
                {
                    "type": "text",
                    "text": "API Error: 400 prompt is too long: 210097 tokens > 200000 maximum",
                }
            ],
        },
    }
    path = tmp_path / "too-long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, error]))
    session = load_session(path)
    # the provider's own statement wins over the >200k inference
    assert (session.context_window, session.window_source) == (200_000, "recorded")
    assert not any(d.code == "window-inferred" for d in session.diagnostics)
    assert session.messages[-1].error is not None and session.messages[-1].usage is None


def test_slash_commands_and_their_output_are_context_not_turns(tmp_path: Path) -> None:
    def user(uuid: str, parent: str | None, text: str) -> dict[str, Any]:
        return {
            "type": "user",
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": text},
        }

    rows = [
        user(
            "u1", None, "<command-name>/model</command-name>\n<command-args>sonnet</command-args>"
        ),
        user("u2", "u1", "<local-command-stdout>Set model to Sonnet</local-command-stdout>"),
        user("u3", "u2", "Fix the flaky webhook test"),
    ]
    path = tmp_path / "commands.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = load_session(path)
    assert [m.meta for m in session.messages] == [True, True, False]
    assert session.turn_starts() == [2]
