"""What a Codex rollout says about its thread: the agent and provider, resumes, the sub-agent fork
it started from, and the context window turn by turn.

* ``session_meta`` lines. The first names the thread (``id``, ``cli_version``,
  ``model_provider``, ``originator``). A resume appends the same id again. A sub-agent fork
  starts with the child's meta (``forked_from_id``, ``source.subagent.thread_spawn``), then the
  parent's, then the parent's history copied with the fork's timestamp, up to the child's first
  own ``task_started`` (its turn id, a UUIDv7, is not older than the child's thread id).
* ``model_context_window`` in ``task_started`` and ``token_count.info``: Codex's effective window
  (95 % of the model's), which can change between turns (a resume can pick another catalog).
"""

from __future__ import annotations

from typing import Any

from core.formats.base import BAD_COUNT, SessionBuilder
from core.model.read_numbers import plausible, show_value
from core.model.session import Diagnostic, Session, Severity, WindowChange

CODEX_EFFECTIVE_WINDOW_PERCENT = 95
"""Codex reports this share of the model's window as ``model_context_window``."""


def uuid7_ms(value: Any) -> int | None:
    """The millisecond timestamp of a version-7 UUID, else None."""
    if not isinstance(value, str) or len(value) != 36 or value[14] != "7":
        return None
    try:
        return int(value[:8] + value[9:13], 16)
    except ValueError:
        return None


class ThreadFacts:
    """Collects the thread-level facts while the loader walks the rollout."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.agent_version: str | None = None
        self.provider: str | None = None
        self.versions: list[str] = []
        self.resumes: list[dict[str, Any]] = []
        self.parent: str | None = None
        """The thread this one was forked from (``forked_from_id``)."""
        self.inherited_from: int | None = None
        """First line of the parent's copied history (after the parent's ``session_meta``)."""
        self.inherited_to: int | None = None
        """Last line of it (the line before the child's first own ``task_started``)."""
        self.first_own_message: int | None = None
        self.window: int | None = None
        self.window_changes: list[WindowChange] = []

    # -- session_meta -------------------------------------------------------------------

    def session_meta(self, payload: dict[str, Any], line: int, timestamp: str | None) -> bool:
        """Read one ``session_meta``; True when it is the thread's own first one (whose base
        instructions the model sees)."""
        b = self.builder
        sid = payload.get("id")
        if b.session_id is None:
            b.session_id = sid if isinstance(sid, str) else None
            self._first(payload)
            return True
        version = payload.get("cli_version")
        if isinstance(version, str) and version not in self.versions:
            self.versions.append(version)
        if sid == b.session_id:
            self.resumes.append({"line": line, "timestamp": timestamp})
        elif sid is not None and sid == self.parent and self.inherited_from is None:
            self.inherited_from = line + 1
        else:
            b.info(
                line,
                "other-session-meta",
                f"a session_meta of another thread ({sid}) inside this one; "
                "its records are read as this session's",
            )
        return False

    def _first(self, payload: dict[str, Any]) -> None:
        b = self.builder
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and b.project is None:
            b.project = cwd
        ts = payload.get("timestamp")
        if isinstance(ts, str) and b.started_at is None:
            b.started_at = ts
        for key in ("cli_version", "originator", "source", "model_provider", "forked_from_id"):
            value = payload.get(key)
            if value is not None and key not in b.metadata:
                b.metadata[key] = value
        version = payload.get("cli_version")
        if isinstance(version, str):
            self.agent_version = version
            self.versions.append(version)
        provider = payload.get("model_provider")
        if isinstance(provider, str) and provider:
            self.provider = provider
        parent = payload.get("forked_from_id")
        if isinstance(parent, str) and parent:
            self.parent = parent

    # -- turns and windows --------------------------------------------------------------

    def task_started(self, turn_id: Any, window: Any, line: int, next_index: int) -> None:
        """A turn starts (its ``turn_id`` and ``model_context_window`` as the file holds them,
        None when left out): maybe the fork's own first one; maybe another window."""
        if self.inherited_from is not None and self.inherited_to is None:
            own = uuid7_ms(self.builder.session_id)
            turn = uuid7_ms(turn_id)
            if own is not None and turn is not None and turn >= own:
                self.inherited_to = line - 1
                self.first_own_message = next_index
        self.window_at(window, line, next_index)

    def window_at(self, value: Any, line: int, index: int) -> None:
        """A recorded window: the first is the session's, each different later one a change
        from message ``index`` on."""
        if value is None or value == self.window:
            return
        if not plausible(value) or value == 0:
            self.builder.diagnostic(
                line,
                BAD_COUNT,
                f"model_context_window {show_value(value)} is not a window; ignored",
            )
            return
        b = self.builder
        if self.window is None:
            b.context_window = value
            b.window_source = "recorded"
            # Codex's auto-compact limit is 90 % of the model's full window, not of this one.
            b.metadata["model_window"] = value * 100 // CODEX_EFFECTIVE_WINDOW_PERCENT
        else:
            self.window_changes.append(
                WindowChange(message_index=index, context_window=value, source_line=line)
            )
        self.window = value

    # -- result -------------------------------------------------------------------------

    def parent_thread(self) -> str | None:
        """The thread that spawned this one (``source.subagent.thread_spawn.parent_thread_id``,
        else ``forked_from_id``); None for a top-level thread or a review sub-agent."""
        source = self.builder.metadata.get("source")
        spawn = source.get("subagent") if isinstance(source, dict) else None
        if isinstance(spawn, dict) and isinstance(spawn.get("thread_spawn"), dict):
            parent = spawn["thread_spawn"].get("parent_thread_id")
            if isinstance(parent, str) and parent:
                return parent
        return self.parent

    def finish(self, session: Session) -> None:
        """Write the facts into the built session."""
        session.agent_version = self.agent_version
        session.provider = self.provider
        session.window_changes = self.window_changes
        metadata = session.metadata
        if len(self.versions) > 1:
            metadata["cli_versions"] = self.versions
        if self.resumes:
            metadata["resumed"] = self.resumes
        if self.parent is not None:
            metadata["forked_from"] = self.parent
        if self.inherited_from is None:
            return
        if self.inherited_to is None:
            message = (
                f"a sub-agent fork of thread {self.parent}: the parent's history starts at line "
                f"{self.inherited_from}, and no later turn says where the fork's own part "
                "begins; everything is loaded as this session's"
            )
        else:
            lines = self.inherited_to - self.inherited_from + 1
            message = (
                f"a sub-agent fork of thread {self.parent}: lines {self.inherited_from}-"
                f"{self.inherited_to} ({lines} records) are the parent's history copied at the "
                "fork (with the fork's timestamps); loaded as this session's context"
            )
            metadata["forked_history"] = {
                "first_line": self.inherited_from,
                "last_line": self.inherited_to,
                "first_own_message": self.first_own_message,
            }
        session.diagnostics.append(
            Diagnostic(
                line=self.inherited_from,
                severity=Severity.INFO,
                code="forked-history",
                message=message,
            )
        )
