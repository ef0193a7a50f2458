"""The session screen's live-tail layer: watch the file, read it again as it grows, and follow
its end while the user is at the end (or asked to follow with ``f``).

The watcher is an async worker (group ``live``, :func:`tui.growing_file.watch_file`); each growth
re-reads the file in a thread worker (group ``live-load``), and the re-read session takes the
place of the shown one with the selection kept.
"""

from __future__ import annotations

from pathlib import Path

from textual import work

from core.formats import LoadError, load_session
from core.model.session import Session
from tui.growing_file import LiveFile, watch_file
from tui.screens.session.heap import freeze_heap
from tui.screens.session.insights import InsightsSession
from tui.screens.session.worker_messages import LiveProblem, LiveReloaded


class LiveSession(InsightsSession):
    """Follows a session file that is still being written."""

    def _start_live(self) -> None:
        if self._live_enabled and self.path and Path(self.path).is_file():
            if self._live_file is None:
                self._live_file = LiveFile(Path(self.path))
            self._watch(self._live_file)
            self.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False, description="Watching the file")
    async def _watch(self, live_file: LiveFile) -> None:
        async for change in watch_file(live_file, stop=self._live_stop):
            if change.kind == "grew":
                self._live_reload(live_file.path)
            elif change.kind == "deleted":
                self.post_message(
                    LiveProblem(
                        f"{live_file.path.name} was deleted: live tail stopped, the loaded "
                        "session stays on screen.",
                        stop_tail=True,
                    )
                )
                return
            else:  # truncated or rotated: the file is a new one, reload it whole
                self.post_message(
                    LiveProblem(
                        f"{live_file.path.name} was {change.kind}: reloading it.", stop_tail=False
                    )
                )
                self._live_reload(live_file.path)

    @work(
        thread=True,
        exclusive=True,
        group="live-load",
        exit_on_error=False,
        description="Re-reading the grown file",
    )
    def _live_reload(self, path: Path) -> None:
        state = self.state
        fmt = state.session.format if state is not None else None
        try:
            session = load_session(path, format=fmt, window=self._window)
            freeze_heap()
        except (LoadError, OSError) as exc:
            self.post_message(LiveProblem(f"live reload failed: {exc}", stop_tail=False))
            return
        except Exception as exc:
            self.post_message(
                LiveProblem(f"live reload failed: {type(exc).__name__}: {exc}", stop_tail=False)
            )
            return
        self.post_message(LiveReloaded(session))

    def on_live_reloaded(self, event: LiveReloaded) -> None:
        self.apply_grown_session(event.session)

    def apply_grown_session(self, session: Session, *, replay: bool = True) -> None:
        """The file grew: take the re-read session, keep the selection, follow the end if asked.

        The list keeps its rows and cursor; rows beyond the old count are appended and the last
        old row is repainted (a format that writes one message over several lines may have
        extended it).
        """
        state = self.state
        if state is None:
            return
        old_count = state.message_count
        was_at_end = self.message_list.at_end
        selected = self.message_list.selected_message
        previous = state.session
        if previous.context_window and (
            session.context_window is None or previous.window_source == "user"
        ):  # keep a window the user set (w) or one the first load had
            session.context_window = previous.context_window
            session.window_source = previous.window_source
        state.session = session
        state.rebuild()
        self.message_list.rows_changed()
        new_count = state.message_count
        if (self.follow or was_at_end) and new_count:
            self.message_list.select_message(new_count - 1)
            self.detail.show(new_count - 1, force=True)
        elif selected is not None and selected < new_count:
            self.message_list.select_message(selected)
            if selected >= old_count - 1:
                self.detail.show(selected, force=True)
        self.gauge.update_result(session, state.result)
        self._refresh_chrome()
        if replay:
            self.start_replay()

    def on_live_problem(self, event: LiveProblem) -> None:
        self.app.notify(event.text, title="Live tail", severity="warning", timeout=6)
        if event.stop_tail:
            self.live_status = "live tail stopped"
            self._live_file = None
            self.refresh_bindings()
        self._show_activity()

    def action_follow(self) -> None:
        self.follow = not self.follow
        if self.follow and self.state is not None and self.state.message_count:
            self.select_message(self.state.message_count - 1, center=False)
        self._show_activity()
        self.app.notify(
            "Following the end of the file." if self.follow else "Follow off.", timeout=2
        )
