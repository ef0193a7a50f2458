"""Render a script as a pi coding-agent session (v3: ``~/.pi/agent/sessions/--<cwd>--/*.jsonl``).

A header line (``{"type":"session","version":3,...}``) is followed by tree entries with 8-hex
``id``/``parentId``: ``model_change``, ``thinking_level_change``, ``message`` entries whose
``message.role`` is ``user`` / ``assistant`` / ``toolResult`` / ``bashExecution``, and
``compaction`` entries. Assistant messages carry pi's usage ``{input, output, cacheRead,
cacheWrite, totalTokens, cost}``; tool results go through pi's own truncation (head for read,
tail for bash; 2000 lines or 50 KB) with its notices and ``details.truncation``.

Compaction follows pi's rule: after a turn ends, when the last assistant ``totalTokens`` exceeds
``window - reserveTokens`` (200,000 - 16,384), a ``compaction`` entry is written with
``tokensBefore`` equal to that ``totalTokens`` and ``firstKeptEntryId`` chosen by pi's cut-point
walk (keep at least 20,000 estimated tokens; never cut at a tool result).
"""

from __future__ import annotations

import base64
import json
import math
import random
import string
from typing import Any

import _project as P
from _script import ApiError, Call, Compact, Event, Local, Pause, Prompt, Tool, est

CHARS_PER_TOKEN = 3.5
WINDOW = 200_000
RESERVE = 16_384
KEEP_RECENT = 20_000
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
PRICES = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}  # $ per million


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def format_size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / 1024 / 1024:.1f}MB"


def truncate_head(text: str) -> tuple[str, dict[str, Any] | None]:
    lines = text.split("\n")
    total_bytes = len(text.encode())
    if len(lines) <= MAX_LINES and total_bytes <= MAX_BYTES:
        return text, None
    kept: list[str] = []
    size = 0
    by = "lines"
    for line in lines:
        cost = len(line.encode()) + (1 if kept else 0)
        if len(kept) >= MAX_LINES:
            by = "lines"
            break
        if size + cost > MAX_BYTES:
            by = "bytes"
            break
        kept.append(line)
        size += cost
    content = "\n".join(kept)
    return content, {
        "content": content,
        "truncated": True,
        "truncatedBy": by,
        "totalLines": len(lines),
        "totalBytes": total_bytes,
        "outputLines": len(kept),
        "outputBytes": len(content.encode()),
        "lastLinePartial": False,
        "firstLineExceedsLimit": False,
        "maxLines": MAX_LINES,
        "maxBytes": MAX_BYTES,
    }


def truncate_tail(text: str) -> tuple[str, dict[str, Any] | None]:
    lines = text.split("\n")
    total_bytes = len(text.encode())
    if len(lines) <= MAX_LINES and total_bytes <= MAX_BYTES:
        return text, None
    kept: list[str] = []
    size = 0
    by = "lines"
    for line in reversed(lines):
        cost = len(line.encode()) + (1 if kept else 0)
        if len(kept) >= MAX_LINES:
            by = "lines"
            break
        if size + cost > MAX_BYTES:
            by = "bytes"
            break
        kept.append(line)
        size += cost
    kept.reverse()
    content = "\n".join(kept)
    return content, {
        "content": content,
        "truncated": True,
        "truncatedBy": by,
        "totalLines": len(lines),
        "totalBytes": total_bytes,
        "outputLines": len(kept),
        "outputBytes": len(content.encode()),
        "lastLinePartial": False,
        "firstLineExceedsLimit": False,
        "maxLines": MAX_LINES,
        "maxBytes": MAX_BYTES,
    }


