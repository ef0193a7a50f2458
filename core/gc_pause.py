"""Pausing the cyclic garbage collector around a big allocation: one helper for the core and
the TUI."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(*, freeze: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while a session is loaded or replayed.

    A load (or a replay) allocates hundreds of thousands of long-lived, acyclic objects
    (messages and their dicts); each collection the allocations trigger walks all of them again,
    which doubles the cost of building a model. Reference counting still frees everything in the
    meantime; the collector is restored (only if it was on) when the block ends, even on error.

    When the block ends normally, what it built is frozen (``gc.freeze``): moved out of the
    generations the collector walks, so the collections the replay and the UI trigger later do
    not walk a million long-lived objects each time. (Frozen objects are still freed by reference
    counting; only a reference cycle among them would outlive its last use.) With ``freeze``
    false nothing is frozen, and a block entered with the collector already paused freezes
    nothing either: the outermost pause decides (the fleet pauses it around each session without
    freezing, so the collector frees the session's cycles once its row is made).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if was_enabled and freeze:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()
