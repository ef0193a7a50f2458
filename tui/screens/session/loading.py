"""The session screen's loading controller: reading the file and showing the session as soon as
it can.

A file up to :data:`PREVIEW_MIN_BYTES` is read in one go behind a progress box. A bigger one is
opened in two steps, in the same worker (group ``load``): its first :data:`PREVIEW_BYTES` are
read and shown (with the progress box shrunk to a strip), then the whole file is read and takes
the first part's place with the selection kept. Either way, the list is painted first; the
gauge starts right after that first frame, and the screen hears :class:`SessionShown` (it starts
the replay and the live tail).

The reading itself runs in a daemon thread the worker waits on (:func:`abandonable`): a load can
always be cancelled (``x``, Esc) and the app always quits, even with a read stuck in the kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.worker import Worker, get_current_worker

from core.formats import LoadError, load_session, load_session_head
from core.model.session import Session
from core.model.write_numbers import format_bytes
from tui.growing_file import LiveFile
from tui.malloc_arenas import release_free_memory
from tui.screen_state import SessionState, policy_for
from tui.screens.session.controller import Controller
from tui.screens.session.heap import collect_thawed, freeze_heap
from tui.screens.session.prepared import Prepared, prepare
from tui.screens.session.worker_messages import (
    FirstPartLoaded,
    LoadFailed,
    LoadProgressed,
    ReplayWanted,
    SessionLoaded,
    SessionShown,
    Throttle,
)
from tui.widgets.load_progress import LoadProgress

if TYPE_CHECKING:
    from tui.screens.session.view import SessionView

FIRST_PAINT_DELAY_S = 0.05
"""The replay and the gauge start this long after the session is installed: after its first frame."""
PREVIEW_MIN_BYTES = 8_000_000
"""A file bigger than this is shown in two steps: its first part, then the whole of it."""
PREVIEW_BYTES = 1_000_000
"""How much of a big file the first part is (about 1,000 small messages, 30 ms to read)."""
PREVIEW_PAINT_WAIT_S = 1.0
"""The rest of a big file is read once its first part is painted, or after this long."""
PART_PROGRESS_INTERVAL_S = 0.5
"""How often the strip above a first part says how much of the rest is read (each report is a
layout and a few frames the UI thread draws while the loader thread wants the interpreter; the
progress box alone, with nothing else to look at, is updated every
:data:`~tui.screens.session.worker_messages.PROGRESS_INTERVAL_S`)."""


class LoadCancelled(Exception):
    """Raised from the loader's progress callback once the load is cancelled."""


async def abandonable(work: Callable[[], None], *, name: str) -> None:
    """Run ``work`` in a daemon thread; return when it is done, or at once when the (async)
    worker awaiting this is cancelled.

    A thread worker runs in the event loop's executor, whose threads the app waits for when it
    exits: a read stuck in the kernel (a FIFO put in place of the file, a network mount that
    went away) would keep ``q`` from ever quitting. Here the worker only awaits, and gives up
    when it is cancelled (the screen closed, ``x``, the app quitting); the stuck read is left to
    a daemon thread, which never keeps the process alive. ``work`` runs in a copy of the
    worker's context, so :func:`get_current_worker` works there too.

    Nothing polls: the thread resolves a future of the event loop when it is done. (A thread
    worker waiting on it woke every 50 ms, each time taking the interpreter from the loader:
    ~80 context switches a second of a 100 MB load.)"""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    context = contextvars.copy_context()

    def finished() -> None:
        if not done.done():  # (cancelled meanwhile)
            done.set_result(None)

    def target() -> None:
        try:
            context.run(work)
        finally:
            with contextlib.suppress(RuntimeError):  # the app is gone: no one waits
                loop.call_soon_threadsafe(finished)

    threading.Thread(target=target, name=name, daemon=True).start()
    await done


