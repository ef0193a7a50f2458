"""The Copilot CLI loader on events written here, and on the real files when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.fleet.survey import analyse
from core.formats import detect_format, load_session
from core.formats.subagents import child_paths
from core.insights.estimate_calibration import calibration
from core.model.session import Role, SourceFormat
from core.policy import preset_for
from core.replay import Replayer, native_policy
from tests.support.paths import REPO

NEW_FORMATS = REPO.parent / "shared" / "new-formats"
COPILOT = NEW_FORMATS / "copilot-cli"
SID = "5e55c0de-0000-4000-8000-000000000001"


class Events:
    """A Copilot CLI events.jsonl, one event a call."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.clock = 0

    def add(self, kind: str, agent: str | None = None, **data: Any) -> Events:
        self.clock += 1
        event: dict[str, Any] = {
            "type": kind,
            "data": data,
            "id": f"ev-{len(self.lines)}",
            "timestamp": f"2026-05-01T10:00:{self.clock:02d}.000Z",
            "parentId": self.lines[-1]["id"] if self.lines else None,
        }
        if agent is not None:
            event["agentId"] = agent
        self.lines.append(event)
        return self

    def write(self, folder: Path) -> Path:
        path = folder / "session-state" / SID / "events.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def _session(tmp_path: Path) -> Path:
    e = Events()
    e.add(
        "session.start",
        sessionId=SID,
        producer="copilot-agent",
        copilotVersion="1.0.80",
        startTime="2026-05-01T10:00:00.000Z",
        context={"cwd": "/work"},
    )
    e.add("session.model_change", newModel="gpt-5.5")
    e.add("system.message", role="system", content="You are Copilot. " * 20)
    e.add("user.message", content="fix it", transformedContent="<t/>\nfix it")
    e.add(
        "assistant.message",
        messageId="m1",
        content="",
        outputTokens=40,
        model="gpt-5.5",
        toolRequests=[{"toolCallId": "c1", "name": "view", "arguments": {"path": "a.py"}}],
    )
    e.add("tool.execution_start", toolCallId="c1", toolName="view")
    e.add(
        "tool.execution_complete",
        toolCallId="c1",
        success=True,
        result={"content": "print('a')\n" * 50},
    )
    e.add("hook.end", hookType="postToolUse", success=False)
    e.add("subagent.started", agentId="explore-1", agentName="explore", toolCallId="c2")
    e.add("user.message", agent="explore-1", content="look around")
    e.add(
        "assistant.message",
        agent="explore-1",
        messageId="s1",
        content="found a.py",
        outputTokens=9,
        toolRequests=[],
    )
    e.add(
        "session.compaction_start",
        trigger="threshold",
        currentTokens=300_000,
        systemTokens=900,
        conversationTokens=290_000,
        toolDefinitionsTokens=9_100,
        tokenLimit=400_000,
    )
    e.add(
        "session.compaction_complete",
        success=True,
        trigger="threshold",
        preCompactionTokens=300_000,
        postCompactionTokens=12_000,
        tokenLimit=400_000,
        summaryContent="We fixed a.py.",
    )
    e.add(
        "session.truncation",
        tokenLimit=400_000,
        performedBy="BasicTruncator",
        preTruncationTokensInMessages=20_000,
        tokensRemovedDuringTruncation=5_000,
        messagesRemovedDuringTruncation=2,
        postTruncationTokensInMessages=15_000,
        preTruncationMessagesLength=9,
        postTruncationMessagesLength=7,
    )
    e.add(
        "assistant.message",
        messageId="m2",
        content="done",
        outputTokens=12,
        model="gpt-5.5",
        toolRequests=[],
    )
    e.add(
        "session.shutdown",
        shutdownType="routine",
        currentTokens=21_000,
        systemTokens=900,
        conversationTokens=11_000,
        toolDefinitionsTokens=9_100,
        currentModel="gpt-5.5",
        modelMetrics={
            "gpt-5.5": {
                "requests": {"count": 3},
                "usage": {
                    "inputTokens": 330_000,
                    "outputTokens": 61,
                    "cacheReadTokens": 0,
                    "cacheWriteTokens": 0,
                },
            }
        },
    )
    return e.write(tmp_path)


def test_an_event_log_loads_as_copilot_cli(tmp_path: Path) -> None:
    path = _session(tmp_path)
    assert detect_format(path) is SourceFormat.COPILOT_CLI
    session = load_session(path)
    assert (session.id, session.agent_version, session.project) == (SID, "1.0.80", "/work")
    assert session.model == "gpt-5.5" and session.provider == "github-copilot"
    assert (session.context_window, session.window_source) == (400_000, "recorded")
    calls = session.model_calls()
    assert [m.id for m in calls] == ["m1", "m2"]  # the sub-agent's call is not the main one's
    assert all(m.usage is None for m in calls)  # no prompt size is recorded: nothing to trust
    assert calls[0].tool_calls[0].name == "view"
    tool = next(m for m in session.messages if m.role is Role.TOOL)
    assert tool.tool_result is not None and tool.tool_result.tool_name == "view"
    assert session.messages[1].text == "<t/>\nfix it"  # what the model was sent
    [event] = session.compactions
    assert (event.trigger, event.tokens_before, event.tokens_after) == ("auto", 300_000, 12_000)
    assert session.messages[event.message_index].summary
    assert session.metadata["truncations"][0]["tokens_removed"] == 5_000
    [note] = [d for d in session.diagnostics if d.code == "copilot-truncation"]
    assert "2 messages (5000 tokens)" in note.message
    assert session.metadata["hooks"] == {"postToolUse": {"runs": 1, "failures": 1}}
    assert session.metadata["output_tokens"] == 52
    # the tool definitions are the part of the context the messages never show
    assert session.metadata["context_overhead"] == 9_100
    assert child_paths(session) == [f"{path}#explore-1"]


