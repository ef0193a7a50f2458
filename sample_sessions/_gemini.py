"""Render a script as a Gemini CLI chat log (both forms) or a Qwen Code chat log.

**Gemini CLI** (``~/.gemini/tmp/<project hash>/chats/session-*.jsonl``): a metadata line, one
line per message (a ``gemini`` message is written when the model answers and again, same
``id``, once its tool calls have results: the last copy wins), ``{"$set": {"lastUpdated"}}``
after each message, a ``{"$set": {"messages": [...]}}`` checkpoint for a ``/compress`` (its
first message is the ``<state_snapshot>``, then the model's acknowledgement and the newest 30 %
of the history, cut at a user message) and a ``{"$rewindTo": id}`` when the user goes back.
The older single-JSON form is the whole conversation as one pretty-printed object.

**Qwen Code** (``~/.qwen/projects/<cwd>/chats/<id>.jsonl``): a ``uuid`` / ``parentUuid`` chain
of ``user``, ``assistant``, ``tool_result`` and ``system`` lines; before each assistant line a
``ui_telemetry`` record with the call's ``qwen-code.api_response`` token counts; a
``chat_compression`` record for a ``/compress`` (summary and acknowledgement, no tail kept).
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import _project as P
from _script import Call, Compact, Event, Pause, Prompt, Tool, est

CHARS_PER_TOKEN = 4.0
PRESERVE = 0.3
"""Gemini CLI keeps the newest 30 % of the history at a compression."""


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _tool_call(tool: Tool) -> tuple[str, dict[str, Any]]:
    """Gemini CLI's tool name and arguments for a script tool."""
    a = tool.args
    if tool.kind == "read":
        return "read_file", {"file_path": f"{P.ROOT}/{a['path']}"}
    if tool.kind == "edit":
        return "replace", {
            "file_path": f"{P.ROOT}/{a['path']}",
            "old_string": a["old"],
            "new_string": a["new"],
        }
    if tool.kind == "write":
        return "write_file", {"file_path": f"{P.ROOT}/{a['path']}", "content": a["content"]}
    if tool.kind == "grep":
        return "search_file_content", {"pattern": a["pattern"]}
    if tool.kind == "glob":
        return "glob", {"pattern": a["pattern"]}
    return "run_shell_command", {"command": a["command"], "description": a.get("description", "")}


def _snapshot(goal: str, steps: list[str]) -> str:
    lines = "\n".join(f"    {n}. [DONE] {s}" for n, s in enumerate(steps, start=1))
    return (
        "<state_snapshot>\n"
        f"  <overall_goal>\n    {goal}\n  </overall_goal>\n"
        "  <key_knowledge>\n    - The dashboard lives in web/, tests run with `npx vitest run`.\n"
        "  </key_knowledge>\n"
        "  <file_system_state>\n    - READ: web/src/pages/Orders.tsx\n  </file_system_state>\n"
        "  <recent_actions>\n    - Looked up how the status badge is drawn.\n"
        "  </recent_actions>\n"
        f"  <current_plan>\n{lines}\n  </current_plan>\n"
        "</state_snapshot>"
    )