class PiWriter:
    def __init__(
        self,
        rng: random.Random,
        clock: P.Clock,
        *,
        session_id: str,
        model: str = "claude-sonnet-4-5",
        base_tokens: int = 3_400,
        summary: str = "",
    ) -> None:
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.model = model
        self.base = base_tokens
        self.summary_text = summary
        self.lines: list[str] = []
        self.entries: list[dict[str, Any]] = []  # the path, for the cut-point walk
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.context: list[tuple[str, int]] = []  # (entry id, provider tokens) in context
        self.last_total = 0
        self.last_prompt = 0
        self.cache_warm = False
        self.compactions: list[dict[str, Any]] = []
        self.read_files: list[str] = []
        self.modified_files: list[str] = []
        self.assistant_totals: list[int] = []

    def new_id(self) -> str:
        while True:
            value = P.hexid(self.rng, 8)
            if value not in self.ids:
                self.ids.add(value)
                return value

    def header(self, **extra: Any) -> None:
        self.lines.append(
            dumps(
                {
                    "type": "session",
                    "version": 3,
                    "id": self.session_id,
                    "timestamp": self.clock.iso(),
                    "cwd": P.ROOT,
                    **extra,
                }
            )
        )

    def entry(self, type_: str, body: dict[str, Any], *, parent: str | bool | None = True) -> str:
        eid = self.new_id()
        parent_id = self.leaf if parent is True else parent
        obj = {
            "type": type_,
            "id": eid,
            "parentId": parent_id,
            "timestamp": self.clock.iso(),
            **body,
        }
        self.lines.append(dumps(obj))
        self.entries.append(obj)
        self.leaf = eid
        return eid

    def message(self, msg: dict[str, Any], tokens: int | None = None) -> str:
        eid = self.entry("message", {"message": msg})
        if tokens is not None:
            self.context.append((eid, tokens))
        return eid

    # -- events ----------------------------------------------------------------------------

    def start(self, thinking: str = "medium") -> None:
        self.header()
        self.clock.tick(0.05, 0.2)
        self.entry("model_change", {"provider": "anthropic", "modelId": self.model})
        self.entry("thinking_level_change", {"thinkingLevel": thinking})

    def render(self, events: list[Event]) -> list[str]:
        for ev in events:
            if isinstance(ev, Prompt):
                self.maybe_compact()
                self.clock.tick(ev.think_seconds, ev.think_seconds + 1)
                self.user(ev.text)
            elif isinstance(ev, Call):
                self.call(ev)
            elif isinstance(ev, Pause):
                self.clock.tick(ev.minutes * 60, ev.minutes * 60 + 1)
                self.cache_warm = False
            elif isinstance(ev, Local):
                self.bash_execution(ev.command.removeprefix("!"), ev.stdout)
            elif isinstance(ev, (ApiError, Compact)):
                pass
        return self.lines

    def user(self, text: str) -> str:
        ms = self.clock.ms
        return self.message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms},
            est(text, CHARS_PER_TOKEN) + 4,
        )

    def bash_execution(self, command: str, output: str, exit_code: int = 0) -> str:
        """The user's own ``!command``: in context as a user turn."""
        self.clock.tick(5, 20)
        return self.message(
            {
                "role": "bashExecution",
                "command": command,
                "output": output,
                "exitCode": exit_code,
                "cancelled": False,
                "truncated": False,
                "timestamp": self.clock.ms,
            },
            est(command + output, CHARS_PER_TOKEN) + 6,
        )

    def usage(self, output: int) -> dict[str, Any]:
        prompt = self.base + sum(t for _, t in self.context)
        if self.cache_warm and self.last_prompt and self.last_prompt <= prompt:
            cache_read = self.last_prompt
        else:
            cache_read = 0
        uncached = self.rng.randint(1, 10)
        cache_write = max(0, prompt - cache_read - uncached)
        total = uncached + output + cache_read + cache_write
        cost = {
            "input": uncached * PRICES["input"] / 1e6,
            "output": output * PRICES["output"] / 1e6,
            "cacheRead": cache_read * PRICES["cacheRead"] / 1e6,
            "cacheWrite": cache_write * PRICES["cacheWrite"] / 1e6,
        }
        cost["total"] = sum(cost.values())
        self.last_prompt = prompt
        return {
            "input": uncached,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": total,
            "cost": cost,
        }

    def call(self, ev: Call) -> None:
        self.clock.tick(ev.seconds * 0.5, ev.seconds)
        content: list[dict[str, Any]] = []
        if ev.thinking:
            sig = base64.b64encode(self.rng.randbytes(self.rng.randint(150, 500))).decode()
            content.append({"type": "thinking", "thinking": ev.thinking, "thinkingSignature": sig})
        if ev.text:
            content.append({"type": "text", "text": ev.text})
        calls: list[tuple[str, Tool, str, dict[str, Any]]] = []
        for tool in ev.tools:
            tid = "toolu_01" + "".join(
                self.rng.choice(string.ascii_letters + string.digits) for _ in range(22)
            )
            name, args = self.tool_args(tool)
            content.append({"type": "toolCall", "id": tid, "name": name, "arguments": args})
            calls.append((tid, tool, name, args))
        output = max(8, sum(est(dumps(c), CHARS_PER_TOKEN) for c in content))
        usage = self.usage(output)
        msg = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": self.model,
            "usage": usage,
            "stopReason": "toolUse" if ev.tools else "stop",
            "timestamp": self.clock.ms,
        }
        self.message(msg, output)
        self.cache_warm = True
        self.last_total = usage["totalTokens"]
        self.assistant_totals.append(self.last_total)
        for tid, tool, name, _args in calls:
            self.clock.tick(tool.seconds, tool.seconds + 0.05)
            text, details, is_error = self.tool_output(tool)
            body: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": tid,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
            }
            if details is not None:
                body["details"] = details
            body["isError"] = is_error
            body["timestamp"] = self.clock.ms
            self.message(body, est(text, CHARS_PER_TOKEN) + 6)

    def tool_args(self, tool: Tool) -> tuple[str, dict[str, Any]]:
        a = tool.args
        if tool.kind == "read":
            args: dict[str, Any] = {"path": f"{P.ROOT}/{a['path']}"}
            if "offset" in a:
                args["offset"] = a["offset"]
            if "limit" in a:
                args["limit"] = a["limit"]
            return "read", args
        if tool.kind == "edit":
            return "edit", {
                "path": f"{P.ROOT}/{a['path']}",
                "oldText": a["old"],
                "newText": a["new"],
            }
        if tool.kind == "write":
            return "write", {"path": f"{P.ROOT}/{a['path']}", "content": a["content"]}
        if tool.kind == "grep":
            return "bash", {"command": f'cd {P.ROOT} && rg -n "{a["pattern"]}"'}
        if tool.kind == "glob":
            return "bash", {"command": f"cd {P.ROOT} && rg --files -g '{a['pattern']}'"}
        return "bash", {"command": f"cd {P.ROOT} && {a['command']}"}

    def tool_output(self, tool: Tool) -> tuple[str, dict[str, Any] | None, bool]:
        a = tool.args
        if tool.kind == "read":
            if a["path"] not in self.read_files:
                self.read_files.append(a["path"])
            text, trunc = truncate_head(tool.output.rstrip("\n"))
            if trunc is None:
                return text, None, False
            start = a.get("offset", 1)
            end = start + trunc["outputLines"] - 1
            if trunc["truncatedBy"] == "bytes":
                note = (
                    f"\n\n[Showing lines {start}-{end} of {trunc['totalLines']} "
                    f"({format_size(MAX_BYTES)} limit). Use offset={end + 1} to continue.]"
                )
            else:
                note = f"\n\n[Showing lines {start}-{end} of {trunc['totalLines']}. Use offset={end + 1} to continue.]"
            return text + note, {"truncation": trunc}, False
        if tool.kind in ("edit", "write"):
            if a["path"] not in self.modified_files:
                self.modified_files.append(a["path"])
            if tool.kind == "write":
                return (
                    f"Wrote {len(a['content'].encode())} bytes to {P.ROOT}/{a['path']}",
                    None,
                    False,
                )
            diff = (
                "\n".join(f"-{line}" for line in a["old"].split("\n"))
                + "\n"
                + "\n".join(f"+{line}" for line in a["new"].split("\n"))
            )
            return f"Replaced 1 occurrence in {P.ROOT}/{a['path']}.", {"diff": diff}, False
        text, trunc = truncate_tail(tool.output)
        suffix = f"\n\nCommand exited with code {tool.exit_code}" if tool.exit_code else ""
        if trunc is None:
            return (text or "(no output)") + suffix, None, tool.exit_code != 0
        log = f"/tmp/pi-bash-{P.hexid(self.rng, 8)}.log"
        first = trunc["totalLines"] - trunc["outputLines"] + 1
        if trunc["truncatedBy"] == "bytes":
            note = (
                f"\n\n[Showing lines {first}-{trunc['totalLines']} of {trunc['totalLines']} "
                f"({format_size(MAX_BYTES)} limit). Full output: {log}]"
            )
        else:
            note = f"\n\n[Showing lines {first}-{trunc['totalLines']} of {trunc['totalLines']}. Full output: {log}]"
        return (
            text + note + suffix,
            {"truncation": trunc, "fullOutputPath": log},
            tool.exit_code != 0,
        )

    # -- compaction -------------------------------------------------------------------------

    def maybe_compact(self) -> None:
        if self.last_total <= WINDOW - RESERVE:
            return
        self.compact(self.last_total)

    def estimate(self, entry: dict[str, Any]) -> int:
        """pi's chars/4 estimate of one message entry (ceil)."""
        msg = entry["message"]
        role = msg["role"]
        chars = 0
        if role == "bashExecution":
            chars = len(msg["command"]) + len(msg["output"])
        else:
            for block in msg.get("content", []):
                if block["type"] == "text":
                    chars += len(block["text"])
                elif block["type"] == "thinking":
                    chars += len(block["thinking"])
                elif block["type"] == "toolCall":
                    chars += len(block["name"]) + len(
                        json.dumps(block["arguments"], separators=(",", ":"))
                    )
        return math.ceil(chars / 4)

    def cut_point(self) -> str:
        start = 0
        for k in range(len(self.entries) - 1, -1, -1):
            if self.entries[k]["type"] == "compaction":
                start = k + 1
                break
        path = self.entries[start:]
        valid = [
            i
            for i, e in enumerate(path)
            if e["type"] == "message"
            and e["message"]["role"] in ("user", "assistant", "bashExecution")
        ]
        acc = 0
        cut = valid[0]
        for i in range(len(path) - 1, -1, -1):
            if path[i]["type"] != "message":
                continue
            acc += self.estimate(path[i])
            if acc >= KEEP_RECENT:
                cut = next((v for v in valid if v >= i), valid[-1])
                break
        first_kept: str = path[cut]["id"]
        return first_kept

    def compact(self, tokens_before: int) -> None:
        first_kept = self.cut_point()
        self.clock.tick(25, 70)
        summary = self.summary_text + (
            "\n\n<read-files>\n"
            + "\n".join(sorted(set(self.read_files) - set(self.modified_files)))
            + "\n</read-files>\n\n<modified-files>\n"
            + "\n".join(sorted(self.modified_files))
            + "\n</modified-files>"
        )
        self.entry(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": tokens_before,
                "details": {
                    "readFiles": sorted(set(self.read_files) - set(self.modified_files)),
                    "modifiedFiles": sorted(self.modified_files),
                },
            },
        )
        self.compactions.append(
            {"tokensBefore": tokens_before, "firstKeptEntryId": first_kept, "line": len(self.lines)}
        )
        ids = [eid for eid, _ in self.context]
        keep_from = ids.index(first_kept) if first_kept in ids else 0
        self.context = [("summary", est(summary, CHARS_PER_TOKEN) + 30), *self.context[keep_from:]]
        self.cache_warm = False


