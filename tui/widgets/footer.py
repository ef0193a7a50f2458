"""The footer of our screens: Textual's, rebuilt only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` re-mounts every key after each focus change and each
``refresh_bindings`` (a dozen times while a session opens, each a round of mounting and
styling), although the keys it shows rarely change. This one lets a rebuild through only when
the visible keys (key, label, action, enabled, tooltip) differ from what is on screen, so the
notices that arrive before the next refresh cost one rebuild at most.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer


class KeysFooter(Footer):
    """A :class:`Footer` that is rebuilt only when what it would show changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None
        self.rebuilds = 0
        """How many times the keys were rebuilt (for tests)."""

    def _visible_keys(self) -> tuple[object, ...]:
        keys = tuple(
            (binding.key, binding.description, binding.action, enabled, tooltip)
            for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (*keys, self.show_command_palette, self.compact)

    async def recompose(self) -> None:
        if not self.is_attached:
            return
        visible = self._visible_keys()
        if visible == self._shown:
            return
        self._shown = visible
        self.rebuilds += 1
        await super().recompose()
