"""Keeping a loaded session out of the cyclic garbage collector's way.

Not :func:`core.gc_pause.gc_paused`: that pauses the collector *while* a session is built; this
runs once it is built (and once a replay result is), for as long as the session is on screen. The
app runs it once at start-up too: what the imports made is never garbage, and the collections the
default thresholds make while Textual builds the screens (about 60 young ones and a few of the
middle generation, 35-60 ms at 100,000 messages) take the interpreter from the loader's thread.
"""

from __future__ import annotations

import gc


def freeze_heap() -> None:
    """Move everything alive now (the loaded session: millions of objects for a big file) out of
    the cyclic garbage collector's sight, so a full collection never stalls a key press.
    Objects are still freed by reference counting when the session is replaced."""
    gc.freeze()
    # The young collections find no garbage in a loaded session's UI work, only cost time at
    # key presses: run them ten times less often (full collections stay as rare as they were).
    gc.set_threshold(7_000, 10, 10)