class SessionLoader(Controller):
    """Opens a session: from a file (read in a worker) or a :class:`Session` given directly."""

    def __init__(self, view: SessionView) -> None:
        super().__init__(view)
        self.reading = False
        """The file is being read (the progress box, or the strip under a first part, shows)."""
        self.load_seconds: float | None = None
        self.preview_seconds: float | None = None
        self.after_paint_pending = False
        """The gauge and the replay are about to start (right after the first frame)."""
        self._preview_painted = threading.Event()
        """Set once the first part's frame is out: the rest of the load waits for it (the two
        would share one interpreter, and the first frame matters more)."""

    def begin(self, path: str) -> None:
        """Start reading ``path`` (from the screen's compose: mounting overlaps with the read)."""
        view = self.view
        if view.live_enabled and Path(path).is_file():
            # the offset is taken before reading, so growth during the load is not missed
            view.live_file = LiveFile(Path(path))
        self.reading = True
        self._load(path, view.window_asked)

    def show_progress(self, path: str) -> None:
        """Show the progress box while the file is read (once the screen is mounted)."""
        if not self.reading:
            return
        progress = self.view.query_one(LoadProgress)
        try:
            size: int | None = Path(path).stat().st_size
        except OSError:
            size = None
        progress.remove_class("-strip")
        progress.start(path, size)
        progress.display = True
        self._show_reading(True)
        self.view.status.activity(f"loading {format_bytes(size)}…", busy=True)

    def _show_reading(self, reading: bool) -> None:
        """While a file is read, the progress box is all there is (toggled per widget: a class
        on the screen would restyle every widget in it, twice per load)."""
        self.view.query_one("#gauge-slot").display = not reading
        self.view.query_one("#body").display = not reading

    # -- reading the file ------------------------------------------------------------------------

    @work(
        exclusive=True,
        group="load",
        exit_on_error=False,
        description="Loading the session",
    )
    async def _load(self, path: str, window: int | None) -> None:
        worker = get_current_worker()
        await abandonable(lambda: self._read(path, window, worker), name="ctxscope-load")

    def _read(self, path: str, window: int | None, worker: Worker[None]) -> None:
        """Read the file (its first part, then the whole) and post what came of it."""
        collect_thawed()  # (a session closed before: freed before this one is read)
        head = self._load_head(path, window)
        # under a first part the strip is updated less often: the user reads the messages
        shown = head is not None and bool(head.messages)
        throttle = Throttle(PART_PROGRESS_INTERVAL_S) if shown else Throttle()

        def progress(bytes_read: int, total_bytes: int, messages: int) -> None:
            if worker.is_cancelled:
                raise LoadCancelled()  # stops a loader that reports progress, at its next report
            if throttle.ready():
                self.view.post_message(LoadProgressed(bytes_read, total_bytes, messages))

        started = time.perf_counter()
        try:
            fmt = head.format if head is not None else None  # detected once, for both reads
            session = load_session(path, format=fmt, window=window, progress=progress)
        except LoadCancelled:
            return
        except LoadError as exc:
            self.view.post_message(LoadFailed(str(exc)))
            return
        except OSError as exc:
            self.view.post_message(LoadFailed(f"{path}: cannot read ({exc.strerror or exc})"))
            return
        except Exception as exc:  # a loader bug must not take the UI down
            self.view.post_message(
                LoadFailed(f"{path}: could not load ({type(exc).__name__}: {exc})")
            )
            return
        seconds = time.perf_counter() - started
        prepared = prepare(session, replayed=True)  # (here, not on the interface thread)
        release_free_memory()  # (the reader's buffers: of no use to the replay's small objects)
        freeze_heap()  # before the UI thread touches it: no full collection on the first frame
        if not worker.is_cancelled:
            self.view.post_message(SessionLoaded(session, seconds, prepared))

    def cancel(self) -> bool:
        """``x`` while the file is read stops reading it (a first part already shown stays).
        False when nothing is being read."""
        if not self.reading:
            return False
        self.workers.cancel_group(self, "load")
        self.load_failed(LoadFailed(f"{self.view.path}: loading cancelled"))
        return True

    def _load_head(self, path: str, window: int | None) -> Session | None:
        """Read and post the first part of a big file (in the load worker, before the rest)."""
        try:
            if Path(path).stat().st_size <= PREVIEW_MIN_BYTES:
                return None
        except OSError:
            return None  # the whole load says what is wrong
        started = time.perf_counter()
        try:
            head = load_session_head(path, PREVIEW_BYTES, window=window)
        except Exception:  # no first part then: the whole load reports what is wrong
            return None
        if head is not None and head.messages and not get_current_worker().is_cancelled:
            self._preview_painted.clear()
            prepared = prepare(head)
            self.view.post_message(FirstPartLoaded(head, time.perf_counter() - started, prepared))
            self._preview_painted.wait(PREVIEW_PAINT_WAIT_S)
        return head

    def load_progressed(self, event: LoadProgressed) -> None:
        if self.reading:
            self.view.query_one(LoadProgress).update_progress(
                event.bytes_read, event.total_bytes, event.messages
            )

    def load_failed(self, event: LoadFailed) -> None:
        view = self.view
        self.reading = False
        self._show_reading(False)
        if view.partial and view.state is not None:
            # the first part is shown: keep it (and say it is only that) rather than lose it
            view.partial = False
            view.query_one(LoadProgress).display = False
            self.app.notify(
                f"{event.error}. Showing only the first {view.state.message_count:,} messages.",
                title="Could not read the whole session",
                severity="error",
                timeout=10,
            )
            view.live_status = "first part only"
            view.refresh_bindings()
            view.refresh_chrome()
            view.tell(ReplayWanted())
            return
        view.dismiss(event.error)  # the app shows it once (the picker's line and one notice)

    # -- a big file in two steps -------------------------------------------------------------------

    def first_part_loaded(self, event: FirstPartLoaded) -> None:
        view = self.view
        if not self.reading or view.state is not None:
            self._preview_painted.set()
            return
        view.partial = True
        self.preview_seconds = event.seconds
        self._show_reading(False)
        view.query_one(LoadProgress).add_class("-strip")
        view.query_one(LoadProgress).showing_part(len(event.session.messages))
        self.install(event.session, event.prepared)
        view.after_list_painted(self._preview_painted.set)

    def session_loaded(self, event: SessionLoaded) -> None:
        if not self.reading:
            return  # cancelled meanwhile
        view = self.view
        self.reading = False
        self._show_reading(False)
        self.load_seconds = event.seconds
        view.query_one(LoadProgress).display = False
        if view.partial and view.state is not None:
            self._complete(event.session, event.prepared)
        else:
            self.install(event.session, event.prepared)

    def _complete(self, session: Session, prepared: Prepared | None) -> None:
        """The whole file is read: it takes the place of its first part (selection kept)."""
        view = self.view
        view.partial = False
        self.after_paint_pending = True  # (the detail pane's slow facts wait, as for a first one)
        view.apply_grown_session(session, prepared)
        selected = view.message_list.selected_message
        if selected is not None:
            # the first part's last messages may have changed (a reply cut by the head)
            view.detail.show(selected, force=True)
        view.refresh_bindings()
        self._first_look(session)
        # The replay starts now, not after the whole list's frame: the first frame is out (the
        # first part's), and the frame that matters next is the replay's. Waiting for this one
        # left the interpreter idle between the two (the frame timer, the paint poll).
        view.tell(SessionShown(session))
        self.after_paint_pending = False  # (the notice keeps the session opening until heard)

    # -- showing the session -----------------------------------------------------------------------

    def install(self, session: Session, prepared: Prepared | None = None) -> None:
        """Show ``session`` (a first part, the whole file or a session given directly;
        ``prepared``: what the worker that read it worked out beside it)."""
        view = self.view
        self.after_paint_pending = True  # (from here: the detail pane's slow facts wait for it)
        policy = policy_for(session, view.initial_policy)
        window = view.window_asked
        if window is not None and session.context_window != window:
            session.context_window = window
            session.window_source = "user"
        view.state = SessionState(session, policy, table=prepared.table if prepared else None)
        view.refresh_bindings()
        view.message_list.set_state(view.state)
        view.detail.set_state(view.state)
        view.refresh_chrome()
        if session.messages:
            view.message_list.select_message(0)
            view.detail.show(0)
        else:
            self.app.notify(
                f"{view.display_name}: this session has no messages", severity="warning"
            )
        view.message_list.focus()
        if not view.partial:
            self._first_look(session)
        # Paint the list first; the gauge, the replay and the watcher start right after, so a
        # CPU-bound replay thread never delays the first frame.
        view.set_timer(FIRST_PAINT_DELAY_S, lambda: self._after_first_paint(session, prepared))

    def _first_look(self, session: Session) -> None:
        """What the user should know about a session as soon as it is all read."""
        state = self.view.state
        policy = state.policy if state is not None else None
        if not session.context_window and not (policy and policy.context_window):
            self.app.notify(
                f"The context window of {session.model or 'this model'} is unknown: press w to "
                "set it (or start with --window N). Overflow checks need it.",
                title="Window unknown",
                severity="warning",
                timeout=10,
            )
        for diagnostic in session.diagnostics[:1]:
            if str(diagnostic.severity) == "error":
                self.app.notify(diagnostic.message, title="Loader", severity="warning")

    def _after_first_paint(self, session: Session, prepared: Prepared | None) -> None:
        view = self.view
        state = view.state
        if state is None:
            self.after_paint_pending = False
            return
        if state.session is not session:
            return  # replaced meanwhile (the whole file after its first part): not ours
        if not view.message_list.painted and view.is_current:
            # the first frame is not out yet (a big session takes a while to lay out)
            view.set_timer(FIRST_PAINT_DELAY_S, lambda: self._after_first_paint(session, prepared))
            return
        self.after_paint_pending = False
        view.show_recorded(session, prepared)
        if view.partial:
            return  # replay and live tail wait for the whole file
        view.tell(SessionShown(session))
