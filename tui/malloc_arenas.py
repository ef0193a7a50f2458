"""One malloc arena for the TUI's process, and its free pages given back after each big step.

glibc gives each thread that allocates while another holds the main arena an arena of its own
(up to eight per core). The TUI's threads — the loader, the replay, the insights, the detail
pane's counter — each leave freed memory in their own arena that the others cannot reuse: 10 to
20 MB of a 100 MB session's peak. Python's small objects come from its own allocator under the
GIL, so one arena costs no waiting that matters. What ``MALLOC_ARENA_MAX`` in the environment
says is left as it is; on a system without glibc nothing is done.

Python's small objects live in areas of their own (mapped apart from the C heap), so what a
step frees in the C heap (long texts, lists, a tokenizer's tables being built) is of no use to
the small objects of the next step: the pages stay in the process while the next step maps new
ones. :func:`release_free_memory` gives them back once a step is done (at 100,000 messages, 10 to
17 MB after the load, the replay, the inferred threshold and the insights; under a millisecond).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the largest number of arenas."""


def limit_malloc_arenas(count: int = 1) -> bool:
    """Ask glibc to keep at most ``count`` malloc arenas from now on (True: it agreed; False:
    not glibc, or ``MALLOC_ARENA_MAX`` is set)."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    mallopt = _glibc("mallopt")
    if mallopt is None:
        return False
    return bool(mallopt(M_ARENA_MAX, count))  # (ints and an int result: ctypes' defaults)


def release_free_memory() -> bool:
    """Give the free pages of the C heap back to the system (glibc's ``malloc_trim``; True: some
    were; False: none, or not glibc). Called by a worker once its step's transient data is
    freed, before the next step allocates."""
    malloc_trim = _glibc("malloc_trim")
    if malloc_trim is None:
        return False
    return bool(malloc_trim(0))  # (0: keep no padding at the top of the heap)


def _glibc(name: str) -> Any:
    """The C library's function ``name`` (None: not Linux, or no such function)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