class GeminiWriter:
    """A Gemini CLI chat, written line by line (JSON Lines) and kept as a whole (single JSON)."""

    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        session_id: str,
        model: str = "gemini-2.5-pro",
        base_tokens: int = 9_200,
    ) -> None:
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.project_hash = rng.randbytes(32).hex()
        self.model = model
        self.base = base_tokens
        self.lines: list[str] = []
        self.messages: list[dict[str, Any]] = []  # the conversation as it stands
        self.sizes: dict[str, int] = {}  # tokens each message adds to the prompt
        self.prompts: list[int] = []  # tokens.input of every call, in order
        self.compactions: list[dict[str, Any]] = []
        self.rewinds: list[str] = []
        self.cached = 0
        self.started = clock.iso()

    # -- records -------------------------------------------------------------------------------

    def start(self) -> None:
        self.lines.append(
            dumps(
                {
                    "sessionId": self.session_id,
                    "projectHash": self.project_hash,
                    "startTime": self.started,
                    "lastUpdated": self.started,
                    "kind": "main",
                    "directories": [P.ROOT],
                }
            )
        )

    def _push(self, message: dict[str, Any], size: int) -> None:
        for n, old in enumerate(self.messages):
            if old["id"] == message["id"]:
                self.messages[n] = message
                break
        else:
            self.messages.append(message)
        self.sizes[message["id"]] = size
        self.lines.append(dumps(message))
        self.lines.append(dumps({"$set": {"lastUpdated": self.clock.iso()}}))

    def prompt_tokens(self) -> int:
        return self.base + sum(self.sizes[m["id"]] for m in self.messages)

    def render(self, events: list[Event], *, goal: str = "") -> None:
        for ev in events:
            if isinstance(ev, Prompt):
                self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
                self.user(ev.text)
            elif isinstance(ev, Call):
                self.call(ev)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
                self.cached = 0
            elif isinstance(ev, Compact):
                self.compress(goal)

    def user(self, text: str) -> str:
        message_id = new_uuid(self.rng)
        self._push(
            {
                "id": message_id,
                "timestamp": self.clock.iso(),
                "type": "user",
                "content": [{"text": text}],
            },
            est(text, CHARS_PER_TOKEN) + 4,
        )
        return message_id

    def call(self, ev: Call) -> None:
        self.clock.tick(ev.seconds * 0.5, ev.seconds)
        prompt = self.prompt_tokens()
        self.prompts.append(prompt)
        thoughts = est(ev.thinking, CHARS_PER_TOKEN) if ev.thinking else 0
        calls = []
        for n, tool in enumerate(ev.tools):
            name, args = _tool_call(tool)
            calls.append((f"{name}_{self.clock.ms}_{n}", name, args, tool))
        output = max(6, est(ev.text, CHARS_PER_TOKEN) + sum(est(dumps(c[2]), 4) + 8 for c in calls))
        message: dict[str, Any] = {
            "id": new_uuid(self.rng),
            "timestamp": self.clock.iso(),
            "type": "gemini",
            "content": ev.text,
            "thoughts": (
                [{"subject": "Planning", "description": ev.thinking, "timestamp": self.clock.iso()}]
                if ev.thinking
                else []
            ),
            "tokens": {
                "input": prompt,
                "output": output,
                "cached": self.cached,
                "thoughts": thoughts,
                "tool": 0,
                "total": prompt + output + thoughts,
            },
            "model": self.model,
        }
        self.cached = prompt - self.rng.randint(200, 900)
        if calls:
            message["toolCalls"] = [
                {
                    "id": cid,
                    "name": name,
                    "args": args,
                    "status": "executing",
                    "timestamp": self.clock.iso(),
                }
                for cid, name, args, _ in calls
            ]
        self._push(message, output)
        if not calls:
            return
        done: list[dict[str, Any]] = []
        results = 0
        for cid, name, args, tool in calls:
            self.clock.tick(tool.seconds, tool.seconds + 0.05)
            key = "error" if tool.is_error else "output"
            done.append(
                {
                    "id": cid,
                    "name": name,
                    "args": args,
                    "result": [
                        {
                            "functionResponse": {
                                "id": cid,
                                "name": name,
                                "response": {key: tool.output},
                            }
                        }
                    ],
                    "status": "error" if tool.is_error else "success",
                    "timestamp": self.clock.iso(),
                    "resultDisplay": "",
                }
            )
            results += est(tool.output, CHARS_PER_TOKEN) + 10
        self._push({**message, "toolCalls": done}, output + results)

    def compress(self, goal: str) -> None:
        """A ``/compress``: the state snapshot, the acknowledgement and the newest 30 %."""
        before = self.prompt_tokens()
        sizes = [self.sizes[m["id"]] for m in self.messages]
        target = sum(sizes) * (1 - PRESERVE)
        cut, running = len(self.messages), 0
        for n, message in enumerate(self.messages):
            if message["type"] == "user" and running >= target:
                cut = n
                break
            running += sizes[n]
        kept = self.messages[cut:]
        self.clock.tick(8, 14)
        summary = _snapshot(goal, ["Find how cancelled orders are shown."])
        snapshot: dict[str, Any] = {
            "id": new_uuid(self.rng),
            "timestamp": self.clock.iso(),
            "type": "user",
            "content": [{"text": summary}],
        }
        ack: dict[str, Any] = {
            "id": new_uuid(self.rng),
            "timestamp": self.clock.iso(),
            "type": "gemini",
            "content": [{"text": "Got it. Thanks for the additional context!"}],
        }
        self.messages = [snapshot, ack, *kept]
        self.sizes[snapshot["id"]] = est(summary, CHARS_PER_TOKEN) + 4
        self.sizes[ack["id"]] = 12
        self.cached = 0
        self.lines.append(
            dumps({"$set": {"messages": self.messages, "lastUpdated": self.clock.iso()}})
        )
        self.compactions.append(
            {"before": before, "kept": [m["id"] for m in kept], "line": len(self.lines)}
        )

    def rewind(self, message_id: str) -> None:
        """The user went back to before ``message_id``."""
        index = next(n for n, m in enumerate(self.messages) if m["id"] == message_id)
        self.messages = self.messages[:index]
        self.lines.append(dumps({"$rewindTo": message_id}))
        self.rewinds.append(message_id)

    def set_summary(self, text: str) -> None:
        self.lines.append(dumps({"$set": {"summary": text}}))

    def single_json(self) -> bytes:
        """The older single-JSON form of the conversation as it stands."""
        record = {
            "sessionId": self.session_id,
            "projectHash": self.project_hash,
            "startTime": self.started,
            "lastUpdated": self.clock.iso(),
            "messages": self.messages,
            "kind": "main",
        }
        return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode()


