"""Render a script as an opencode session: ``opencode export`` JSON and the legacy storage folder.

opencode keeps one assistant message per model call (step), each with ``step-start``, text /
reasoning / ``tool`` parts and a ``step-finish`` carrying the step's ``tokens {input, output,
reasoning, cache: {read, write}}``. Tool parts hold ``state {status, input, output, title,
metadata, time}``.

The writer applies opencode's (early 2026) context management as it goes:

* **truncation** of tool outputs over 2000 lines / 50 KB (head for read, tail for bash), with
  the ``...N lines truncated...`` marker, a spill path, and ``metadata.truncated``;
* **pruning** at the end of every prompt loop: walking back past the last two user turns, tool
  outputs beyond the newest 40,000 estimated tokens get ``state.time.compacted`` when that frees
  more than 20,000 tokens (the model then sees a placeholder instead);
* **compaction** when a step's ``tokens`` total reaches ``usable = context - max output``: a user
  message with a ``compaction`` part, a ``summary: true`` assistant message, and a synthetic user
  message asking the agent to continue.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import _project as P
from _script import ApiError, Call, Compact, Event, Local, Pause, Prompt, Tool, est

CHARS_PER_TOKEN = 4.0
PROVIDER = "deepseek"
MODEL = "deepseek-chat"
CONTEXT = 128_000
MAX_OUTPUT = 8_192
USABLE = CONTEXT - min(MAX_OUTPUT, 32_000)  # 119,808
PRUNE_MINIMUM = 20_000
PRUNE_PROTECT = 40_000
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
VERSION = "1.1.20"
CLEARED = "[Old tool result content cleared]"
PRICE = {"miss": 0.28, "hit": 0.028, "output": 0.42}  # $ per million tokens
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def dumps_pretty(obj: Any) -> str:
    """``JSON.stringify(obj, null, 2)``."""
    return json.dumps(obj, ensure_ascii=False, indent=2)


class Ids:
    """opencode identifiers: prefix, 12 hex of (ms * 4096 + counter), 14 random base62."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.last_ms = 0
        self.counter = 0

    def _make(self, prefix: str, ms: int, descending: bool) -> str:
        if ms != self.last_ms:
            self.last_ms = ms
            self.counter = 0
        self.counter += 1
        now = ms * 0x1000 + self.counter
        if descending:
            now = ~now
        hex12 = f"{now & 0xFFFFFFFFFFFF:012x}"
        return f"{prefix}_{hex12}" + "".join(self.rng.choice(B62) for _ in range(14))

    def ascending(self, prefix: str, ms: int) -> str:
        return self._make(prefix, ms, False)

    def descending(self, prefix: str, ms: int) -> str:
        return self._make(prefix, ms, True)


def truncate(text: str, direction: str) -> tuple[str, bool, int, str]:
    """opencode's Truncate.output: (preview, truncated, removed, unit)."""
    lines = text.split("\n")
    total = len(text.encode())
    if len(lines) <= MAX_LINES and total <= MAX_BYTES:
        return text, False, 0, ""
    kept: list[str] = []
    size = 0
    hit_bytes = False
    seq = lines if direction == "head" else list(reversed(lines))
    for line in seq:
        if len(kept) >= MAX_LINES:
            break
        cost = len(line.encode()) + (1 if kept else 0)
        if size + cost > MAX_BYTES:
            hit_bytes = True
            break
        kept.append(line)
        size += cost
    if direction != "head":
        kept.reverse()
    if hit_bytes:
        return "\n".join(kept), True, total - size, "bytes"
    return "\n".join(kept), True, len(lines) - len(kept), "lines"


