"""A context window's change during a session (:attr:`core.model.session.Session.window_changes`):
a module of its own, imported when a loader records one (Codex), so that a command on another
agent's session does not create its class."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WindowChange(BaseModel):
    """The window changed during the session (Codex records it per turn)."""

    model_config = ConfigDict(defer_build=True)  # (as the session's other models)

    message_index: int
    """The first message the new window applies to."""
    context_window: int
    """The window from there on, in tokens."""
    source_line: int | None = None
    """1-based line of the record that says so."""
