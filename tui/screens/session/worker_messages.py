"""What the session screen's workers post back, what its controllers tell the screen, and how
often the workers report progress.

Each worker runs in its own thread (or, for the live tail, as an async task) and never touches a
widget: it posts one of these to the screen, which hands it, on the UI thread, to the controller
that started the worker (the search's it handles itself). The messages at the end go from a
controller to the screen, which passes them on to the controllers concerned.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

from textual.message import Message

from core.model.session import Session
from core.policy import Policy
from tui.screen_state import Inferred

if TYPE_CHECKING:
    from core.replay import ReplayResult
    from tui.insights import Insights
    from tui.screens.session.prepared import Prepared

PROGRESS_INTERVAL_S = 0.2
"""Loader and replay progress reach the screen at most this often (each update is a frame the
UI thread draws while the loader thread wants the interpreter)."""


RERUN_QUIET_S = 0.5
"""A re-run of the replay (a limit change: it resumes an earlier run, most often in well under
this) reports no progress before this much time: each report is a frame the UI thread draws
while the replay's thread wants the interpreter, and the result is drawn soon anyway."""


class Throttle:
    """Lets a progress report through at most once per :data:`PROGRESS_INTERVAL_S` (the first
    at once, or only after ``quiet_s`` when given)."""

    def __init__(self, interval_s: float = PROGRESS_INTERVAL_S, *, quiet_s: float = 0.0) -> None:
        self.interval_s = interval_s
        # (no quiet start: the first report passes whatever the clock reads — the monotonic
        # clock counts from boot, which on a machine up for less than an interval is below it)
        self._last = -math.inf if quiet_s <= 0 else time.monotonic() + quiet_s - interval_s

    def ready(self) -> bool:
        """True (and the clock restarts) when the interval has passed since the last report."""
        now = time.monotonic()
        if now - self._last < self.interval_s:
            return False
        self._last = now
        return True


# -- loading ------------------------------------------------------------------------------------


class SessionLoaded(Message):
    """The whole file is read (``prepared``: what the worker worked out beside it)."""

    def __init__(self, session: Session, seconds: float, prepared: Prepared | None = None) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds
        self.prepared = prepared


class FirstPartLoaded(Message):
    """The first part of a big file, to show while the rest is read."""

    def __init__(self, session: Session, seconds: float, prepared: Prepared | None = None) -> None:
        super().__init__()
        self.session = session
        self.seconds = seconds
        self.prepared = prepared


class LoadFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class LoadProgressed(Message):
    def __init__(self, bytes_read: int, total_bytes: int, messages: int) -> None:
        super().__init__()
        self.bytes_read = bytes_read
        self.total_bytes = total_bytes
        self.messages = messages

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgressed)


# -- replay -------------------------------------------------------------------------------------


class ReplayDone(Message):
    def __init__(
        self,
        result: ReplayResult,
        generation: int,
        seconds: float,
        inferred: Inferred | None = None,
        *,
        infers_later: bool = False,
    ) -> None:
        super().__init__()
        self.result = result
        self.generation = generation
        self.seconds = seconds
        self.inferred = inferred
        """What the session's own compactions say of the recording agent's threshold (worked
        out once per session, with the first replay; None for our own format)."""
        self.infers_later = infers_later
        """The replay's worker works the inferred threshold out once this result is painted
        (:class:`InferenceEnded` says when it is done)."""
        self.painted = threading.Event()
        """Set once the result is on screen (or will not be shown): work the replay's worker
        does after it (the inferred threshold) waits for it, not to delay that frame."""


class InferredWorkedOut(Message):
    """What the session's own compactions say of the recording agent's threshold, worked out
    after the first result was shown (the walk following the recording that it takes is not
    waited for); ``source``: the replayer it was worked out with."""

    def __init__(self, inferred: Inferred, source: object) -> None:
        super().__init__()
        self.inferred = inferred
        self.source = source


class InferenceEnded(Message):
    """The replay's worker is done with the inferred threshold it works out after the result
    of replay ``generation`` (worked out, failed or given up: the work that waited for it, the
    insights, may start)."""

    def __init__(self, generation: int) -> None:
        super().__init__()
        self.generation = generation


class ReplayEnded(Message):
    """A replay that produced no result: cancelled, or failed with ``error``."""

    def __init__(self, generation: int, error: str | None) -> None:
        super().__init__()
        self.generation = generation
        self.error = error


class ReplayProgressed(Message):
    def __init__(self, generation: int, done: int, total: int) -> None:
        super().__init__()
        self.generation = generation
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReplayProgressed)


# -- insights ------------------------------------------------------------------------------------


class InsightsReady(Message):
    """The breakdown, the cost and the compaction reports of a session and a replay result."""

    def __init__(self, insights: Insights) -> None:
        super().__init__()
        self.insights = insights


# -- search and live tail -------------------------------------------------------------------------


class SearchDone(Message):
    def __init__(self, text: str, matches: list[int]) -> None:
        super().__init__()
        self.text = text
        self.matches = matches


class LiveReloaded(Message):
    """The watched file grew (or was replaced) and is read again."""

    def __init__(self, session: Session, prepared: Prepared | None = None) -> None:
        super().__init__()
        self.session = session
        self.prepared = prepared


class LiveProblem(Message):
    def __init__(self, text: str, *, stop_tail: bool) -> None:
        super().__init__()
        self.text = text
        self.stop_tail = stop_tail


# -- from the controllers to the screen -----------------------------------------------------------


class SessionShown(Message):
    """The whole session is on screen (its first frame painted): replay it and follow its file."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session


class ReplayWanted(Message):
    """What is shown changed (the file grew, or only its first part could be read): replay it."""


class ResultShown(Message):
    """A replay result is on screen: its insights are to be worked out."""


class InferredPolicyFound(Message):
    """The first replay worked out the ``inferred`` policy asked for on the command line."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.policy = policy
