"""Small sessions with sub-agents: a Claude Code parent that hands a search to a sub-agent, and a
Copilot CLI event log with a sub-agent and a background compaction.

Made up, deterministic (fixed ids and times, no randomness), in the field shapes the agents write
(see ``core/formats/claude_code.py`` and ``core/formats/copilot.py`` for what is read of them).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

PARENT_ID = "5a11ce00-0000-4000-8000-00000000f001"
AGENT_ID = "a5c0de1"
COPILOT_ID = "c0911c00-0000-4000-8000-00000000c011"
START = dt.datetime(2026, 3, 20, 9, 0, 0, tzinfo=dt.UTC)


def _at(seconds: float) -> str:
    return (START + dt.timedelta(seconds=seconds)).isoformat(timespec="milliseconds")[:-6] + "Z"


def _dump(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()


# -- Claude Code -----------------------------------------------------------------------------


class _Claude:
    def __init__(self, sidechain: bool) -> None:
        self.records: list[dict[str, Any]] = []
        self.sidechain = sidechain
        self.last: str | None = None

    def _line(self, kind: str, at: float, message: dict[str, Any], **extra: Any) -> None:
        uuid = (
            f"{'5' if self.sidechain else '0'}{len(self.records):07d}-0000-4000-8000-000000000000"
        )
        record: dict[str, Any] = {
            "parentUuid": self.last,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": "/home/dev/shop",
            "sessionId": PARENT_ID,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": _at(at),
            **extra,
        }
        if self.sidechain:
            record["agentId"] = AGENT_ID
        self.records.append(record)
        self.last = uuid

    def user(self, at: float, content: Any, **extra: Any) -> None:
        self._line("user", at, {"role": "user", "content": content}, **extra)

    def assistant(self, at: float, content: list[dict[str, Any]], prompt: int, out: int) -> None:
        number = len(self.records)
        message = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_{'s' if self.sidechain else 'p'}{number:04d}",
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
            "usage": {
                "input_tokens": 3,
                "cache_creation_input_tokens": 400,
                "cache_read_input_tokens": prompt - 403,
                "output_tokens": out,
            },
        }
        self._line("assistant", at, message)


def _read_output(lines: int) -> str:
    return "\n".join(f"{n:>5}\tdef handler_{n}(event):  # webhook route {n}" for n in range(lines))


def claude_family() -> dict[str, bytes]:
    """``claude-code/delegating.jsonl`` and its sub-agent ``delegating/subagents/agent-*.jsonl``."""
    task = "Find every place the webhook retry delay is computed and report file:line for each."
    child = _Claude(sidechain=True)
    child.user(20.0, task)
    child.assistant(
        22.0,
        [
            {
                "type": "tool_use",
                "id": "toolu_s1",
                "name": "Grep",
                "input": {"pattern": "retry_delay"},
            }
        ],
        14_200,
        60,
    )
    child.user(
        23.0,
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_s1",
                "content": "app/webhooks/retry.py:41\napp/webhooks/queue.py:88",
            }
        ],
    )
    child.assistant(
        26.0,
        [
            {
                "type": "tool_use",
                "id": "toolu_s2",
                "name": "Read",
                "input": {"file_path": "app/webhooks/retry.py"},
            }
        ],
        14_400,
        50,
    )
    child.user(
        27.0, [{"type": "tool_result", "tool_use_id": "toolu_s2", "content": _read_output(300)}]
    )
    answer = "Two places: app/webhooks/retry.py:41 (backoff) and app/webhooks/queue.py:88 (cap)."
    child.assistant(31.0, [{"type": "text", "text": answer}], 21_900, 120)

    parent = _Claude(sidechain=False)
    parent.user(0.0, "The webhook retries are too slow. Where is the delay computed?")
    parent.assistant(
        4.0,
        [
            {"type": "text", "text": "I'll have a sub-agent search for it."},
            {
                "type": "tool_use",
                "id": "toolu_p1",
                "name": "Task",
                "input": {
                    "description": "find retry delay",
                    "prompt": task,
                    "subagent_type": "Explore",
                },
            },
        ],
        18_300,
        90,
    )
    parent.user(
        33.0,
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_p1",
                "content": [{"type": "text", "text": answer}],
            }
        ],
        toolUseResult={"status": "completed", "agentId": AGENT_ID, "totalTokens": 22_020},
    )
    parent.assistant(
        36.0,
        [
            {
                "type": "tool_use",
                "id": "toolu_p2",
                "name": "Read",
                "input": {"file_path": "app/webhooks/retry.py"},
            }
        ],
        18_600,
        70,
    )
    parent.user(
        37.0, [{"type": "tool_result", "tool_use_id": "toolu_p2", "content": _read_output(120)}]
    )
    parent.assistant(
        42.0, [{"type": "text", "text": "The delay doubles from 30 s: halve it."}], 21_400, 200
    )
    meta = {"agentType": "Explore", "description": "find retry delay"}
    return {
        "claude-code/delegating.jsonl": _dump(parent.records),
        f"claude-code/delegating/subagents/agent-{AGENT_ID}.jsonl": _dump(child.records),
        f"claude-code/delegating/subagents/agent-{AGENT_ID}.meta.json": (
            json.dumps(meta, indent=2) + "\n"
        ).encode(),
    }


# -- Copilot CLI -----------------------------------------------------------------------------


class _Events:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, at: float, kind: str, data: dict[str, Any], agent: str | None = None) -> None:
        record: dict[str, Any] = {
            "type": kind,
            "data": data,
            "id": f"e0000000-0000-4000-8000-{len(self.records):012d}",
            "timestamp": _at(at),
            "parentId": self.records[-1]["id"] if self.records else None,
        }
        if agent is not None:
            record["agentId"] = agent
        self.records.append(record)


def copilot_session() -> dict[str, bytes]:
    """``copilot-cli/session-state/<id>/events.jsonl``: two turns, a sub-agent, a compaction."""
    e = _Events()
    e.add(
        0,
        "session.start",
        {
            "sessionId": COPILOT_ID,
            "version": 1,
            "producer": "copilot-agent",
            "copilotVersion": "1.0.78",
            "startTime": _at(0),
            "context": {"cwd": "/home/dev/shop", "branch": "main"},
        },
    )
    e.add(0.1, "session.model_change", {"newModel": "claude-sonnet-4.6"})
    e.add(
        0.2,
        "system.message",
        {"role": "system", "content": "You are the GitHub Copilot CLI. " * 120},
    )
    e.add(
        1,
        "user.message",
        {
            "content": "Make the webhook retry delay configurable.",
            "transformedContent": "Make the webhook retry delay configurable.",
        },
    )
    e.add(2, "assistant.turn_start", {"turnId": "0"})
    e.add(
        6,
        "assistant.message",
        {
            "messageId": "m-1",
            "model": "claude-sonnet-4.6",
            "content": "",
            "outputTokens": 95,
            "toolRequests": [
                {"toolCallId": "call-1", "name": "task", "arguments": {"agent": "explore"}}
            ],
        },
    )
    e.add(
        6.5,
        "subagent.started",
        {"agentId": "explore-1", "agentName": "explore", "toolCallId": "call-1"},
    )
    e.add(7, "user.message", {"content": "Find where the retry delay is set."}, agent="explore-1")
    e.add(
        12,
        "assistant.message",
        {
            "messageId": "s-1",
            "model": "claude-haiku-4.5",
            "content": "app/webhooks/retry.py:41",
            "outputTokens": 30,
            "toolRequests": [],
        },
        agent="explore-1",
    )
    e.add(
        13,
        "tool.execution_complete",
        {
            "toolCallId": "call-1",
            "success": True,
            "result": {"content": "app/webhooks/retry.py:41"},
        },
    )
    e.add(
        15,
        "assistant.message",
        {
            "messageId": "m-2",
            "model": "claude-sonnet-4.6",
            "content": "",
            "outputTokens": 120,
            "toolRequests": [
                {
                    "toolCallId": "call-2",
                    "name": "view",
                    "arguments": {"path": "app/webhooks/retry.py"},
                }
            ],
        },
    )
    e.add(
        16,
        "tool.execution_complete",
        {"toolCallId": "call-2", "success": True, "result": {"content": _read_output(600)}},
    )
    e.add(
        17,
        "session.compaction_start",
        {
            "trigger": "threshold",
            "currentTokens": 21_300,
            "systemTokens": 1_100,
            "conversationTokens": 8_400,
            "toolDefinitionsTokens": 11_800,
            "tokenLimit": 24_000,
        },
    )
    e.add(
        24,
        "session.compaction_complete",
        {
            "success": True,
            "trigger": "threshold",
            "preCompactionTokens": 21_300,
            "postCompactionTokens": 13_000,
            "tokenLimit": 24_000,
            "summaryContent": "The user wants the retry delay configurable; it is set at "
            "app/webhooks/retry.py:41.",
        },
    )
    e.add(
        27,
        "assistant.message",
        {
            "messageId": "m-3",
            "model": "claude-sonnet-4.6",
            "content": "Added WEBHOOK_RETRY_DELAY (default 30 s).",
            "outputTokens": 60,
            "toolRequests": [],
        },
    )
    e.add(27.5, "assistant.turn_end", {"turnId": "0"})
    e.add(
        30,
        "session.shutdown",
        {
            "shutdownType": "routine",
            "totalApiDurationMs": 21_000,
            "sessionStartTime": 0,
            "codeChanges": {"linesAdded": 3, "linesRemoved": 1, "filesModified": []},
            "modelMetrics": {
                "claude-sonnet-4.6": {
                    "requests": {"count": 4, "cost": 1},
                    "usage": {
                        "inputTokens": 47_500,
                        "outputTokens": 275,
                        "cacheReadTokens": 25_000,
                        "cacheWriteTokens": 0,
                    },
                }
            },
            "currentModel": "claude-sonnet-4.6",
            "currentTokens": 13_200,
            "systemTokens": 1_100,
            "conversationTokens": 300,
            "toolDefinitionsTokens": 11_800,
        },
    )
    return {f"copilot-cli/session-state/{COPILOT_ID}/events.jsonl": _dump(e.records)}
