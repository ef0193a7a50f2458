"""Command palette (ctrl+p): every action of the session screen, presets, and jumps by number.

Typing a number offers "Jump to call N" and "Jump to message N" (both numbered from 0, as
everywhere); the rest is fuzzy-matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from core.policy import PRESETS, get_preset
from tui.screens.session import SessionScreen

_NUMBER = re.compile(r"(?:(call|message|msg|#)\s*)?(\d+)\s*$", re.IGNORECASE)


class CtxscopeCommands(Provider):
    """The commands of ctxscope."""

    def _session_screen(self) -> SessionScreen | None:
        screen = self.screen
        return screen if isinstance(screen, SessionScreen) else None

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app = self.app
        commands: list[tuple[str, Callable[[], Any], str]] = [
            ("Toggle theme (light / dark)", partial(app.run_action, "toggle_theme"), "t"),
            ("Help: keys and legends", partial(app.run_action, "help"), "?"),
        ]
        screen = self._session_screen()
        if screen is None:
            return commands
        commands += [
            (
                "Open the overflow view",
                screen.action_overflow,
                "o: first overflow, top contributors",
            ),
            (
                "Compaction on the selected message",
                screen.action_compaction,
                "c: run compaction now, see head/tail and the summary",
            ),
            ("Toggle the policy panel", screen.action_toggle_policy, "p"),
            ("Next compaction", screen.action_next_compaction, "]"),
            ("Previous compaction", screen.action_prev_compaction, "["),
            ("Search messages", screen.action_search, "/"),
            ("Follow the end of the file (live)", screen.action_follow, "f"),
            ("Set the context window", screen.action_set_window, "w"),
            ("Cancel the running replay", screen.action_cancel, "x"),
            ("Back to the session picker", screen.action_back, "esc"),
            ("Jump to the first message", partial(screen.select_message, 0), "g"),
            (
                "Jump to the last message",
                lambda: screen.select_message(
                    max((screen.state.message_count if screen.state else 1) - 1, 0)
                ),
                "G",
            ),
        ]
        for name, preset in PRESETS.items():
            commands.append(
                (
                    f"Switch preset: {name}",
                    partial(screen.set_policy, get_preset(name)),
                    preset.description[:100],
                )
            )
        if screen.inferred is not None:
            inferred = screen.inferred.policy
            commands.append(
                (
                    "Switch preset: inferred",
                    partial(screen.set_policy, inferred),
                    inferred.description[:100],
                )
            )
        return commands

    async def discover(self) -> Hits:
        for text, command, help_text in self._commands():
            yield DiscoveryHit(text, command, help=help_text)

    async def search(self, query: str) -> Hits:
        screen = self._session_screen()
        number = _NUMBER.match(query.strip())
        if screen is not None and number is not None and screen.state is not None:
            kind = (number.group(1) or "").lower()
            value = int(number.group(2))
            state = screen.state
            if kind in ("", "call") and value < state.call_count:
                message_index = state.message_for_call(value)
                if message_index is not None:
                    yield Hit(
                        1.0,
                        f"Jump to call {value}",
                        partial(screen.select_message, message_index),
                        help=f"model call {value} is message {message_index}",
                    )
            if kind in ("", "message", "msg", "#") and value < state.message_count:
                yield Hit(
                    0.95,
                    f"Jump to message {value}",
                    partial(screen.select_message, value),
                    help="select the message with this index",
                )
        matcher = self.matcher(query)
        for text, command, help_text in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), command, text=text, help=help_text)
