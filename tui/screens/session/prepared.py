"""What a worker that read a session works out beside it, so that the interface thread does not
walk the session to show it: the messages' table (the message list's flags and the model calls)
and the gauge's recorded series.

Both are one pass over every message (~20 and ~35 ms of CPU at 100,000 messages): worked out in
the loader's thread, they leave the interface thread free to draw the session once it arrives
(the frame that shows the whole file, and the replay that starts with it). The whole file's
calls are placed there too, for the replay that follows (:func:`prepare`'s ``replayed``).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.model.session import Session
from tui.screen_state import MessageTable, read_messages
from tui.widgets.gauge_series import Series, build_series


@dataclass(frozen=True, slots=True)
class Prepared:
    """A session's messages' table and its recorded series, worked out where it was read."""

    table: MessageTable
    recorded: Series | None
    """The gauge's series before a replay (:func:`~tui.widgets.gauge_series.build_series`;
    None: not worked out)."""

    def recorded_for(self, session: Session) -> Series | None:
        """The recorded series, if it is the one ``session`` draws now: drawn against the
        window the session has now (a window set meanwhile, ``w`` while the file was read or
        kept from a first part, changes which calls are over it). None: work it out again."""
        recorded = self.recorded
        if recorded is None or recorded.window != (session.context_window or None):
            return None
        return recorded


def prepare(session: Session, *, recorded: bool = True, replayed: bool = False) -> Prepared:
    """Read ``session``'s messages' table and (``recorded``) its recorded series, in the worker
    that read it (a session read again while a replay's result is shown needs no recorded
    series: the gauge draws the result until the next one).

    ``replayed``: the session is replayed next. Its calls are placed here, as the replay places
    them (:func:`core.replay.recorded.placed`, kept with the session: the replay finds them),
    and the recorded series takes the recorded context of each call from that placing rather
    than read every call's usage a second time (~40 ms of a 100,000-message open)."""
    table = read_messages(session)
    contexts = None
    if replayed:
        from core.replay.recorded import placed  # (the replay package: loaded with the session)

        calls = placed(session)[0]
        if calls.calls == table.calls:  # (no model call out of the main conversation; in C)
            contexts = calls.usage_context
    series = build_series(session, None, calls=table.calls, contexts=contexts) if recorded else None
    return Prepared(table, series)
