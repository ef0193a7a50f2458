"""Textual messages shared between the shell (screens) and the views (gauge, panels, screens).

Widgets post these; the session screen handles them. They carry indices into
``Session.messages`` so no widget has to hold a reference to another.
"""

from __future__ import annotations

from textual.message import Message


class JumpToMessage(Message):
    """Ask the session screen to select (and scroll to) one message."""

    def __init__(self, message_index: int) -> None:
        super().__init__()
        self.message_index = message_index
        """Index into ``Session.messages``."""
