"""The session screen's live-tail controller: watch the file, read it again as it grows, and follow
its end while the user is at the end (or asked to follow with ``f``).

The watcher is an async worker (group ``live``, :func:`tui.growing_file.watch_file`); each growth
re-reads the file in a thread worker (group ``live-load``), and the re-read session takes the
place of the shown one with the selection kept; the screen hears :class:`ReplayWanted`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from core.formats import LoadError, load_session
from tui.growing_file import LiveFile, watch_file
from tui.screens.session.controller import Controller
from tui.screens.session.heap import freeze_heap
from tui.screens.session.prepared import prepare
from tui.screens.session.worker_messages import LiveProblem, LiveReloaded, ReplayWanted

if TYPE_CHECKING:
    from tui.screens.session.view import SessionView


class LiveTail(Controller):
    """Follows a session file that is still being written."""

    def __init__(self, view: SessionView) -> None:
        super().__init__(view)
        self._stop = threading.Event()

    def start(self) -> None:
        """Watch the file (once the whole of it is shown), if it is one and live is on."""
        view = self.view
        if view.live_enabled and view.path and Path(view.path).is_file():
            if view.live_file is None:
                view.live_file = LiveFile(Path(view.path))
            self._watch(view.live_file)
            view.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False, description="Watching the file")
    async def _watch(self, live_file: LiveFile) -> None:
        async for change in watch_file(live_file, stop=self._stop):
            if change.kind == "grew":
                self._live_reload(live_file.path)
            elif change.kind == "deleted":
                self.view.post_message(
                    LiveProblem(
                        f"{live_file.path.name} was deleted: live tail stopped, the loaded "
                        "session stays on screen.",
                        stop_tail=True,
                    )
                )
                return
            else:  # truncated or rotated: the file is a new one, reload it whole
                self.view.post_message(
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
        state = self.view.state
        fmt = state.session.format if state is not None else None
        try:
            session = load_session(path, format=fmt, window=self.view.window_asked)
            # (here, not on the interface thread; the gauge draws the result shown until the
            # replay that follows, unless there is none yet)
            prepared = prepare(session, recorded=state is None or state.result is None)
            freeze_heap()
        except (LoadError, OSError) as exc:
            self.view.post_message(LiveProblem(f"live reload failed: {exc}", stop_tail=False))
            return
        except Exception as exc:
            self.view.post_message(
                LiveProblem(f"live reload failed: {type(exc).__name__}: {exc}", stop_tail=False)
            )
            return
        self.view.post_message(LiveReloaded(session, prepared))

    def live_reloaded(self, event: LiveReloaded) -> None:
        if self.view.state is None:
            return
        self.view.apply_grown_session(event.session, event.prepared)
        self.view.tell(ReplayWanted())

    def live_problem(self, event: LiveProblem) -> None:
        view = self.view
        self.app.notify(event.text, title="Live tail", severity="warning", timeout=6)
        if event.stop_tail:
            view.live_status = "live tail stopped"
            view.live_file = None
            view.refresh_bindings()
        view.show_activity()

    def toggle_follow(self) -> None:
        """``f``: follow the end of the file (or stop following it)."""
        view = self.view
        view.follow = not view.follow
        if view.follow and view.state is not None and view.state.message_count:
            view.select_message(view.state.message_count - 1, center=False)
        view.show_activity()
        self.app.notify(
            "Following the end of the file." if view.follow else "Follow off.", timeout=2
        )

    def on_unmount(self) -> None:
        self._stop.set()
