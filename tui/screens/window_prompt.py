"""The dialog that asks for the context window when a session does not record one (``w``)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class WindowPrompt(ModalScreen[int | None]):
    """Ask for the context window when the session does not record one."""

    CSS_PATH = Path(__file__).with_name("window_prompt.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="window-prompt.cancel")
    ]

    def __init__(self, model: str | None, current: int | None) -> None:
        super().__init__()
        self._model = model
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="window-dialog", classes="dialog"):
            yield Label("Context window", classes="dialog-title")
            model = self._model or "this model"
            yield Label(f"Tokens {model} can hold (e.g. 200000). Enter to apply, Esc to cancel.")
            yield Input(
                value=str(self._current) if self._current else "",
                placeholder="200000",
                type="integer",
                id="window-input",
            )
            yield Label("", id="window-error", classes="error-text")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.replace(",", "").replace("_", "").strip()
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value <= 0:
            self.query_one("#window-error", Label).update("A positive number of tokens, please.")
            return
        self.dismiss(value)
