"""Hand-written Codex rollouts for the loader's tests: one method per record, in file order.

    rollout = Rollout().meta().task(window=258_400).user("fix it")
    rollout.call("exec_command", {"cmd": "ls"}).output("a.py").usage(1_000, 50)
    path = rollout.write(tmp_path)

Records are written the way Codex writes them (compact JSON, ``timestamp`` / ``type`` / ``payload``
in that order); :attr:`Rollout.lines` holds them, and a method returns the 1-based line of the
record it wrote through :attr:`Rollout.last_line`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

SESSION_ID = "019d0000-0000-7000-8000-00000000c0de"
"""The thread id of a built rollout (a UUIDv7 like Codex's)."""


def uuid7(ms: int, tail: int = 1) -> str:
    """A version-7 UUID whose timestamp is ``ms`` (turn ids: newer turns have larger ``ms``)."""
    hex_ms = f"{ms:012x}"
    return f"{hex_ms[:8]}-{hex_ms[8:]}-7000-8000-{tail:012x}"


SESSION_MS = int(SESSION_ID[:8] + SESSION_ID[9:13], 16)


def compact(obj: Any) -> str:
    """JSON as Codex writes it: compact, UTF-8."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Rollout:
    """A rollout being written."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.second = 0
        self.turn_ms = SESSION_MS + 1_000
        self.calls = 0
        self.total_input = 0

    @property
    def last_line(self) -> int:
        """The 1-based line of the last record written."""
        return len(self.lines)

    def _time(self) -> str:
        self.second += 1
        return f"2026-04-01T12:{self.second // 60:02d}:{self.second % 60:02d}.000Z"

    def record(self, kind: str, payload: Any) -> Self:
        """Any envelope record."""
        self.lines.append(compact({"timestamp": self._time(), "type": kind, "payload": payload}))
        return self

    def event(self, kind: str, **fields: Any) -> Self:
        """An ``event_msg`` of type ``kind``."""
        return self.record("event_msg", {"type": kind, **fields})

    def item(self, kind: str, **fields: Any) -> Self:
        """A ``response_item`` of type ``kind``."""
        return self.record("response_item", {"type": kind, **fields})

    # -- records --------------------------------------------------------------------------

    def meta(self, sid: str = SESSION_ID, **fields: Any) -> Self:
        payload = {
            "id": sid,
            "timestamp": "2026-04-01T12:00:00.000Z",
            "cwd": "/work/app",
            "originator": "codex-tui",
            "cli_version": "0.142.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex."},
            **fields,
        }
        return self.record("session_meta", payload)

    def task(self, window: int | None = 258_400, turn_ms: int | None = None) -> Self:
        """A ``task_started`` (a new turn id, newer than the last unless ``turn_ms`` says)."""
        self.turn_ms = turn_ms if turn_ms is not None else self.turn_ms + 1_000
        fields: dict[str, Any] = {"turn_id": uuid7(self.turn_ms)}
        if window is not None:
            fields["model_context_window"] = window
        return self.event("task_started", **fields)

    def done(self) -> Self:
        return self.event("task_complete", turn_id=uuid7(self.turn_ms))

    def context(self, policy: dict[str, Any] | None = None, model: str = "gpt-5.5") -> Self:
        """A ``turn_context`` (with a truncation policy when given)."""
        payload: dict[str, Any] = {"turn_id": uuid7(self.turn_ms), "model": model}
        if policy is not None:
            payload["truncation_policy"] = policy
        return self.record("turn_context", payload)

    def developer(self, text: str) -> Self:
        return self.item(
            "message", role="developer", content=[{"type": "input_text", "text": text}]
        )

    def user(self, text: str, *, echo: bool = True) -> Self:
        """A real user message (and the ``user_message`` event Codex writes for it)."""
        self.item("message", role="user", content=[{"type": "input_text", "text": text}])
        return self.event("user_message", message=text) if echo else self

    def reasoning(self, **fields: Any) -> Self:
        return self.item("reasoning", summary=[], **fields)

    def say(self, text: str) -> Self:
        return self.item(
            "message", role="assistant", content=[{"type": "output_text", "text": text}]
        )

    def call(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> Self:
        self.calls += 1
        return self.item(
            "function_call",
            name=name,
            arguments=compact(arguments),
            call_id=call_id or f"call_{self.calls}",
        )

    def output(self, output: Any, call_id: str | None = None) -> Self:
        return self.item(
            "function_call_output", call_id=call_id or f"call_{self.calls}", output=output
        )

    def usage(
        self, input_tokens: int, output_tokens: int = 100, reasoning: int = 0, window: int = 258_400
    ) -> Self:
        """The ``token_count`` of the request just made."""
        self.total_input += input_tokens
        last = {
            "input_tokens": input_tokens,
            "cached_input_tokens": 0,
            "output_tokens": output_tokens,
            "reasoning_output_tokens": reasoning,
            "total_tokens": input_tokens + output_tokens,
        }
        cumulative = {**last, "input_tokens": self.total_input, "total_tokens": self.total_input}
        info = {
            "total_token_usage": cumulative,
            "last_token_usage": last,
            "model_context_window": window,
        }
        return self.event("token_count", info=info, rate_limits=None)

    def reset(self, estimate: int, window: int = 258_400) -> Self:
        """The ``token_count`` Codex writes after a compaction: no request, its estimate."""
        zero = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
        }
        info = {
            "total_token_usage": {**zero, "input_tokens": self.total_input, "total_tokens": 1},
            "last_token_usage": {**zero, "total_tokens": estimate},
            "model_context_window": window,
        }
        return self.event("token_count", info=info, rate_limits=None)

    def compacted(self, history: list[dict[str, Any]] | None = None, **fields: Any) -> Self:
        """A remote compaction: the kept user messages and the encrypted summary."""
        if history is None:
            history = [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "x"}],
                },
                {"type": "compaction", "encrypted_content": "E" * 2_000},
            ]
        return self.record("compacted", {"message": "", "replacement_history": history, **fields})

    # -- output ---------------------------------------------------------------------------

    def write(self, folder: Path, name: str = "rollout-test.jsonl") -> Path:
        path = folder / name
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path