class OpencodeWriter:
    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        title: str,
        summary: str,
        base_tokens: int = 9_850,
        prune: bool = True,
    ) -> None:
        self.rng = rng
        self.clock = clock
        self.ids = Ids(rng)
        self.title = title
        self.summary_text = summary
        self.base = base_tokens
        self.prune_enabled = prune
        self.session_id = self.ids.descending("ses", clock.ms)
        self.project_id = P.hexid(rng, 40)
        self.created = clock.ms
        self.messages: list[dict[str, Any]] = []  # {"info":…, "parts":[…]}
        self.context: list[
            dict[str, Any]
        ] = []  # {"tokens", "part" (tool part or None), "user": bool}
        self.last_user: dict[str, Any] | None = None
        self.last_prompt = 0
        self.compactions: list[dict[str, Any]] = []
        self.pruned_parts: list[str] = []
        self.prune_runs: list[int] = []
        self.pending_compaction = False
        self.additions = 0
        self.deletions = 0
        self.files_changed: set[str] = set()

    # -- building blocks -------------------------------------------------------------------

    def part(self, msg: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        p = {
            "id": self.ids.ascending("prt", self.clock.ms),
            "sessionID": self.session_id,
            "messageID": msg["info"]["id"],
            **body,
        }
        msg["parts"].append(p)
        return p

    def user_message(
        self, text: str | None, *, synthetic: bool = False, compaction: bool = False
    ) -> dict[str, Any]:
        info = {
            "id": self.ids.ascending("msg", self.clock.ms),
            "sessionID": self.session_id,
            "role": "user",
            "time": {"created": self.clock.ms},
            "agent": "build",
            "model": {"providerID": PROVIDER, "modelID": MODEL},
        }
        msg: dict[str, Any] = {"info": info, "parts": []}
        self.messages.append(msg)
        if compaction:
            self.part(msg, {"type": "compaction", "auto": True})
        if text is not None:
            body: dict[str, Any] = {"type": "text", "text": text}
            if synthetic:
                body["synthetic"] = True
            self.part(msg, body)
            self.context.append(
                {"tokens": est(text, CHARS_PER_TOKEN) + 4, "part": None, "user": True}
            )
        if not synthetic and not compaction:
            self.last_user = msg
        return msg

    def assistant_message(self, parent: dict[str, Any], *, summary: bool = False) -> dict[str, Any]:
        info: dict[str, Any] = {
            "id": self.ids.ascending("msg", self.clock.ms),
            "sessionID": self.session_id,
            "role": "assistant",
            "time": {"created": self.clock.ms},
            "parentID": parent["info"]["id"],
            "modelID": MODEL,
            "providerID": PROVIDER,
            "mode": "compaction" if summary else "build",
            "agent": "compaction" if summary else "build",
            "path": {"cwd": P.ROOT, "root": P.ROOT},
            "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        }
        if summary:
            info["summary"] = True
        msg: dict[str, Any] = {"info": info, "parts": []}
        self.messages.append(msg)
        return msg

    def prompt_tokens(self) -> int:
        tokens: int = self.base + sum(c["tokens"] for c in self.context)
        return tokens

    # -- events ----------------------------------------------------------------------------

    def render(self, events: list[Event]) -> None:
        in_loop = False
        for ev in events:
            if isinstance(ev, Prompt):
                if in_loop:
                    self.end_loop()
                self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
                self.user_message(ev.text)
                in_loop = True
            elif isinstance(ev, Call):
                if self.pending_compaction:
                    self.compact()
                self.step(ev)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
                self.last_prompt = 0
            elif isinstance(ev, (ApiError, Compact, Local)):
                pass
        if in_loop:
            self.end_loop()

    def end_loop(self) -> None:
        if self.prune_enabled:
            self.prune()

    def step(self, ev: Call) -> None:
        assert self.last_user is not None
        parent = self.last_user
        self.clock.tick(0.05, 0.2)
        msg = self.assistant_message(parent)
        snapshot = P.hexid(self.rng, 40)
        self.part(msg, {"type": "step-start", "snapshot": snapshot})
        out_tokens = 0
        start = self.clock.ms
        if ev.thinking:
            self.clock.tick(ev.seconds * 0.3, ev.seconds * 0.5)
            self.part(
                msg,
                {
                    "type": "reasoning",
                    "text": ev.thinking,
                    "time": {"start": start, "end": self.clock.ms},
                },
            )
            out_tokens += est(ev.thinking, CHARS_PER_TOKEN)
        if ev.text:
            t0 = self.clock.ms
            self.clock.tick(ev.seconds * 0.2, ev.seconds * 0.4)
            self.part(
                msg, {"type": "text", "text": ev.text, "time": {"start": t0, "end": self.clock.ms}}
            )
            out_tokens += est(ev.text, CHARS_PER_TOKEN)
        tool_parts = []
        for tool in ev.tools:
            name, inp = self.tool_input(tool)
            out_tokens += est(json.dumps(inp), CHARS_PER_TOKEN) + 10
            t0 = self.clock.tick(0.1, 0.5)
            self.clock.tick(tool.seconds, tool.seconds + 0.05)
            output, title, metadata = self.tool_output(tool, name, inp)
            state = {
                "status": "completed",
                "input": inp,
                "output": output,
                "title": title,
                "metadata": metadata,
                "time": {"start": t0, "end": self.clock.ms},
            }
            p = self.part(
                msg,
                {
                    "type": "tool",
                    "callID": f"call_00_{''.join(self.rng.choice(B62) for _ in range(24))}",
                    "tool": name,
                    "state": state,
                },
            )
            tool_parts.append(p)
        out_tokens = max(out_tokens, 6)
        prompt = self.prompt_tokens()
        cached = min(self.last_prompt, prompt) // 64 * 64
        tokens = {
            "input": prompt - cached,
            "output": out_tokens,
            "reasoning": 0,
            "cache": {"read": cached, "write": 0},
        }
        cost = round(
            (
                (prompt - cached) * PRICE["miss"]
                + cached * PRICE["hit"]
                + out_tokens * PRICE["output"]
            )
            / 1e6,
            8,
        )
        self.last_prompt = prompt + out_tokens
        finish = "tool-calls" if ev.tools else "stop"
        self.part(
            msg,
            {
                "type": "step-finish",
                "reason": finish,
                "snapshot": P.hexid(self.rng, 40),
                "cost": cost,
                "tokens": tokens,
            },
        )
        msg["info"]["tokens"] = tokens
        msg["info"]["cost"] = cost
        msg["info"]["finish"] = finish
        msg["info"]["time"]["completed"] = self.clock.tick(0.01, 0.1)
        self.context.append({"tokens": out_tokens, "part": None, "user": False})
        for p in tool_parts:
            self.context.append(
                {"tokens": est(p["state"]["output"], CHARS_PER_TOKEN) + 6, "part": p, "user": False}
            )
        total = prompt + out_tokens
        if total >= USABLE:
            self.pending_compaction = True

    def tool_input(self, tool: Tool) -> tuple[str, dict[str, Any]]:
        a = tool.args
        if tool.kind == "read":
            inp: dict[str, Any] = {"filePath": f"{P.ROOT}/{a['path']}"}
            if "offset" in a:
                inp["offset"] = a["offset"] - 1
            if "limit" in a:
                inp["limit"] = a["limit"]
            return "read", inp
        if tool.kind == "grep":
            return "grep", {"pattern": a["pattern"], "path": P.ROOT}
        if tool.kind == "glob":
            return "glob", {"pattern": a["pattern"]}
        if tool.kind == "edit":
            return "edit", {
                "filePath": f"{P.ROOT}/{a['path']}",
                "oldString": a["old"],
                "newString": a["new"],
            }
        if tool.kind == "write":
            return "write", {"filePath": f"{P.ROOT}/{a['path']}", "content": a["content"]}
        return "bash", {
            "command": a["command"],
            "description": a.get("description") or "Run command",
        }

    def spill(self, text: str, direction: str) -> tuple[str, dict[str, Any]]:
        preview, truncated, removed, unit = truncate(text, direction)
        if not truncated:
            return text, {"truncated": False}
        path = f"/home/dev/.local/share/opencode/tool-output/{self.ids.ascending('tool', self.clock.ms)}"
        hint = (
            f"The output was cut to fit. The complete output is saved at {path}; "
            "search it with grep or read a range of it with offset/limit."
        )
        marker = f"...{removed} {unit} truncated..."
        body = (
            f"{preview}\n\n{marker}\n\n{hint}"
            if direction == "head"
            else f"{marker}\n\n{hint}\n\n{preview}"
        )
        return body, {"truncated": True, "outputPath": path}

    def tool_output(
        self, tool: Tool, name: str, inp: dict[str, Any]
    ) -> tuple[str, str, dict[str, Any]]:
        a = tool.args
        if name == "read":
            start = a.get("offset", 1)
            lines = tool.output.rstrip("\n").split("\n")
            body = "\n".join(f"{n:05d}| {line}" for n, line in enumerate(lines, start))
            total = tool.meta.get("total_lines", len(lines))
            end = start + len(lines) - 1
            tail = (
                f"(End of file - total {total} lines)"
                if end >= total
                else f"(File has more lines. Use 'offset' parameter to read beyond line {end})"
            )
            text, meta = self.spill(f"<file>\n{body}\n\n{tail}\n</file>", "head")
            meta["preview"] = "\n".join(lines[:20])
            return text, a["path"], meta
        if name == "grep":
            hits = [h for h in tool.output.split("\n") if h]
            if not hits:
                return "No files found", a["pattern"], {"matches": 0, "truncated": False}
            by_file: dict[str, list[str]] = {}
            for h in hits:
                path, num, text = h.split(":", 2)
                by_file.setdefault(path, []).append(f"  Line {num}: {text}")
            out = [f"Found {len(hits)} matches"]
            for path, rows in by_file.items():
                out.append(f"{P.ROOT}/{path}:")
                out += rows
                out.append("")
            return "\n".join(out).rstrip(), a["pattern"], {"matches": len(hits), "truncated": False}
        if name == "glob":
            files = [f"{P.ROOT}/{f}" for f in tool.output.split("\n") if f]
            return "\n".join(files), "", {"count": len(files), "truncated": False}
        if name in ("edit", "write"):
            path = a["path"]
            self.files_changed.add(path)
            before = (tool.before or "").split("\n")
            after = (tool.after or "").split("\n")
            self.additions += max(0, len(after) - len(before)) + 1
            self.deletions += max(0, len(before) - len(after)) + (1 if tool.before else 0)
            return (
                "",
                path,
                {
                    "diagnostics": {},
                    "filediff": {
                        "file": f"{P.ROOT}/{path}",
                        "additions": max(1, len(after) - len(before)),
                        "deletions": 1 if tool.before else 0,
                    },
                },
            )
        shown, meta = self.spill(
            tool.output + (f"\n\nexit code {tool.exit_code}" if tool.exit_code else ""), "tail"
        )
        meta.update(
            {
                "output": tool.output[:30_000],
                "exit": tool.exit_code,
                "description": inp["description"],
            }
        )
        return shown, inp["description"], meta

    # -- pruning and compaction ---------------------------------------------------------------

    def prune(self) -> None:
        """opencode's prune(): protect the last two user turns and the newest 40k tool tokens."""
        turns = 0
        total = 0
        pruned = 0
        to_prune: list[dict[str, Any]] = []
        for msg in reversed(self.messages):
            info = msg["info"]
            if info["role"] == "user" and not any(p["type"] == "compaction" for p in msg["parts"]):
                turns += 1
            if turns < 2:
                continue
            if info["role"] == "assistant" and info.get("summary"):
                break
            stop = False
            for part in reversed(msg["parts"]):
                if part["type"] != "tool" or part["state"]["status"] != "completed":
                    continue
                if "compacted" in part["state"]["time"]:
                    stop = True
                    break
                estimate = round(len(part["state"]["output"]) / 4)
                total += estimate
                if total > PRUNE_PROTECT:
                    to_prune.append(part)
                    pruned += estimate
            if stop:
                break
        if pruned > PRUNE_MINIMUM:
            now = self.clock.tick(0.05, 0.3)
            for part in to_prune:
                part["state"]["time"]["compacted"] = now
                self.pruned_parts.append(part["id"])
                for c in self.context:
                    if c["part"] is part:
                        c["tokens"] = est(CLEARED, CHARS_PER_TOKEN) + 6
            self.prune_runs.append(len(to_prune))

    def compact(self) -> None:
        self.pending_compaction = False
        before = self.last_prompt
        self.clock.tick(0.2, 1.0)
        request = self.user_message(None, compaction=True)
        self.clock.tick(30, 80)
        summary = self.assistant_message(request, summary=True)
        self.part(summary, {"type": "step-start", "snapshot": P.hexid(self.rng, 40)})
        t0 = self.clock.ms
        self.part(
            summary,
            {
                "type": "text",
                "text": self.summary_text,
                "time": {"start": t0, "end": self.clock.tick(10, 30)},
            },
        )
        self.part(
            summary,
            {
                "type": "step-finish",
                "reason": "stop",
                "snapshot": P.hexid(self.rng, 40),
                "cost": 0,
                "tokens": {
                    "input": 0,
                    "output": 0,
                    "reasoning": 0,
                    "cache": {"read": 0, "write": 0},
                },
            },
        )
        summary["info"]["finish"] = "stop"
        summary["info"]["time"]["completed"] = self.clock.tick(0.01, 0.1)
        self.compactions.append({"tokens_before": before, "message": len(self.messages) - 2})
        # the model now sees: "What did we do so far?" + the summary + what follows
        self.context = [
            {"tokens": 8, "part": None, "user": True},
            {"tokens": est(self.summary_text, CHARS_PER_TOKEN), "part": None, "user": False},
        ]
        self.last_prompt = 0
        self.clock.tick(0.1, 0.5)
        cont = self.user_message(
            "Continue with the next steps if there are any; ask if anything is unclear.",
            synthetic=True,
        )
        self.last_user = cont

    # -- output ------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "slug": "gentle-orchid",
            "version": VERSION,
            "projectID": self.project_id,
            "directory": P.ROOT,
            "title": self.title,
            "time": {"created": self.created, "updated": self.clock.ms},
            "summary": {
                "additions": self.additions,
                "deletions": self.deletions,
                "files": len(self.files_changed),
            },
        }

    def export(self) -> bytes:
        return (dumps_pretty({"info": self.info(), "messages": self.messages}) + "\n").encode()

    def storage(self) -> dict[str, bytes]:
        """The legacy storage layout: session/<project>/<ses>.json, message/<ses>/<msg>.json,
        part/<msg>/<prt>.json (each pretty-printed)."""
        files: dict[str, bytes] = {}
        files[f"session/{self.project_id}/{self.session_id}.json"] = dumps_pretty(
            self.info()
        ).encode()
        files[f"project/{self.project_id}.json"] = dumps_pretty(
            {
                "id": self.project_id,
                "worktree": P.ROOT,
                "vcs": "git",
                "time": {"created": self.created, "initialized": self.created},
            }
        ).encode()
        for msg in self.messages:
            mid = msg["info"]["id"]
            files[f"message/{self.session_id}/{mid}.json"] = dumps_pretty(msg["info"]).encode()
            for part in msg["parts"]:
                files[f"part/{mid}/{part['id']}.json"] = dumps_pretty(part).encode()
        return files


def ceil4(text: str) -> int:
    return math.ceil(len(text) / 4)
