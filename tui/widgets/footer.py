"""The footer of our screens: Textual's, rebuilt only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` re-mounts every key after each focus change and each
``refresh_bindings`` (a dozen times while a session opens, each a round of mounting and
styling), although the keys it shows rarely change. This one coalesces those notices into one
check after the next refresh and rebuilds only when the visible keys (key, label, enabled)
differ from what is on screen.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A :class:`Footer` that is rebuilt only when what it would show changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None
        self._check_pending = False
        self.rebuilds = 0
        """How many times the keys were rebuilt (for tests)."""

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._check_pending:
            self._check_pending = True
            self.call_after_refresh(self._rebuild_if_changed)

    def _visible_keys(self) -> tuple[object, ...]:
        keys = tuple(
            (binding.key, binding.description, binding.action, enabled, tooltip)
            for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (*keys, self.show_command_palette, self.compact)

    async def _rebuild_if_changed(self) -> None:
        self._check_pending = False
        if not self.is_attached:
            return
        visible = self._visible_keys()
        if visible == self._shown:
            return
        self._shown = visible
        self.rebuilds += 1
        await self.recompose()
