"""A host app and a policy for the view tests (gauge, policy panel, compaction, overflow screens).

Their sessions come from :mod:`sessions`; nothing here needs a sample file.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.message import Message as TextualMessage
from textual.widget import Widget

from core.policy import Policy, get_preset
from tui.screens.policy_path_prompt import ask_policy_path
from tui.widgets.policy_panel import PolicyPanel


def compacting_policy(**update: Any) -> Policy:
    """The seed preset without pruning, so a 60k window makes it compact (not just prune)."""
    policy = get_preset("seed")
    policy.pruning.enabled = False
    return policy.model_copy(update=update) if update else policy


class Host(App[None]):
    """Mounts one widget (it brings its own styles) and records the messages it posts."""

    def __init__(self, widget: Widget) -> None:
        super().__init__()
        self.widget = widget
        self.posted: list[TextualMessage] = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_token_gauge_call_selected(self, message: TextualMessage) -> None:
        self.posted.append(message)

    def on_policy_panel_changed(self, message: TextualMessage) -> None:
        self.posted.append(message)

    def on_policy_panel_path_wanted(self, message: PolicyPanel.PathWanted) -> None:
        # the panel asks its host for a path (the session screen does the same)
        self.posted.append(message)
        ask_policy_path(self, message)

    def on_jump_to_message(self, message: TextualMessage) -> None:
        self.posted.append(message)