def test_a_sub_agent_is_its_own_session_with_its_parent(tmp_path: Path) -> None:
    path = _session(tmp_path)
    child = load_session(f"{path}#explore-1")
    assert child.id == "explore-1" and child.parent_session_id == SID
    assert [m.text for m in child.messages] == ["look around", "found a.py"]
    assert child.metadata["agentName"] == "explore"
    assert child.started_at == "2026-05-01T10:00:09.000Z"  # its subagent.started event


def test_per_agent_totals_are_each_agents_own(tmp_path: Path) -> None:
    e = Events()
    e.add("session.start", sessionId=SID, producer="copilot-agent", copilotVersion="1.0.90")
    e.add("user.message", content="go")
    e.add("assistant.message", messageId="m1", content="ok", outputTokens=3, model="gpt-5.5")
    e.add("user.message", agent="sub-1", content="look")
    e.add("assistant.message", agent="sub-1", messageId="s1", content="seen", model="gpt-5-mini")
    metric = {"requests": {"count": 1}, "usage": {"inputTokens": 900, "outputTokens": 3}}
    e.add(
        "session.shutdown",
        currentTokens=1_000,
        toolDefinitionsTokens=500,
        modelMetrics={"gpt-5.5": metric, "gpt-5-mini": metric},
        agentMetrics={
            "main": {"modelMetrics": {"gpt-5.5": metric}},
            "sub-1": {"modelMetrics": {"gpt-5-mini": {**metric, "usage": {"inputTokens": 40}}}},
        },
    )
    path = e.write(tmp_path)
    main = load_session(path)
    assert list(main.metadata["model_totals"]) == ["gpt-5.5"]
    child = load_session(f"{path}#sub-1")
    assert child.metadata["model_totals"] == {
        "gpt-5-mini": {"input": 40, "output": 0, "cache_read": 0, "cache_write": 0, "requests": 1}
    }
    assert "measured_context" not in child.metadata  # the shutdown's context is the main one's


def test_the_estimate_is_calibrated_against_what_the_file_measured(tmp_path: Path) -> None:
    session = load_session(_session(tmp_path))
    result = Replayer(session).run(native_policy(session))
    assert {p.baseline_provenance.value for p in result.points} == {"estimated"}
    cal = calibration(session, result.points)
    assert cal is not None
    assert [p.measured for p in cal.points] == [300_000, 21_000]
    shutdown = cal.points[1]
    assert shutdown.estimated is not None and shutdown.error is not None
    assert shutdown.error == round((shutdown.estimated - 21_000) / 21_000, 4)
    [total] = cal.model_totals
    assert (total.measured_input, total.calls, total.requests) == (330_000, 2, 3)
    assert cal.largest_error is not None and cal.largest_error > 0.5  # the 300k point is far off


def test_the_preset_uses_the_sdk_thresholds() -> None:
    policy = preset_for("copilot-cli")
    assert policy.compaction.threshold_rule == "codex"
    assert policy.compaction.codex_ratio == 0.8
    assert "95%" in policy.description


# -- the real files (skipped when absent) ----------------------------------------------------

# Counted from the raw files: assistant.message events, the shutdown's currentTokens, its
# modelMetrics inputTokens; none holds a compaction event.
REAL = {
    "copilot-cli-1.0.12_testrepo-699504f045e2.jsonl": (
        "1.0.12",
        "claude-sonnet-4.6",
        2,
        19_816,
        40_503,
    ),
    "copilot-cli-1.0.20_testrepo-d6c5b42b281b.jsonl": (
        "1.0.20",
        "claude-sonnet-4.6",
        3,
        20_623,
        62_754,
    ),
    "copilot-cli-1.0.78_lantern-049410b4.jsonl": ("1.0.78", "qwen3:0.6b", 2, 14_239, 4_100),
    "copilot-cli-1.0.78_lantern-8b23eac7.jsonl": ("1.0.78", "qwen3:0.6b", 1, 13_329, 2_050),
    "copilot-cli-1.0.78_lantern-e317ef84.jsonl": ("1.0.78", "qwen3:0.6b", 1, 13_185, 2_050),
    "copilot-cli-1.0.78_lantern-f27af309.jsonl": ("1.0.78", "qwen3:0.6b", 2, 13_409, 4_100),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_the_real_copilot_files(name: str) -> None:
    path = COPILOT / name
    if not path.is_file():
        pytest.skip("the shared Copilot CLI samples are not here")
    version, model, calls, current, input_total = REAL[name]
    session = load_session(path)
    assert session.format is SourceFormat.COPILOT_CLI
    assert (session.agent_version, session.model) == (version, model)
    assert len(session.model_calls()) == calls
    assert session.compactions == []
    assert session.metadata["measured_context"][-1]["tokens"] == current
    assert session.metadata["model_totals"][model]["input"] == input_total
    # no call records its prompt: there is no recorded peak, only an estimated one
    row = analyse(str(path)).row
    assert (row.calls, row.compactions, row.peak_provenance) == (calls, 0, "estimated")
