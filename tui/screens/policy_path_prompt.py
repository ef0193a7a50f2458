"""The policy panel's path prompt: a TOML path to save the policy to or load one from."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class PolicyPathPrompt(ModalScreen[str | None]):
    """Ask for a TOML path (save or load); Enter accepts, Esc cancels."""

    CSS_PATH = Path(__file__).with_name("policy_path_prompt.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str, hint: str) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="pp-prompt"):
            yield Label(self._title, id="pp-prompt-title")
            yield Input(value=self._value, placeholder="policy.toml", id="pp-prompt-input")
            yield Label(self._hint, id="pp-prompt-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
