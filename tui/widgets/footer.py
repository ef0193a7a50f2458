"""The footer of our screens: Textual's, rebuilt only when the keys it shows change, and fitted
to its width by priority.

Textual's :class:`~textual.widgets.Footer` re-mounts every key after each focus change and each
``refresh_bindings`` (a dozen times while a session opens, each a round of mounting and
styling), although the keys it shows rarely change. This one lets a rebuild through only when
the visible keys (key, label, action, enabled, tooltip) differ from what is on screen, so the
notices that arrive before the next refresh cost one rebuild at most.

Where the keys do not all fit (80 columns), Textual's footer cuts the row at the right edge, so
the app's own keys (quit, help), which come last, are the first to go. This one leaves keys out
by priority instead (:func:`keys_to_hide`): quit, help and back are kept first, then the keys in
the order their screen declares them; the least important go first and the rest keep their
places. A footer made with ``rows=2`` (the picker's) puts its keys on two rows instead, in
columns, when they do not fit on one and do on two (:func:`two_rows`); only then does it leave
keys out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ESSENTIAL_ACTIONS = ("quit", "help", "back")
"""The actions whose keys are left out last, in this order (the palette's key is docked apart)."""


def keys_to_hide(actions: Sequence[str], widths: Sequence[int], room: int) -> set[int]:
    """Which keys (positions in ``actions``) to leave out so that the ``widths`` of the rest fit
    in ``room`` cells: the last declared first, the :data:`ESSENTIAL_ACTIONS` last of all."""

    def rank(position: int) -> tuple[int, int]:
        action = actions[position].rsplit(".", 1)[-1]
        if action in ESSENTIAL_ACTIONS:
            return (0, ESSENTIAL_ACTIONS.index(action))
        return (1, position)

    hidden: set[int] = set()
    total = sum(widths)
    for position in sorted(range(len(actions)), key=rank, reverse=True):
        if total <= room:
            break
        hidden.add(position)
        total -= widths[position]
    return hidden


def two_rows(widths: Sequence[int], room: int) -> int | None:
    """The columns of a grid of two rows that holds keys of ``widths`` (in order, row by row)
    within ``room`` cells, each column as wide as its wider key; None: they do not fit."""
    columns = (len(widths) + 1) // 2
    total = sum(
        max(widths[c], widths[c + columns] if c + columns < len(widths) else 0)
        for c in range(columns)
    )
    return columns if total <= room else None


class KeysFooter(Footer):
    """A :class:`Footer` that is rebuilt only when what it would show changed, and that leaves
    keys out by priority where they do not all fit (with ``rows=2``, it takes a second row
    first)."""

    def __init__(self, *args: Any, rows: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows = rows
        """The rows the footer may take when its keys do not fit on one (1 or 2)."""
        self._shown: tuple[object, ...] | None = None
        self.rebuilds = 0
        """How many times the keys were rebuilt (for tests)."""
        self.hidden_keys: tuple[str, ...] = ()
        """The keys left out for want of room (for tests)."""

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
        if self._shown is not None and _same_but_enabled(self._shown, visible):
            # only keys greyed or no longer greyed (a session read whole, a replay ended): the
            # keys on screen are restyled, not mounted again (a mount and two layouts)
            self._shown = visible
            self._set_enabled(visible)
            return
        self._shown = visible
        self.rebuilds += 1
        await super().recompose()
        self.call_after_refresh(self.fit_keys)

    def _set_enabled(self, visible: tuple[object, ...]) -> None:
        """Grey the keys on screen whose action is disabled in ``visible`` (as a rebuild would:
        an action's first binding decides), and only those."""
        enabled: dict[str, bool] = {}
        for item in visible:
            if isinstance(item, tuple):
                _key, _description, action, is_enabled, _tooltip = item
                enabled.setdefault(action, is_enabled)
        for key in self.query(FooterKey):
            if key.action in enabled:
                disabled = not enabled[key.action]
                key._disabled = disabled  # (what a click reads: Textual's FooterKey keeps it so)
                key.set_class(disabled, "-disabled")

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.fit_keys)

    def fit_keys(self) -> None:
        """Show the keys that fit the footer's width, leaving out the least important."""
        if not self.is_attached or not self.size.width:
            return
        keys = [key for key in self.query_children(FooterKey)]
        docked = [key for key in keys if key.has_class("-command-palette")]
        row = [key for key in keys if not key.has_class("-command-palette")]
        room = self.size.width - sum(_width(key) for key in docked)
        widths = [_width(key) for key in row]
        columns = two_rows(widths, room) if self.rows > 1 and sum(widths) > room else None
        self._lay_out(columns)
        hidden = set() if columns else keys_to_hide([key.action for key in row], widths, room)
        for position, key in enumerate(row):
            key.display = position not in hidden
        self.hidden_keys = tuple(row[p].key for p in sorted(hidden))

    def _lay_out(self, columns: int | None) -> None:
        """One row (None), or a grid of two rows of ``columns`` columns."""
        styles = self.styles
        if columns is None:
            if styles.layout is not None and styles.layout.name == "grid":
                styles.layout = "horizontal"
                styles.height = 1
            return
        styles.layout = "grid"
        styles.grid_size_columns = columns
        styles.grid_columns = "auto"
        styles.grid_rows = "1"
        styles.height = 2


def _width(key: FooterKey) -> int:
    """The cells a footer key takes: its text, padding, border and margins."""
    margin = key.styles.margin
    return cell_len(key.render().plain) + key.styles.gutter.width + margin.left + margin.right


def _same_but_enabled(shown: tuple[object, ...], visible: tuple[object, ...]) -> bool:
    """``visible`` shows the keys ``shown`` does (same keys, labels, actions and tooltips, in the
    same order), only some enabled or disabled otherwise."""
    if len(shown) != len(visible):
        return False
    for old, new in zip(shown, visible, strict=True):
        if isinstance(old, tuple) and isinstance(new, tuple):
            if old[:3] != new[:3] or old[4:] != new[4:]:
                return False
        elif old != new:
            return False
    return True
