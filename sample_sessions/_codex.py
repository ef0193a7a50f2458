"""Render a script as a Codex CLI rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Every line is ``{"timestamp", "type", "payload"}``. A turn is ``event_msg/task_started``, a
``turn_context`` (model, truncation policy), the user ``message`` item plus its duplicated
``event_msg/user_message``, then per model call: an encrypted ``reasoning`` item, an optional
assistant ``message`` (with its ``agent_message`` copy), ``function_call`` items with JSON-string
arguments (``exec_command``, ``write_stdin``) or a ``custom_tool_call`` (``apply_patch``), an
``event_msg/token_count`` with ``last_token_usage`` / ``total_token_usage`` /
``model_context_window``, and the call outputs. Tool outputs go through Codex's unified-exec
framing and its middle truncation (``…N tokens truncated…``) at the call's ``max_output_tokens``.

Automatic compaction follows Codex's rule: after a sampling request with tool calls, once their
outputs are recorded, when its ``total_tokens`` plus Codex's own bytes/4 estimate of those
outputs reaches 90 % of the 272k window (244,800), a
``compacted`` line with ``replacement_history`` (initial context, the real user messages and the
summary) replaces the history, followed by ``event_msg/context_compacted`` and a new
``turn_context``.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from typing import Any

import _project as P
from _script import ApiError, Call, Compact, Event, Local, Pause, Prompt, Tool, est

CHARS_PER_TOKEN = 4.0
CONTEXT_WINDOW = 272_000
EFFECTIVE_WINDOW = CONTEXT_WINDOW * 95 // 100  # 258,400: what token_count reports
AUTO_COMPACT_LIMIT = CONTEXT_WINDOW * 9 // 10  # 244,800
TRUNCATION_LIMIT = 10000
TRUNCATION = {"mode": "tokens", "limit": TRUNCATION_LIMIT}
MODEL = "gpt-5.3-codex"

SUMMARY_PREFIX = (
    "Another model worked on this task before you and left the checkpoint below. Use it to "
    "continue without redoing finished work."
)

BASE_INSTRUCTIONS = """You are a coding agent working in the user's repository through a terminal.

# How you work
- Read before you change. Prefer `rg` and `sed -n` over opening whole files.
- Make the smallest change that solves the problem, then run the relevant tests.
- Edit files with the apply_patch tool; never with shell redirection.
- Keep the user informed with short progress notes; finish with what changed and how you checked it.

# Sandbox
Commands run in a workspace-write sandbox without network access unless the user approves.
Long-running commands return a session id; poll it with write_stdin.

# Output
Plain, concise prose. Reference files with their paths. Do not paste large files back to the user.
""" + "\n".join(
    f"- Guideline {n}: " + line
    for n, line in enumerate(
        [
            "state assumptions when the request is ambiguous, then proceed",
            "do not revert changes you did not make",
            "prefer standard-library solutions in small services",
            "run formatters only on files you touched",
            "when a test is flaky, find the cause instead of retrying",
            "keep commits focused; one concern per patch",
            "ask before deleting files or rewriting history",
            "quote exact error messages when you report a failure",
        ]
        * 6,
        1,
    )
)

DEVELOPER_TEXT = (
    "<permissions instructions>\nThe sandbox is workspace-write: you may read any file and write "
    "inside the working directory. Network access is off; ask before commands that need it.\n"
    "</permissions instructions>"
)

AGENTS_MD = """# AGENTS.md instructions for {root}

