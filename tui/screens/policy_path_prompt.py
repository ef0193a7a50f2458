"""The policy panel's path prompt: a TOML path to save the policy to or load one from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

if TYPE_CHECKING:
    from tui.widgets.policy_panel import PolicyPanel

PathKind = Literal["save", "load"]
"""What the path is for: saving the policy there, or loading one from it."""


class PolicyPathPrompt(ModalScreen[str | None]):
    """Ask for a TOML path (save or load); Enter accepts, Esc cancels."""

    CSS_PATH = Path(__file__).with_name("policy_path_prompt.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="policy-path.cancel")
    ]

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


def policy_path_prompt(kind: PathKind, policy_name: str | None) -> PolicyPathPrompt:
    """The prompt the policy panel's save (``ctrl+s``) or load (``ctrl+o``) opens."""
    if kind == "save":
        return PolicyPathPrompt(
            "Save the policy as TOML",
            f"{policy_name or 'policy'}.toml",
            "Enter saves (replacing an existing file), Esc cancels. "
            "API keys are never written, only the name of their variable.",
        )
    return PolicyPathPrompt(
        "Load a policy from TOML",
        "",
        'Enter loads, Esc cancels. A file may start from a preset: base = "pi".',
    )


def ask_policy_path(app: App[Any], event: PolicyPanel.PathWanted) -> None:
    """Answer the policy panel's :class:`~tui.widgets.policy_panel.PolicyPanel.PathWanted`: ask
    for the path, then have the panel save to it or load from it."""
    panel = event.panel

    def chosen(path: str | None) -> None:
        if not path:
            return
        if event.kind == "save":
            panel.save_to(path)
        else:
            panel.load_from(path)

    app.push_screen(policy_path_prompt(event.kind, panel.policy.name), chosen)
