"""The Qwen Code loader: detected as its own format (never as Claude Code, whose envelope it
shares), one call per ``api_response`` telemetry event, the active branch only, compressions
recorded; on our fixture and on the real logs of ``../shared/new-formats/qwen-code`` (skipped
when absent), with figures counted from the raw JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.fleet.survey import analyse_row
from core.formats import claude_code, detect_format, load_session
from core.formats.jsonl import read_head
from core.model.session import Role, SourceFormat
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "qwen" / "branch-compress.jsonl"
REAL = REPO.parent / "shared" / "new-formats" / "qwen-code"

# file: (main-agent api_response events, their largest input_token_count, sub-agent events,
# tool_result lines), counted with jq -s over the raw lines.
REAL_FIGURES = {
    "qwen-code-0.21.6_lantern-27d495d1.jsonl": (4, 2050, 0, 2),
    "qwen-code-0.21.6_lantern-a719f84a.jsonl": (1, 2050, 2, 0),
}


def test_a_qwen_log_is_qwen_code_and_never_claude_code() -> None:
    head = read_head(FIXTURE)
    assert claude_code.sniff(FIXTURE, head) == 0.0
    assert detect_format(FIXTURE) is SourceFormat.QWEN_CODE
    # even where Claude Code keeps its transcripts
    assert claude_code.sniff(Path("/home/u/.claude/projects/x/a.jsonl"), head) == 0.0


def test_one_call_per_api_response_on_the_active_branch() -> None:
    session = load_session(FIXTURE)
    calls = session.model_calls()
    assert [c.usage.prompt_tokens for c in calls if c.usage] == [5000, 5200, 5210, 950]
    assert calls[1].id == "t2:call" and calls[1].text == ""  # a call that left no message
    assert session.metadata["subagent_calls"] == 1
    assert session.metadata["calls_without_message"] == 1
    assert session.metadata["off_branch_records"] == 3  # the rewound "Delete it" turn
    assert all("Delete" not in m.text for m in session.messages)
    first = calls[0]
    assert first.reasoning == "Thinking about it" and first.text == "Reading."
    assert first.tool_calls[0].id == "call_1"
    result = next(m for m in session.messages if m.role is Role.TOOL).tool_result
    assert result is not None and result.call_id == "call_1" and result.output == "print('hi')"
    assert session.context_window == 262_144 and session.window_source == "recorded"
    assert session.agent_version == "0.21.6" and session.project == "/home/dev/app"


def test_a_chat_compression_is_a_recorded_compaction() -> None:
    session = load_session(FIXTURE)
    (event,) = session.compactions
    assert (event.trigger, event.tokens_before, event.tokens_after) == ("auto", 5260, 900)
    summary = session.messages[event.message_index]
    assert summary.summary and summary.compaction_boundary
    assert summary.text == "<state_snapshot>read main.py</state_snapshot>"
    row = analyse_row(str(FIXTURE))
    assert (row.agent, row.calls, row.peak_tokens, row.compactions) == ("qwen-code", 4, 5210, 1)


@pytest.mark.skipif(not REAL.is_dir(), reason="shared new-formats samples are not available")
@pytest.mark.parametrize("name", sorted(REAL_FIGURES))
def test_real_qwen_logs(name: str) -> None:
    path = REAL / name
    calls, peak, subagent, tools = REAL_FIGURES[name]
    assert detect_format(path) is SourceFormat.QWEN_CODE
    session = load_session(path)
    assert session.id.startswith(path.stem.rsplit("-", 1)[1])
    assert sum(1 for m in session.messages if m.role is Role.TOOL) == tools
    assert session.metadata.get("subagent_calls", 0) == subagent
    row = analyse_row(str(path))
    assert row.error is None
    assert (row.agent, row.calls, row.peak_tokens, row.compactions) == (
        "qwen-code",
        calls,
        peak,
        0,
    )
    assert (row.model, row.window_tokens) == ("qwen3:0.6b", 262_144)
