"""The session screen: its keys, and what they open (overflow, compaction, search).

The layers below hold the rest: :mod:`.view` (state, widgets, selection), :mod:`.replaying`
(the replay worker, the policy and the window), :mod:`.live_tail` (following a growing file) and
:mod:`.loading` (reading the file, a big one in two steps).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.widgets import Input
from textual.worker import get_current_worker

from core.formats.subagents import child_paths
from core.model.session import Session
from core.model.tokens import message_text
from tui.screens.overflow import OverflowScreen
from tui.screens.session.loading import LoadingSession
from tui.screens.session.worker_messages import SearchDone


class SessionScreen(LoadingSession):
    """One session: list, gauge, detail, policy. Dismisses with an error text if it cannot load.

    It owns the workers: loading (``load``), replaying (``replay``, one at a time, cancellable
    with a ``threading.Event``), searching (``search``), and the live tail (``live`` watches,
    ``live-load`` reloads). Widgets post messages here; the screen updates the shared
    :class:`~tui.screen_state.SessionState` and tells each widget to redraw.
    """

    CSS_PATH = Path(__file__).with_name("session.tcss")
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (Screen declares it)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (Screen declares it)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "overflow", "Overflow"),
        Binding("c", "compaction", "Compact"),
        Binding("p", "toggle_policy", "Policy"),
        Binding("b", "toggle_breakdown", "Breakdown"),
        Binding(
            "left_square_bracket", "prev_compaction", "Prev compaction", key_display="[", show=False
        ),
        Binding("right_square_bracket", "next_compaction", "Compaction", key_display="]"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("n", "next_match", "Next match", show=False),
        Binding("N", "prev_match", "Prev match", show=False),
        Binding("f", "follow", "Follow"),
        Binding("w", "set_window", "Window", show=False),
        Binding("x", "cancel", "Cancel", show=False),
        Binding("tab", "app.focus_next", "Focus", show=False),
        Binding("a", "subagents", "Sub-agents", id="session.subagents"),
        Binding("escape", "back", "Back"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what does not apply: follow without a live file; greyed while nothing is loaded."""
        if action == "follow":  # the tail is watched once the whole file is read
            return self._live_file is not None and not self.partial
        if action in ("overflow", "compaction", "next_compaction", "prev_compaction"):
            if self.partial:  # they need the replay of the whole session
                return None
            return True if self.state is not None and self.state.message_count else None
        if action == "subagents":  # only a session that started sub-agents
            return self.state is not None and bool(child_paths(self.state.session))
        if action in ("search", "toggle_breakdown"):
            return True if self.state is not None and self.state.message_count else None
        return True

    # -- overflow and compaction ---------------------------------------------------------------------

    def action_overflow(self) -> None:
        state = self.state
        if state is None:
            return

        def jump(index: int | None) -> None:
            if index is not None:
                self.select_message(index)

        self.app.push_screen(OverflowScreen(state.session, state.result), jump)

    def action_compaction(self) -> None:
        state = self.state
        index = self.message_list.selected_message
        if state is None or index is None:
            return
        # imported on first use: it brings the compaction engine and the LLM clients (~60 ms)
        from tui.screens.compaction import CompactionScreen

        replayer = self._replayer if self._replayer_session is state.session else None
        self.app.push_screen(
            CompactionScreen(
                state.session,
                state.policy,
                index,
                state.result,
                replayer=replayer,
                insights=state.insights,
            )
        )

    def _step_compaction(self, step: int) -> None:
        state = self.state
        if state is None:
            return
        events = state.compaction_events()
        if not events:
            self.app.notify("No compaction in this session under this policy.")
            return
        current = self.message_list.selected_message or 0
        if step > 0:
            candidates = [e for e in events if e[1] > current]
            target = candidates[0] if candidates else None
        else:
            candidates = [e for e in events if e[1] < current]
            target = candidates[-1] if candidates else None
        if target is None:
            self.app.notify("No further compaction that way.", timeout=2)
            return
        event_id, message_index = target
        event = state.event(event_id)
        if event is not None and event.kind == "compact":
            state.active_event = event_id
            state.rebuild()
            self.message_list.rows_changed()
        self.select_message(message_index)
        if event is not None:
            self.app.notify(
                event.reason, title=f"{event.kind} at message {message_index}", timeout=4
            )

    def action_move_call(self, step: int) -> None:
        """← / → from the list or the detail pane: the previous / next model call (as the
        gauge's own keys do)."""
        if self.state is not None and self.state.call_count:
            self.gauge.action_move(step)

    def action_prev_compaction(self) -> None:
        self._step_compaction(-1)

    def action_next_compaction(self) -> None:
        self._step_compaction(1)

    # -- search --------------------------------------------------------------------------------------

    def action_search(self) -> None:
        bar = self.query_one("#search-bar")
        bar.display = True
        field = self.query_one("#search-input", Input)
        if self.state is not None:
            field.value = self.state.search_text
        field.focus()

    @on(Input.Submitted, "#search-input")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.query_one("#search-bar").display = False
        self.message_list.focus()
        if self.state is None:
            return
        if not text:
            self.state.set_matches("", [])
            self.message_list.restyle()
            self.status.show(self.state)
            return
        self.status.activity(f"searching “{text}”…", busy=True)
        self._search(self.state.session, text)

    @work(
        thread=True,
        exclusive=True,
        group="search",
        exit_on_error=False,
        description="Searching messages",
    )
    def _search(self, session: Session, text: str) -> None:
        worker = get_current_worker()
        needle = text.casefold()
        matches: list[int] = []
        for message in session.messages:
            if worker.is_cancelled:
                return
            if needle in message_text(message).casefold():
                matches.append(message.index)
        self.post_message(SearchDone(text, matches))

    def on_search_done(self, event: SearchDone) -> None:
        state = self.state
        if state is None:
            return
        state.set_matches(event.text, event.matches)
        self.message_list.restyle()
        self.status.show(state)
        self._show_activity()
        if not event.matches:
            self.app.notify(f"No message contains “{event.text}”.", timeout=3)
            return
        self.action_next_match(inclusive=True)

    def action_next_match(self, inclusive: bool = False) -> None:
        state = self.state
        if state is None or not state.matches:
            return
        current = self.message_list.selected_message or 0
        following = [m for m in state.matches if m > current or (inclusive and m == current)]
        target = following[0] if following else state.matches[0]
        self.select_message(target)

    def action_prev_match(self) -> None:
        state = self.state
        if state is None or not state.matches:
            return
        current = self.message_list.selected_message or 0
        before = [m for m in state.matches if m < current]
        self.select_message(before[-1] if before else state.matches[-1])

    # -- navigation --------------------------------------------------------------------------------

    def action_subagents(self) -> None:
        """Pick one of the session's sub-agents; it opens on a session screen of its own."""
        if self.state is not None:
            from tui.screens.subagents import open_subagents

            open_subagents(self, self.state.session)

    def action_back(self) -> None:
        bar = self.query_one("#search-bar")
        if bar.display:
            bar.display = False
            self.message_list.focus()
            return
        if self.query_one("#policy-slot").display:
            self._show_policy(False)
            return
        self.dismiss(None)

    def on_unmount(self) -> None:
        self._live_stop.set()
        if self._replay_cancel is not None:
            self._replay_cancel.set()