class QwenWriter:
    """A Qwen Code chat log: a ``parentUuid`` chain with telemetry before each assistant line."""

    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        session_id: str,
        model: str = "qwen3-coder-plus",
        window: int = 1_000_000,
        base_tokens: int = 11_400,
        version: str = "0.21.6",
    ) -> None:
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.model = model
        self.window = window
        self.base = base_tokens
        self.version = version
        self.lines: list[str] = []
        self.parent: str | None = None
        self.context = 0
        self.prompts: list[int] = []
        self.subagent_calls = 0
        self.compactions: list[dict[str, Any]] = []
        self.turn = 0

    def _record(self, type_: str, body: dict[str, Any], provenance: str) -> str:
        record_id = new_uuid(self.rng)
        self.lines.append(
            dumps(
                {
                    "uuid": record_id,
                    "parentUuid": self.parent,
                    "sessionId": self.session_id,
                    "timestamp": self.clock.iso(),
                    "type": type_,
                    "provenance": provenance,
                    "cwd": P.ROOT,
                    "version": self.version,
                    **body,
                }
            )
        )
        self.parent = record_id
        return record_id

    def _telemetry(self, event: dict[str, Any]) -> None:
        event = {"event.name": event.pop("name"), "event.timestamp": self.clock.iso(), **event}
        self._record(
            "system", {"subtype": "ui_telemetry", "systemPayload": {"uiEvent": event}}, "system"
        )

    def render(self, events: list[Event], *, summary: str = "") -> None:
        for ev in events:
            if isinstance(ev, Prompt):
                self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
                self.user(ev.text)
            elif isinstance(ev, Call):
                self.call(ev)
            elif isinstance(ev, Compact):
                self.compress(summary)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)

    def user(self, text: str) -> None:
        self.turn += 1
        self._record("user", {"message": {"role": "user", "parts": [{"text": text}]}}, "real_user")
        self.context += est(text, CHARS_PER_TOKEN) + 4

    def _prompt_id(self) -> str:
        return f"{self.session_id}########{self.turn}"

    def call(self, ev: Call) -> None:
        self.clock.tick(ev.seconds * 0.5, ev.seconds)
        prompt = self.base + self.context
        self.prompts.append(prompt)
        thoughts = est(ev.thinking, CHARS_PER_TOKEN) if ev.thinking else 0
        parts: list[dict[str, Any]] = []
        if ev.thinking:
            parts.append({"text": ev.thinking, "thought": True})
        if ev.text:
            parts.append({"text": ev.text})
        calls = []
        for n, tool in enumerate(ev.tools):
            name, args = _tool_call(tool)
            call_id = f"call_{self.rng.getrandbits(40):010x}{n}"
            parts.append({"functionCall": {"id": call_id, "name": name, "args": args}})
            calls.append((call_id, name, tool))
        output = max(6, sum(est(dumps(p), CHARS_PER_TOKEN) for p in parts))
        response_id = f"chatcmpl-{self.rng.randint(100, 999)}"
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + output,
            "cachedContentTokenCount": 0,
        }
        self._telemetry(
            {
                "name": "qwen-code.api_response",
                "response_id": response_id,
                "model": self.model,
                "status_code": 200,
                "duration_ms": int(ev.seconds * 1000),
                "input_token_count": prompt,
                "output_token_count": output,
                "cached_content_token_count": 0,
                "thoughts_token_count": thoughts,
                "total_token_count": prompt + output,
                "prompt_id": self._prompt_id(),
                "auth_type": "openai",
            }
        )
        self._record(
            "assistant",
            {
                "model": self.model,
                "message": {"role": "model", "parts": parts},
                "usageMetadata": usage,
                "contextWindowSize": self.window,
            },
            "assistant_output",
        )
        self.context += output - thoughts
        for call_id, name, tool in calls:
            self.clock.tick(tool.seconds, tool.seconds + 0.05)
            key = "error" if tool.is_error else "output"
            self._record(
                "tool_result",
                {
                    "message": {
                        "role": "user",
                        "parts": [
                            {
                                "functionResponse": {
                                    "id": call_id,
                                    "name": name,
                                    "response": {key: tool.output},
                                }
                            }
                        ],
                    },
                    "toolCallResult": {
                        "callId": call_id,
                        "status": "error" if tool.is_error else "success",
                        "resultDisplay": tool.output[:200],
                    },
                },
                "tool_result",
            )
            self.context += est(tool.output, CHARS_PER_TOKEN) + 10

    def background_call(self, name: str, prompt: int, output: int) -> None:
        """A call of a background sub-agent: telemetry only, in a context of its own."""
        self.subagent_calls += 1
        self._telemetry(
            {
                "name": "qwen-code.api_response",
                "response_id": f"chatcmpl-{self.rng.randint(100, 999)}",
                "model": self.model,
                "status_code": 200,
                "input_token_count": prompt,
                "output_token_count": output,
                "cached_content_token_count": 0,
                "thoughts_token_count": 0,
                "total_token_count": prompt + output,
                "prompt_id": f"{self.session_id}#{name}-{self.rng.getrandbits(32):08x}#0",
                "subagent_name": name,
            }
        )

    def compress(self, summary: str) -> None:
        """A ``/compress``: the whole history becomes the summary and an acknowledgement."""
        self.clock.tick(6, 12)
        before = self.base + self.context
        after = self.base + est(summary, CHARS_PER_TOKEN) + 16
        self._record(
            "system",
            {
                "subtype": "chat_compression",
                "systemPayload": {
                    "info": {
                        "originalTokenCount": before,
                        "newTokenCount": after,
                        "compressionStatus": 1,
                        "triggerReason": "manual",
                    },
                    "compressedHistory": [
                        {"role": "user", "parts": [{"text": summary}]},
                        {
                            "role": "model",
                            "parts": [{"text": "Got it. Thanks for the additional context!"}],
                        },
                    ],
                },
            },
            "system",
        )
        self.compactions.append({"before": before, "after": after, "line": len(self.lines)})
        self.context = after - self.base
