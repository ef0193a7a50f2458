"""Render a :class:`~_script.Script` as a Claude Code transcript (``~/.claude/projects/*/<id>.jsonl``).

Shapes follow what Claude Code 2.1.x writes: one line per content block of an assistant
response, every line of a response repeating the response's ``usage`` (early lines carry the
small ``output_tokens`` of the stream start, the last one the final count), ``requestId`` and
``message.id`` shared by the lines of one response, a ``uuid``/``parentUuid`` chain,
``progress`` lines for hooks and long shell commands, ``file-history-snapshot`` lines, tool
results as user lines with a top-level ``toolUseResult``, ``system`` lines
(``turn_duration``, ``compact_boundary``), ``isCompactSummary`` summaries and a synthetic
``isApiErrorMessage`` line when the provider refuses a prompt.

Usage is computed, not invented: the prompt of every call is the hidden system prompt plus the
estimated tokens of everything in context since the last compaction, split into
``cache_read`` (the previous call's prompt, while the 5-minute cache is warm), a few uncached
``input_tokens`` and ``cache_creation`` for the rest.
"""

from __future__ import annotations

import base64
import difflib
import json
import random
import uuid
from typing import Any

import _project as P
from _script import ApiError, Call, Compact, Event, Local, Pause, Prompt, Tool, est

CHARS_PER_TOKEN = 3.5
"""Claude's tokenizer packs code and logs a little denser than 4 characters a token."""

AUTO_COMPACT_AT = 167_000
"""Context at which Claude Code (200k window) compacts on its own from 2.1.21: 200,000 minus
20,000 reserved for the summary and a 13,000 buffer."""
AUTO_COMPACT_AT_BEFORE_2_1_20 = 155_000
"""The same before 2.1.21, when 32,000 were reserved for the summary."""

DEFAULT_SUMMARY = {
    "analysis": "I went through the conversation in order and kept what is needed to continue.",
    "intent": "Answer the user's requests about the parcelhub service, one at a time.",
    "concepts": "   - the parcelhub API (orders, store, webhooks, config)",
    "errors": "   - none so far",
    "solving": "Each request was answered with targeted reads, greps and single test runs.",
    "pending": "   - none beyond the request in progress",
    "current": "Working through the user's list of small checks.",
    "next": "Continue with the user's next request.",
}

CAVEAT = (
    "<local-command-caveat>Caveat: the lines below come from a local command the user ran; "
    "they are not a request to you.</local-command-caveat>"
)

READ_MAX_LINES = 2000
"""Claude Code's Read returns at most this many lines when no limit is given."""

SUMMARY_PREFIX = (
    "This conversation continues an earlier one that ran out of context. What happened so far "
    "is summarised below.\n\n"
)