def branched(
    rng: random.Random, clock: P.Clock, session_id: str
) -> tuple[list[str], dict[str, Any]]:
    """A small pi session with an abandoned branch: the user went back to an earlier answer
    (pi's /tree) and continued differently. Returns the lines and the ids worth testing."""
    import _project as proj
    from _script import Scenario

    sc = Scenario(rng)
    w = PiWriter(rng, clock, session_id=session_id, model="claude-sonnet-4-5")
    w.start(thinking="low")
    w.user("GET /v1/orders/{id}/label returns 500 for orders without parcels. Find out why.")
    label_line = (
        sc.repo.read("parcelhub/orders.py")
        .split("\n")
        .index("def order_label(request: Request, order_id: str) -> bytes:")
    )
    w.call(
        Call(
            "Looking at the label route.", "", [sc.read("parcelhub/orders.py", label_line, 10)], 4.0
        )
    )
    log = (
        "E   ModuleNotFoundError: No module named 'parcelhub.labels'\n"
        "tests/test_orders.py::test_label_requires_parcels FAILED"
    )
    w.call(
        Call(
            "",
            "",
            [sc.bash("python -m pytest -q tests/test_orders.py -k label", log, exit_code=1)],
            3.0,
        )
    )
    w.call(
        Call(
            "The route checks for parcels only after importing `parcelhub.labels`, which is not "
            "installed in this environment (it needs the optional `pdf` extra). So the 500 is an "
            "ImportError, raised before the 409 check.",
            "",
            [],
            5.0,
        )
    )
    branch_point = w.leaf
    context_at_branch = list(w.context)
    # first attempt: handle it globally (later abandoned)
    w.clock.tick(40, 60)
    abandoned_user = w.user("Catch ImportError in main.py's exception handlers and return 501.")
    w.call(
        Call(
            "Adding a handler.",
            "",
            [
                sc.edit(
                    "parcelhub/main.py",
                    "    @app.exception_handler(LookupError)",
                    "    @app.exception_handler(ImportError)\n    async def missing_extra(_: Request, exc: ImportError) -> JSONResponse:\n"
                    '        return JSONResponse({"error": "not_available", "detail": str(exc)}, status_code=501)\n\n'
                    "    @app.exception_handler(LookupError)",
                )
            ],
            6.0,
        )
    )
    w.call(Call("Done: a missing optional module now gives 501 instead of 500.", "", [], 3.0))
    abandoned_leaf = w.leaf
    # the user goes back to the explanation and takes another route
    w.clock.tick(90, 150)
    w.leaf = branch_point
    w.context = context_at_branch
    summary = (
        "The branch tried a global ImportError handler in parcelhub/main.py returning 501. "
        "The user rejected it: it would hide real import errors."
    )
    bs = w.entry("branch_summary", {"fromId": abandoned_leaf, "summary": summary})
    w.context.append((bs, est(summary, CHARS_PER_TOKEN) + 20))
    w.entry("label", {"targetId": branch_point, "label": "diagnosis"})
    w.clock.tick(10, 30)
    kept_user = w.user(
        "No, keep it local: check for parcels before importing labels, and make the "
        "import lazy inside the route."
    )
    sc.repo.files["parcelhub/orders.py"] = proj.Repo().read("parcelhub/orders.py")
    w.call(
        Call(
            "Moving the parcels check before the import.",
            "",
            [
                sc.edit(
                    "parcelhub/orders.py",
                    "    from parcelhub.labels import render_label\n\n    order = request.app.state.store.get_order(order_id)\n"
                    '    if not order.parcels:\n        raise HTTPException(409, "order has no parcels yet")\n',
                    "    order = request.app.state.store.get_order(order_id)\n"
                    '    if not order.parcels:\n        raise HTTPException(409, "order has no parcels yet")\n'
                    "    from parcelhub.labels import render_label\n",
                )
            ],
            6.0,
        )
    )
    w.call(
        Call(
            "",
            "",
            [
                sc.bash(
                    "python -m pytest -q tests/test_orders.py -k label",
                    "tests/test_orders.py::test_label_requires_parcels PASSED\n1 passed, 9 deselected in 0.41s",
                )
            ],
            3.0,
        )
    )
    w.call(
        Call(
            "Orders without parcels now get the 409 before anything is imported; the test passes.",
            "",
            [],
            3.0,
        )
    )
    return w.lines, {
        "abandoned_user": abandoned_user,
        "abandoned_leaf": abandoned_leaf,
        "branch_point": branch_point,
        "kept_user": kept_user,
        "leaf": w.leaf,
    }