<INSTRUCTIONS>
parcelhub is a FastAPI service with a small npm dashboard in web/.
- Python 3.12, run tests with `python -m pytest`; CI uses pytest-randomly.
- Type-check with `mypy --strict parcelhub`.
- The dashboard API client is generated: `npm run gen:api` in web/.
- Never commit directly to main.
</INSTRUCTIONS>"""


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def uuid7(ms: int, rng: random.Random) -> str:
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= rng.getrandbits(12) << 64
    value |= 0b10 << 62
    value |= rng.getrandbits(62)
    return str(uuid.UUID(int=value))


def truncate_middle(text: str, max_tokens: int) -> tuple[str, int]:
    """Codex's tokens-mode middle cut: keep head and tail bytes, mark what was removed."""
    data = text.encode()
    original = (len(data) + 3) // 4
    max_bytes = max_tokens * 4
    if len(data) <= max_bytes:
        return text, original
    left = max_bytes // 2
    right = max_bytes - left
    head = data[:left].decode(errors="ignore")
    tail = data[len(data) - right :].decode(errors="ignore")
    removed = -(-(len(data) - max_bytes) // 4)
    return f"{head}\u2026{removed} tokens truncated\u2026{tail}", original


class CodexWriter:
    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        session_id: str,
        summary: str,
        cwd: str = P.ROOT,
        hidden_tokens: int = 5_900,
    ) -> None:
        self.summary_body = summary
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.cwd = cwd
        self.hidden = hidden_tokens  # tool schemas: sent, never written to the rollout
        self.lines: list[str] = []
        self.history: list[int] = []  # token sizes of model-visible items
        self.user_messages: list[str] = []
        self.turn_id = ""
        self.totals = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 0,
        }
        self.last_input: int | None = None
        self.cache_warm = False
        self.compactions: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.in_turn = False
        self.pending_user: Prompt | None = None
        self.sessions = 40000
        self.rate_used = 6.0
        self.token_counts = 0

    def emit(self, type_: str, payload: dict[str, Any], ms: int | None = None) -> None:
        self.lines.append(
            dumps({"timestamp": self.clock.iso(ms), "type": type_, "payload": payload})
        )

    def call_id(self) -> str:
        return "call_" + "".join(
            self.rng.choice(string.ascii_letters + string.digits) for _ in range(24)
        )

    def context(self) -> int:
        return self.hidden + sum(self.history)

    # -- session ---------------------------------------------------------------------------

    def start(self) -> None:
        ts = self.clock.iso()
        self.clock.tick(0.5, 2)
        self.emit(
            "session_meta",
            {
                "id": self.session_id,
                "timestamp": ts,
                "cwd": self.cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.111.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": BASE_INSTRUCTIONS},
                "git": {
                    "commit_hash": P.hexid(self.rng, 40),
                    "branch": "feat/order-filters",
                    "repository_url": "git@github.com:acme-logistics/parcelhub.git",
                },
            },
        )
        self.history.append(est(BASE_INSTRUCTIONS, CHARS_PER_TOKEN))

    def initial_context(self) -> list[dict[str, Any]]:
        env = (
            f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
            "  <current_date>2026-03-14</current_date>\n  <timezone>Europe/Amsterdam</timezone>\n"
            "</environment_context>"
        )
        return [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": DEVELOPER_TEXT}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": AGENTS_MD.format(root=self.cwd)},
                    {"type": "input_text", "text": env},
                ],
            },
        ]

    def turn_context(self) -> None:
        self.emit(
            "turn_context",
            {
                "turn_id": self.turn_id,
                "cwd": self.cwd,
                "current_date": "2026-03-14",
                "timezone": "Europe/Amsterdam",
                "approval_policy": "on-request",
                "sandbox_policy": {
                    "type": "workspace-write",
                    "writable_roots": [],
                    "network_access": False,
                    "exclude_tmpdir_env_var": False,
                    "exclude_slash_tmp": False,
                },
                "model": MODEL,
                "personality": "pragmatic",
                "collaboration_mode": {
                    "mode": "default",
                    "settings": {
                        "model": MODEL,
                        "reasoning_effort": "medium",
                        "developer_instructions": None,
                    },
                },
                "effort": "medium",
                "summary": "auto",
                "user_instructions": AGENTS_MD.format(root=self.cwd)
                .split("<INSTRUCTIONS>\n")[1]
                .split("\n</INSTRUCTIONS>")[0],
                "truncation_policy": TRUNCATION,
            },
        )

    def render(self, events: list[Event]) -> list[str]:
        self.start()
        first = True
        for ev in events:
            if isinstance(ev, Prompt):
                if self.in_turn:
                    self.task_complete()
                self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
                self.turn_id = uuid7(self.clock.ms, self.rng)
                self.emit(
                    "event_msg",
                    {
                        "type": "task_started",
                        "turn_id": self.turn_id,
                        "started_at": self.clock.ms // 1000,
                        "model_context_window": EFFECTIVE_WINDOW,
                        "collaboration_mode_kind": "default",
                    },
                )
                if first:
                    for item in self.initial_context():
                        self.emit("response_item", item)
                        self.history.append(est(dumps(item), CHARS_PER_TOKEN))
                    first = False
                self.turn_context()
                self.emit(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": ev.text}],
                    },
                )
                self.clock.tick(0.001, 0.003)
                self.emit(
                    "event_msg",
                    {
                        "type": "user_message",
                        "message": ev.text,
                        "images": [],
                        "local_images": [],
                        "text_elements": [],
                    },
                )
                self.history.append(est(ev.text, CHARS_PER_TOKEN) + 4)
                self.user_messages.append(ev.text)
                self.in_turn = True
                self.last_agent_message = ""
            elif isinstance(ev, Call):
                self.model_call(ev)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
                self.cache_warm = False
            elif isinstance(ev, (ApiError, Compact, Local)):
                pass
        if self.in_turn:
            self.task_complete()
        return self.lines

    def task_complete(self) -> None:
        self.clock.tick(0.02, 0.1)
        self.emit(
            "event_msg",
            {
                "type": "task_complete",
                "turn_id": self.turn_id,
                "last_agent_message": self.last_agent_message or None,
            },
        )
        self.in_turn = False

    # -- calls -----------------------------------------------------------------------------

    def tool_items(self, tool: Tool) -> tuple[dict[str, Any], str, int]:
        """(function_call / custom_tool_call item, framed output, max_output_tokens)."""
        cid = self.call_id()
        a = tool.args
        if tool.kind == "stdin":
            args = {
                "session_id": a["session_id"],
                "chars": "",
                "yield_time_ms": 30000,
                "max_output_tokens": 10000,
            }
            item = {
                "type": "function_call",
                "name": "write_stdin",
                "arguments": dumps(args),
                "call_id": cid,
            }
            body, original = truncate_middle(tool.output, TRUNCATION_LIMIT)
            framed = (
                f"Chunk ID: {P.hexid(self.rng, 6)}\nWall time: {tool.seconds:.4f} seconds\n"
                f"Process exited with code {tool.exit_code}\nOriginal token count: {original}\n"
                f"Output:\n{body}"
            )
            return item, framed, 10000
        if tool.kind in ("edit", "write"):
            patch = apply_patch_text(a["path"], tool.before, tool.after or "")
            item = {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": cid,
                "name": "apply_patch",
                "input": patch,
            }
            out = dumps(
                {
                    "output": f"Success. Updated the following files:\n{'A' if tool.before is None else 'M'} {a['path']}\n",
                    "metadata": {"exit_code": 0, "duration_seconds": round(tool.seconds + 0.1, 1)},
                }
            )
            return item, out, 0
        if tool.kind == "read":
            start = a.get("offset", 1)
            end = (
                start + a["limit"] - 1
                if "limit" in a
                else start + tool.meta.get("total_lines", 400)
            )
            cmd = (
                f"sed -n '{start},{end}p' {a['path']}"
                if ("offset" in a or "limit" in a)
                else f"cat {a['path']}"
            )
        elif tool.kind == "grep":
            cmd = f'rg -n "{a["pattern"]}" {a.get("path", ".")}'
        elif tool.kind == "glob":
            cmd = f"rg --files -g '{a['pattern']}'"
        else:
            cmd = a["command"]
        max_out = 10000 if len(tool.output) > 20000 else self.rng.choice([4000, 6000, 10000, 12000])
        args = {
            "cmd": cmd,
            "workdir": self.cwd,
            "yield_time_ms": 10000,
            "max_output_tokens": max_out,
        }
        item = {
            "type": "function_call",
            "name": "exec_command",
            "arguments": dumps(args),
            "call_id": cid,
        }
        if tool.meta.get("poll"):
            framed = (
                f"Chunk ID: {P.hexid(self.rng, 6)}\nWall time: 10.0021 seconds\n"
                f"Process running with session ID {tool.meta['poll']}\nOriginal token count: 0\nOutput:\n"
            )
            return item, framed, max_out
        body, original = truncate_middle(tool.output, min(max_out, TRUNCATION_LIMIT))
        framed = (
            f"Chunk ID: {P.hexid(self.rng, 6)}\nWall time: {tool.seconds:.4f} seconds\n"
            f"Process exited with code {tool.exit_code}\nOriginal token count: {original}\n"
            f"Output:\n{body}"
        )
        return item, framed, max_out

    def usage(self, prompt: int, output: int, reasoning: int) -> dict[str, int]:
        cached = 0
        if self.cache_warm and self.last_input is not None:
            cached = min(prompt, self.last_input) // 128 * 128
        return {
            "input_tokens": prompt,
            "cached_input_tokens": cached,
            "output_tokens": output,
            "reasoning_output_tokens": reasoning,
            "total_tokens": prompt + output,
        }

    def token_count(self, last: dict[str, int], ms: int | None = None) -> None:
        self.rate_used = min(99.0, self.rate_used + self.rng.choice([0.0, 0.0, 1.0]))
        self.token_counts += 1
        limits = None  # most token_count events carry no rate-limit snapshot
        if self.token_counts % 8 == 1:
            limits = {
                "limit_id": "codex",
                "primary": {
                    "used_percent": self.rate_used,
                    "window_minutes": 300,
                    "resets_at": 1773499000,
                },
                "secondary": {
                    "used_percent": 11.0,
                    "window_minutes": 10080,
                    "resets_at": 1773900000,
                },
                "credits": None,
                "plan_type": "pro",
            }
        self.emit(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": dict(self.totals),
                    "last_token_usage": last,
                    "model_context_window": EFFECTIVE_WINDOW,
                },
                "rate_limits": limits,
            },
            ms,
        )

    def model_call(self, ev: Call) -> None:
        rng = self.rng
        prompt = self.context()
        self.clock.tick(ev.seconds * 0.4, ev.seconds * 0.7)
        reasoning_tokens = rng.randint(20, 400) if ev.thinking or rng.random() < 0.7 else 0
        items: list[tuple[str, dict[str, Any]]] = []
        out_tokens = 0
        if reasoning_tokens:
            title = " ".join(ev.thinking.split()[:5]).rstrip(".,:;")
            summary = (
                [{"type": "summary_text", "text": f"**{title}**\n\n{ev.thinking}"}]
                if ev.thinking
                else []
            )
            blob = base64.urlsafe_b64encode(rng.randbytes(96 + reasoning_tokens)).decode()
            items.append(
                (
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": summary,
                        "content": None,
                        "encrypted_content": "gAAAAAB" + blob,
                    },
                )
            )
            if ev.thinking:
                items.insert(
                    0, ("event_msg", {"type": "agent_reasoning", "text": summary[0]["text"]})
                )
            out_tokens += reasoning_tokens
        if ev.text:
            items.append(
                (
                    "event_msg",
                    {
                        "type": "agent_message",
                        "message": ev.text,
                        "phase": "final_answer" if not ev.tools else "commentary",
                    },
                )
            )
            msg = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": ev.text}],
            }
            if not ev.tools:
                msg["phase"] = "final_answer"
            items.append(("response_item", msg))
            out_tokens += est(ev.text, CHARS_PER_TOKEN)
            self.last_agent_message = ev.text
        outputs: list[tuple[dict[str, Any], str]] = []
        for tool in ev.tools:
            item, framed, _ = self.tool_items(tool)
            items.append(("response_item", item))
            out_tokens += est(item.get("arguments") or item.get("input") or "", CHARS_PER_TOKEN) + 8
            outputs.append((item, framed))
        out_tokens = max(out_tokens, 12)
        for type_, payload in items:
            self.emit(type_, payload, self.clock.tick(0.01, 0.6))
        last = self.usage(prompt, out_tokens, reasoning_tokens)
        for k in self.totals:
            self.totals[k] += last[k]
        self.token_count(last, self.clock.tick(0.05, 0.4))
        if rng.random() < 0.12:
            self.token_count(last, self.clock.tick(0.01, 0.05))  # Codex repeats these
        self.calls.append({"prompt": prompt, "total": prompt + out_tokens, "line": len(self.lines)})
        self.history.append(out_tokens)
        self.last_input = prompt
        self.cache_warm = True
        appended = 0  # Codex's own estimate of what this call's tools added (bytes/4)
        for (item, framed), tool in zip(outputs, ev.tools, strict=True):
            wait = 10.0 if tool.meta.get("poll") else tool.seconds
            self.clock.tick(wait, wait + 0.2)
            if item["type"] == "custom_tool_call":
                self.emit(
                    "event_msg",
                    {
                        "type": "patch_apply_end",
                        "call_id": item["call_id"],
                        "turn_id": self.turn_id,
                        "stdout": json.loads(framed)["output"],
                        "stderr": "",
                        "success": True,
                        "status": "completed",
                    },
                )
                output_item = {
                    "type": "custom_tool_call_output",
                    "call_id": item["call_id"],
                    "output": framed,
                }
            else:
                output_item = {
                    "type": "function_call_output",
                    "call_id": item["call_id"],
                    "output": framed,
                }
            self.emit("response_item", output_item)
            appended += codex_estimate(output_item)
            self.history.append(est(framed, CHARS_PER_TOKEN) + 6)
        # Codex's check once the outputs are recorded: the last total plus its own estimate of
        # what came since (the encrypted reasoning of earlier turns is too short here to count).
        if prompt + out_tokens + appended >= AUTO_COMPACT_LIMIT and ev.tools:
            self.compact(prompt + out_tokens)
        polled = [t for t in ev.tools if t.meta.get("poll")]
        for tool in polled:
            stdin = Tool(
                "stdin",
                {"session_id": tool.meta["poll"]},
                tool.output,
                exit_code=tool.exit_code,
                seconds=max(1.0, tool.seconds - 10),
            )
            self.model_call(Call("", "", [stdin], seconds=self.rng.uniform(1.5, 3.0)))

    def summary(self) -> str:
        asks = "\n".join(f"- {m}" for m in self.user_messages)
        return self.summary_body.replace("{user_requests}", asks)

    def compact(self, tokens: int) -> None:
        self.clock.tick(15, 40)
        summary_text = SUMMARY_PREFIX + "\n" + self.summary()
        zero = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 0,
        }
        self.token_count(zero)
        history = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": m}]}
            for m in self.user_messages[:-1]
        ]
        history += self.initial_context()
        history.append(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": self.user_messages[-1]}],
            }
        )
        history.append(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": summary_text}],
            }
        )
        self.emit(
            "compacted",
            {"message": summary_text, "replacement_history": history},
            self.clock.tick(0.001, 0.003),
        )
        self.emit("event_msg", {"type": "context_compacted"}, self.clock.tick(0.01, 0.03))
        self.compactions.append({"tokens": tokens, "line": len(self.lines) - 1})
        self.history = [est(BASE_INSTRUCTIONS, CHARS_PER_TOKEN)] + [
            est(dumps(h), CHARS_PER_TOKEN) for h in history
        ]
        self.cache_warm = False
        self.turn_context()


def codex_estimate(item: dict[str, Any]) -> int:
    """Codex's size estimate of a history item: the bytes of its compact JSON, over 4, rounded
    up (``approx_token_count`` in codex-rs)."""
    size = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())
    return (size + 3) // 4


def apply_patch_text(path: str, before: str | None, after: str) -> str:
    """An ``apply_patch`` envelope for one file (add or update, with @@ hunks)."""
    if before is None:
        body = "\n".join("+" + line for line in after.rstrip("\n").split("\n"))
        return f"*** Begin Patch\n*** Add File: {path}\n{body}\n*** End Patch"
    import difflib

    a, b = before.split("\n"), after.split("\n")
    out = [f"*** Begin Patch\n*** Update File: {path}"]
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(2):
        anchor = next(
            (
                a[i]
                for i in range(group[0][1] - 1, -1, -1)
                if a[i].strip().startswith(("def ", "class ", "@"))
            ),
            "",
        )
        out.append(f"@@ {anchor}".rstrip())
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out += [" " + s for s in a[x1:x2]]
            else:
                out += ["-" + s for s in a[x1:x2]]
                out += ["+" + s for s in b[y1:y2]]
    out.append("*** End Patch")
    return "\n".join(out)