def dumps(obj: Any) -> str:
    """JSON the way Node writes it: compact, non-ASCII kept as is."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class ClaudeWriter:
    """Turns events into transcript lines, keeping the parent chain and the usage books."""

    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        session_id: str,
        branch: str,
        slug: str | None,
        model: str = "claude-sonnet-4-5-20250929",
        version: str = "2.1.39",
        base_tokens: int = 17_312,
        cached_base: int = 14_208,
        auto_compact: bool = True,
        compact_at: int = AUTO_COMPACT_AT,
        hooks: bool = True,
        summaries: list[dict[str, str]] | None = None,
    ) -> None:
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.branch = branch
        self.slug = slug
        self.model = model
        self.version = version
        self.base_tokens = base_tokens
        self.cached_base = cached_base
        self.auto_compact = auto_compact
        self.compact_at = compact_at
        self.hooks = hooks
        self.summaries = summaries or [DEFAULT_SUMMARY]
        self.lines: list[str] = []
        self.head: str | None = None
        self.items: list[int] = []  # tokens of everything in context since the last compaction
        self.last_prompt: int | None = None
        self.cache_warm = False
        self.turn_started_ms = clock.ms
        self.backups: dict[str, Any] = {}
        self.compactions: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []  # per call: prompt tokens, line index
        self.big_outputs: list[tuple[int, int]] = []  # (line index, chars) of tool results
        self.files_read: list[str] = []
        self.user_texts: list[str] = []
        self.progress_n = 0
        self.last_call_output = 0
        self.read_cache: dict[str, str] = {}

    # -- low level -----------------------------------------------------------------------

    def emit(self, obj: dict[str, Any]) -> None:
        self.lines.append(dumps(obj))

    def envelope(self, parent: str | None) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": P.ROOT,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
            **({"slug": self.slug} if self.slug else {}),
        }

    def msg_id(self) -> str:
        return "msg_01" + "".join(self.rng.choice(B62) for _ in range(22))

    def req_id(self) -> str:
        return "req_011C" + "".join(self.rng.choice(B62) for _ in range(18))

    def tool_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choice(B62) for _ in range(22))

    def signature(self, n: int) -> str:
        return base64.b64encode(bytes([0x12, 0x8F]) + self.rng.randbytes(n)).decode()

    @property
    def context(self) -> int:
        return self.base_tokens + sum(self.items)

    # -- events --------------------------------------------------------------------------

    def render(self, events: list[Event]) -> list[str]:
        for ev in events:
            if isinstance(ev, Prompt):
                self.user_prompt(ev)
            elif isinstance(ev, Call):
                self.model_call(ev)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
                self.cache_warm = False
            elif isinstance(ev, ApiError):
                self.api_error(ev)
            elif isinstance(ev, Compact):
                self.manual_compact(ev)
            elif isinstance(ev, Local):
                self.meta_lines(CAVEAT, ev.command, ev.args, ev.stdout)
        if events and isinstance(events[-1], Call):
            self.end_turn()  # the session ends after a finished turn
        return self.lines

    def session_start(self, hooks: list[str]) -> None:
        """SessionStart hook progress lines that open a fresh session."""
        tid = new_uuid(self.rng)
        for command in hooks:
            uid = new_uuid(self.rng)
            obj = self.envelope(self.head)
            obj.pop("slug", None)
            obj.update(
                {
                    "type": "progress",
                    "data": {
                        "type": "hook_progress",
                        "hookEvent": "SessionStart",
                        "hookName": "SessionStart:startup",
                        "command": command,
                    },
                    "parentToolUseID": tid,
                    "toolUseID": tid,
                    "timestamp": self.clock.iso(self.clock.tick(0.001, 0.05)),
                    "uuid": uid,
                }
            )
            self.emit(obj)
            self.head = uid

    def end_turn(self) -> None:
        uid = new_uuid(self.rng)
        obj = self.envelope(self.head)
        obj.update(
            {
                "type": "system",
                "subtype": "turn_duration",
                "durationMs": max(1, self.clock.ms - self.turn_started_ms),
                "timestamp": self.clock.iso(self.clock.tick(0.01, 0.06)),
                "uuid": uid,
                "isMeta": False,
            }
        )
        self.emit(obj)
        self.head = uid

    def snapshot(self, message_id: str, update: bool) -> None:
        self.emit(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "snapshot": {
                    "messageId": message_id,
                    "trackedFileBackups": dict(self.backups),
                    "timestamp": self.clock.iso(),
                },
                "isSnapshotUpdate": update,
            }
        )

    def user_line(
        self, content: Any, *, extra: dict[str, Any] | None = None, tokens: int | None = None
    ) -> str:
        uid = new_uuid(self.rng)
        obj = self.envelope(self.head)
        obj.update(
            {
                "type": "user",
                "message": {"role": "user", "content": content},
                "uuid": uid,
                "timestamp": self.clock.iso(),
            }
        )
        if extra:
            obj.update(extra)
        self.emit(obj)
        self.head = uid
        if tokens is not None:
            self.items.append(tokens)
        return uid

    def user_prompt(self, ev: Prompt) -> None:
        if self.head is not None and self.calls:
            self.end_turn()
        self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
        if self.clock.ms - (self.calls[-1]["ms"] if self.calls else 0) > 300_000:
            self.cache_warm = False
        self.turn_started_ms = self.clock.ms
        uid_preview = new_uuid(self.rng)
        self.snapshot(uid_preview, False)
        obj = self.envelope(self.head)
        obj.update(
            {
                "type": "user",
                "message": {"role": "user", "content": ev.text},
                "uuid": uid_preview,
                "timestamp": self.clock.iso(self.clock.tick(0.02, 0.1)),
                "thinkingMetadata": {"maxThinkingTokens": 31999},
                "todos": [],
                "permissionMode": "acceptEdits",
            }
        )
        self.emit(obj)
        self.head = uid_preview
        self.items.append(est(ev.text, CHARS_PER_TOKEN) + 4)
        self.user_texts.append(ev.text)

    def meta_lines(self, caveat: str, command: str, args: str, stdout: str) -> None:
        """A local slash command: the isMeta caveat, the command line, and its output."""
        self.clock.tick(5, 30)
        self.user_line(caveat, extra={"isMeta": True}, tokens=est(caveat, CHARS_PER_TOKEN))
        self.clock.tick(0.001, 0.01)
        name = (
            f"<command-name>{command}</command-name>\n            <command-message>"
            f"{command.lstrip('/')}</command-message>\n            <command-args>{args}</command-args>"
        )
        self.user_line(name, tokens=est(name, CHARS_PER_TOKEN))
        out = f"<local-command-stdout>{stdout}</local-command-stdout>"
        self.user_line(out, tokens=est(out, CHARS_PER_TOKEN))

    def usage(self, prompt: int, output: int) -> dict[str, Any]:
        if self.cache_warm and self.last_prompt is not None and self.last_prompt <= prompt:
            cache_read = self.last_prompt
        else:
            cache_read = min(self.cached_base, prompt - 10)
        uncached = self.rng.randint(1, 9)
        creation = max(0, prompt - cache_read - uncached)
        usage: dict[str, Any] = {
            "input_tokens": uncached,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": cache_read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": creation,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": output,
        }
        if not self.version.startswith("2.0."):
            usage["service_tier"] = "standard"
            usage["inference_geo"] = "not_available"
        return usage

    def maybe_auto_compact(self) -> None:
        if not self.auto_compact or self.context < self.compact_at:
            return
        self.compaction("auto", self.context, "")

    def model_call(self, ev: Call) -> None:
        self.maybe_auto_compact()
        tool_ids = [self.tool_id() for _ in ev.tools]
        blocks: list[dict[str, Any]] = []
        if ev.thinking:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": ev.thinking,
                    "signature": self.signature(self.rng.randint(180, 600)),
                }
            )
        if ev.text:
            blocks.append({"type": "text", "text": ev.text})
        for tid, tool in zip(tool_ids, ev.tools, strict=True):
            name, inp = self.tool_input(tool)
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        if not blocks:
            blocks.append({"type": "text", "text": "Done."})
        output = sum(est(dumps(b), CHARS_PER_TOKEN) for b in blocks) + 6
        prompt = self.context
        usage = self.usage(prompt, output)
        mid, rid = self.msg_id(), self.req_id()
        early = self.rng.randint(1, 30)
        start_ms = self.clock.tick(ev.seconds * 0.3, ev.seconds * 0.5)
        self.calls.append(
            {
                "prompt": prompt,
                "line": len(self.lines),
                "ms": start_ms,
                "output": output,
                "message_id": mid,
            }
        )
        tool_line_uuid: dict[str, str] = {}
        for k, block in enumerate(blocks):
            last = k == len(blocks) - 1
            u = dict(usage)
            u["cache_creation"] = dict(usage["cache_creation"])
            u["output_tokens"] = output if last else min(early, output)
            stop = None
            if last and self.rng.random() < 0.3:
                stop = "tool_use" if ev.tools else "end_turn"
            uid = new_uuid(self.rng)
            obj = self.envelope(self.head)
            obj.update(
                {
                    "message": {
                        "model": self.model,
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "content": [block],
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": u,
                    },
                    "requestId": rid,
                    "type": "assistant",
                    "uuid": uid,
                    "timestamp": self.clock.iso(self.clock.tick(0.2, ev.seconds * 0.3 + 0.3)),
                }
            )
            self.emit(obj)
            self.head = uid
            if block["type"] == "tool_use":
                tool_line_uuid[block["id"]] = uid
        self.items.append(output)
        self.last_prompt = prompt
        self.last_call_output = output
        self.cache_warm = True
        # tool results, in call order
        for tid, tool in zip(tool_ids, ev.tools, strict=True):
            self.tool_result(tid, tool, tool_line_uuid[tid])

    def hook(self, event: str, tool_name: str, command: str, tool_use_id: str, parent: str) -> None:
        uid = new_uuid(self.rng)
        obj = self.envelope(parent)
        obj.update(
            {
                "type": "progress",
                "data": {
                    "type": "hook_progress",
                    "hookEvent": event,
                    "hookName": f"{event}:{tool_name}",
                    "command": command,
                },
                "parentToolUseID": tool_use_id,
                "toolUseID": tool_use_id,
                "timestamp": self.clock.iso(self.clock.tick(0.001, 0.01)),
                "uuid": uid,
            }
        )
        self.emit(obj)

    def tool_input(self, tool: Tool) -> tuple[str, dict[str, Any]]:
        a = tool.args
        if tool.kind == "read":
            inp: dict[str, Any] = {"file_path": f"{P.ROOT}/{a['path']}"}
            if "offset" in a:
                inp["offset"] = a["offset"]
            if "limit" in a:
                inp["limit"] = a["limit"]
            return "Read", inp
        if tool.kind == "grep":
            return "Grep", {"pattern": a["pattern"], "output_mode": "content", "-n": True}
        if tool.kind == "glob":
            return "Glob", {"pattern": a["pattern"]}
        if tool.kind == "bash":
            inp = {"command": a["command"]}
            if a.get("description"):
                inp["description"] = a["description"]
            if tool.seconds > 60:
                inp["timeout"] = 600000
            return "Bash", inp
        if tool.kind == "edit":
            return "Edit", {
                "file_path": f"{P.ROOT}/{a['path']}",
                "old_string": a["old"],
                "new_string": a["new"],
            }
        if tool.kind == "write":
            return "Write", {"file_path": f"{P.ROOT}/{a['path']}", "content": a["content"]}
        if tool.kind == "mcp":
            rest = {k: v for k, v in a.items() if k != "name"}
            return a["name"], rest
        raise ValueError(tool.kind)

    def tool_result(self, tid: str, tool: Tool, source_uuid: str) -> None:
        a = tool.args
        name = self.tool_input(tool)[0]
        if self.hooks and tool.kind == "bash":
            self.hook(
                "PreToolUse", "Bash", "$HOME/.claude/hooks/guard-commands.sh", tid, source_uuid
            )
        self.clock.tick(tool.seconds, tool.seconds + 0.05)
        if tool.kind == "bash" and tool.seconds > 8:
            self.progress_n += 1
            tail = "\n".join(tool.output.split("\n")[:3])
            obj = self.envelope(self.head)
            obj.update(
                {
                    "type": "progress",
                    "data": {
                        "type": "bash_progress",
                        "output": tail,
                        "fullOutput": tail,
                        "elapsedTimeSeconds": int(tool.seconds * 0.6),
                        "totalLines": tool.output.count("\n") + 1,
                        "timeoutMs": 120000,
                    },
                    "toolUseID": f"bash-progress-{self.progress_n - 1}",
                    "parentToolUseID": tid,
                    "uuid": new_uuid(self.rng),
                    "timestamp": self.clock.iso(self.clock.ms - int(tool.seconds * 400)),
                }
            )
            self.emit(obj)
        content: Any
        result: Any
        is_error = tool.is_error
        if tool.kind == "read":
            text = tool.output
            if "limit" not in a and text.count("\n") > READ_MAX_LINES:
                text = "\n".join(text.split("\n")[:READ_MAX_LINES]) + "\n"
            start = a.get("offset", 1)
            content = P.numbered_claude(text, start)
            result = {
                "type": "text",
                "file": {
                    "filePath": f"{P.ROOT}/{a['path']}",
                    "content": text,
                    "numLines": text.count("\n"),
                    "startLine": start,
                    "totalLines": tool.meta.get("total_lines", text.count("\n")),
                },
            }
            if a["path"] in self.files_read:
                self.files_read.remove(a["path"])
            self.files_read.append(a["path"])
            self.read_cache[a["path"]] = text
        elif tool.kind == "grep":
            content = tool.output or "No matches found"
            files = sorted({line.split(":", 1)[0] for line in tool.output.split("\n") if line})
            result = {
                "mode": "content",
                "numFiles": len(files),
                "filenames": [],
                "content": tool.output,
                "numLines": tool.output.count("\n") + 1 if tool.output else 0,
            }
        elif tool.kind == "glob":
            files = [f"{P.ROOT}/{f}" for f in tool.output.split("\n") if f]
            content = "\n".join(files) or "No files found"
            result = {
                "filenames": files,
                "durationMs": self.rng.randint(20, 400),
                "numFiles": len(files),
                "truncated": False,
            }
        elif tool.kind == "bash":
            if tool.exit_code:
                content = f"Exit code {tool.exit_code}\n{tool.output}"
                result = f"Error: Exit code {tool.exit_code}\n{tool.output}"
            else:
                content = tool.output
                result = {
                    "stdout": tool.output,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                }
        elif tool.kind == "edit":
            path = f"{P.ROOT}/{a['path']}"
            content = f"Updated {path}: 1 replacement."
            result = {
                "filePath": path,
                "oldString": a["old"],
                "newString": a["new"],
                "originalFile": tool.before,
                "structuredPatch": patch(tool.before or "", tool.after or ""),
                "userModified": False,
                "replaceAll": False,
            }
            self.track_backup(a["path"])
        elif tool.kind == "write":
            path = f"{P.ROOT}/{a['path']}"
            content = f"Created {path}." if tool.before is None else f"Rewrote {path}."
            result = {
                "type": "create" if tool.before is None else "update",
                "filePath": path,
                "content": a["content"],
                "structuredPatch": patch(tool.before or "", tool.after or "")
                if tool.before
                else [],
                "originalFile": tool.before,
            }
            self.track_backup(a["path"])
        else:  # mcp
            content = [{"type": "text", "text": tool.output}]
            result = [{"type": "text", "text": tool.output}]
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if tool.kind == "bash" or is_error:
            block["is_error"] = is_error
        text_len = (
            len(content) if isinstance(content, str) else sum(len(c["text"]) for c in content)
        )
        self.big_outputs.append((len(self.lines), text_len))
        self.user_line(
            [block],
            extra={"toolUseResult": result, "sourceToolAssistantUUID": source_uuid},
            tokens=est("x" * text_len, CHARS_PER_TOKEN) + 8,
        )
        if self.hooks and tool.kind in ("edit", "write"):
            self.hook(
                "PostToolUse",
                name,
                'ruff format --quiet "$CLAUDE_FILE_PATHS"',
                tid,
                self.head or "",
            )
        if tool.kind in ("edit", "write"):
            self.snapshot(self.last_user_prompt_uuid(), True)

    def last_user_prompt_uuid(self) -> str:
        for line in reversed(self.lines):
            if '"type":"file-history-snapshot"' in line and '"isSnapshotUpdate":false' in line:
                message_id: str = json.loads(line)["messageId"]
                return message_id
        return self.session_id

    def track_backup(self, path: str) -> None:
        prev = self.backups.get(path)
        version = prev["version"] + 1 if prev else 1
        self.backups[path] = {
            "backupFileName": f"{P.hexid(self.rng, 16)}@v{version}",
            "version": version,
            "backupTime": self.clock.iso(),
        }

    # -- compaction and errors -----------------------------------------------------------

    def summary_text(self, instructions: str) -> str:
        """The compaction summary: Claude Code's section layout, filled from the story's
        summaries (one per compaction, in order) plus what the writer saw (files, user asks)."""
        k = min(len(self.compactions) - 1, len(self.summaries) - 1)
        s = self.summaries[k] if k >= 0 else DEFAULT_SUMMARY
        files = ", ".join(f"`{f}`" for f in self.files_read[-8:]) or "(none)"
        asks = "\n".join(f'   - "{t[:160]}"' for t in self.user_texts[-6:])
        focus = (
            f"\n(The user asked the summary to focus on: {instructions})\n" if instructions else ""
        )
        return (
            SUMMARY_PREFIX
            + f"Analysis:\n{s['analysis']}\n{focus}\n"
            + "Summary:\n"
            + f"1. Primary Request and Intent:\n   {s['intent']}\n\n"
            + f"2. Key Technical Concepts:\n{s['concepts']}\n\n"
            + f"3. Files and Code Sections:\n   {files}\n\n"
            + f"4. Errors and fixes:\n{s['errors']}\n\n"
            + f"5. Problem Solving:\n   {s['solving']}\n\n"
            + f"6. All user messages:\n{asks}\n\n"
            + f"7. Pending Tasks:\n{s['pending']}\n\n"
            + f"8. Current Work:\n   {s['current']}\n\n"
            + f"9. Optional Next Step:\n   {s['next']}\n\n"
            + f"The full transcript before this point is in {self.session_id}.jsonl."
        )

    def compaction(self, trigger: str, pre_tokens: int, instructions: str) -> None:
        self.clock.tick(20, 60)  # the summary request takes a while
        uid = new_uuid(self.rng)
        obj = self.envelope(None)
        obj["logicalParentUuid"] = self.head
        obj.update(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "timestamp": self.clock.iso(),
                "uuid": uid,
                "level": "info",
                "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
            }
        )
        self.emit(obj)
        self.head = uid
        self.compactions.append(
            {"trigger": trigger, "preTokens": pre_tokens, "line": len(self.lines)}
        )
        summary = self.summary_text(instructions)
        self.items = []
        self.user_line(
            summary,
            extra={"isVisibleInTranscriptOnly": True, "isCompactSummary": True},
            tokens=est(summary, CHARS_PER_TOKEN),
        )
        # Claude Code re-attaches the files it read most recently
        for path in self.files_read[-3:]:
            text = P.numbered_claude(self.read_cache[path])
            note = (
                f"<system-reminder>\nRe-attached after compaction: {path} as last read.\n"
                f"{text}\n</system-reminder>"
            )
            self.user_line(note, extra={"isMeta": True}, tokens=est(note, CHARS_PER_TOKEN))
        self.cache_warm = False
        self.last_prompt = None

    def manual_compact(self, ev: Compact) -> None:
        if self.calls:
            self.end_turn()
        self.clock.tick(10, 40)
        pre = self.context
        self.user_line(CAVEAT, extra={"isMeta": True})
        self.compaction("manual", pre, ev.instructions)
        self.user_line(
            "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n"
            f"            <command-args>{ev.instructions}</command-args>"
        )
        self.user_line(
            "<local-command-stdout>Compacted. The summary is in the transcript.</local-command-stdout>"
        )

    def api_error(self, ev: ApiError) -> None:
        """The synthetic line Claude Code writes when the API refuses a request. ``{tokens}``
        and ``{request_id}`` in the text are filled in with the prompt that was refused."""
        self.clock.tick(1, 3)
        text = ev.text.replace("{tokens}", str(self.context)).replace("{request_id}", self.req_id())
        uid = new_uuid(self.rng)
        obj = self.envelope(self.head)
        obj.update(
            {
                "type": "assistant",
                "uuid": uid,
                "timestamp": self.clock.iso(),
                "message": {
                    "id": new_uuid(self.rng),
                    "container": None,
                    "model": "<synthetic>",
                    "role": "assistant",
                    "stop_reason": "stop_sequence",
                    "stop_sequence": "",
                    "type": "message",
                    "usage": {
                        "input_tokens": 0,
                        "output_tokens": 0,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                        "service_tier": None,
                        "cache_creation": {
                            "ephemeral_1h_input_tokens": 0,
                            "ephemeral_5m_input_tokens": 0,
                        },
                    },
                    "content": [{"type": "text", "text": text}],
                    "context_management": None,
                },
                "error": "invalid_request",
                "isApiErrorMessage": True,
            }
        )
        self.emit(obj)
        self.head = uid


def patch(before: str, after: str) -> list[dict[str, Any]]:
    """Claude's ``structuredPatch``: unified-diff hunks with 3 lines of context."""
    a, b = before.split("\n"), after.split("\n")
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines += [" " + s for s in a[x1:x2]]
            else:
                lines += ["-" + s for s in a[x1:x2]]
                lines += ["+" + s for s in b[y1:y2]]
        hunks.append(
            {
                "oldStart": i1 + 1,
                "oldLines": i2 - i1,
                "newStart": j1 + 1,
                "newLines": j2 - j1,
                "lines": lines,
            }
        )
    return hunks
