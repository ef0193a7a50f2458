"""Keeping a loaded session out of the cyclic garbage collector's way.

Not :func:`core.gc_pause.gc_paused`: that pauses the collector *while* a session is built; this
runs once it is built (and once a replay result is), for as long as the session is on screen. The
app runs it once at start-up too: what the imports made is never garbage, and the collections the
default thresholds make while Textual builds the screens (about 60 young ones and a few of the
middle generation, 35-60 ms at 100,000 messages) take the interpreter from the loader's thread.
"""

from __future__ import annotations

import gc

_thawed = False
"""A session screen was closed since the heap was last frozen (:func:`thaw_heap`)."""


def freeze_heap() -> None:
    """Move everything alive now (the loaded session: millions of objects for a big file) out of
    the cyclic garbage collector's sight, so a full collection never stalls a key press.
    Objects are still freed by reference counting when the session is replaced; what a closed
    screen left in reference cycles is collected first (:func:`thaw_heap`)."""
    collect_thawed()  # (not frozen again: it would never be collected)
    gc.freeze()
    # The young collections find no garbage in a loaded session's UI work, only cost time at
    # key presses: run them ten times less often (full collections stay as rare as they were).
    gc.set_threshold(7_000, 10, 10)


def thaw_heap() -> None:
    """A session screen is closed: give back to the collector what was frozen while it was shown.

    A frozen object in a reference cycle is never collected, and the widgets of a screen all
    hold one another (parent and children, bound methods, workers): without this, a closed
    screen, and the session it showed, stayed in memory for the rest of the run. The collector
    frees them at its next full collection, or at the latest when the heap is frozen again
    (:func:`freeze_heap`)."""
    global _thawed
    _thawed = True
    gc.unfreeze()


def collect_thawed() -> None:
    """Collect what a closed screen left (:func:`thaw_heap`), if a screen closed since the last
    collection: before a session is read (so the one closed is freed before the next one takes
    its place), and before the heap is frozen again."""
    global _thawed
    if _thawed:
        _thawed = False
        gc.collect()
