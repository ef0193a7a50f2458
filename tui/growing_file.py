"""Live tail: notice when a session file an agent is still writing grows.

How the TUI follows a growing file (the simplest approach that is correct for every format):

* :class:`LiveFile` remembers the file's identity (device, inode) and the byte offset just past
  its last complete line. When the file changes it finds the new last newline by reading
  backwards from the end (never the whole file on the UI loop). Bytes after the last newline are
  a line still being written: they are not reported until the newline arrives.
* :func:`watch_file` watches the file's folder with ``watchfiles.awatch`` (so deletion and
  rotation are seen too) and yields a :class:`FileChange` per event: ``grew`` when there are new
  complete lines, ``truncated`` (smaller than what was read), ``rotated`` (another file now has
  the name) or ``deleted``.
* On ``grew`` the session screen re-loads the file with the format's own loader in a thread
  worker and swaps the session in: rows beyond the old count are appended and the last old row
  is repainted. The loaders have no incremental entry point, and a format such as Claude Code
  writes one model reply over several lines (one per content block), so the last message may
  itself grow; re-reading and replacing is what keeps a message from ever being shown twice or
  half-merged. A partial last line is skipped by the loader (or, if it already parses, it is the
  same message when its newline arrives), so it appears exactly once.

The cost is one re-read per batch of writes (debounced); on a file of tens of megabytes that is
a fraction of a second in a worker, and the UI never waits for it.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.formats.file_kind import open_regular

ChangeKind = Literal["grew", "truncated", "rotated", "deleted"]

_BACK_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class FileChange:
    """What happened to the watched file."""

    kind: ChangeKind
    size: int
    """Size of the file now (0 when deleted)."""
    new_lines: int = 0
    """Complete lines added since the last change (``grew`` only)."""


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _last_newline(path: Path, start: int, end: int) -> int:
    """Offset just past the last ``\\n`` in ``[start, end)``, or ``start`` when there is none."""
    with open_regular(path) as f:  # a FIFO put in the file's place is refused, never waited on
        pos = end
        while pos > start:
            lo = max(start, pos - _BACK_CHUNK)
            f.seek(lo)
            chunk = f.read(pos - lo)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                return lo + nl + 1
            pos = lo
    return start


def _count_newlines(path: Path, start: int, end: int) -> int:
    count = 0
    with open_regular(path) as f:
        f.seek(start)
        remaining = end - start
        while remaining > 0:
            chunk = f.read(min(remaining, 1024 * 1024))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count


class LiveFile:
    """A file being appended to: its identity and the offset past its last complete line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity: tuple[int, int] | None = None
        self.size = 0
        self.offset = 0
        """Byte offset just past the last complete line seen."""
        self._reset()

    def _reset(self) -> None:
        try:
            st = os.stat(self.path)
        except OSError:
            self.identity, self.size, self.offset = None, 0, 0
            return
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device: nothing to follow
            self.identity, self.size, self.offset = None, 0, 0
            return
        self.identity = _identity(st)
        self.size = st.st_size
        try:
            self.offset = _last_newline(self.path, 0, st.st_size)
        except OSError:
            self.offset = 0

    def check(self) -> FileChange | None:
        """Compare the file with what was seen; None when there is nothing new to read."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self.identity is None:
                return None
            self.identity, self.size, self.offset = None, 0, 0
            return FileChange("deleted", 0)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):  # replaced by a FIFO, a device …: gone as a file
            if self.identity is None:
                return None
            self.identity, self.size, self.offset = None, 0, 0
            return FileChange("deleted", 0)
        if self.identity is None or _identity(st) != self.identity:
            was_known = self.identity is not None
            self._reset()
            return FileChange("rotated" if was_known else "grew", self.size)
        if st.st_size < self.offset:
            self._reset()
            return FileChange("truncated", self.size)
        if st.st_size == self.size:
            return None
        self.size = st.st_size
        try:
            new_offset = _last_newline(self.path, self.offset, st.st_size)
        except OSError:
            return None
        if new_offset == self.offset:
            return None  # only a partial line so far: wait for its newline
        try:
            lines = _count_newlines(self.path, self.offset, new_offset)
        except OSError:
            lines = 0
        self.offset = new_offset
        return FileChange("grew", st.st_size, lines)


async def watch_file(
    live_file: LiveFile,
    *,
    stop: threading.Event | None = None,
    debounce_ms: int = 100,
    poll_ms: int = 500,
) -> AsyncIterator[FileChange]:
    """Yield each change of ``live_file`` until it is deleted (or ``stop`` is set).

    Watches the parent folder (non-recursively) with ``watchfiles.awatch``; every ``poll_ms``
    without an event the file is checked anyway, so a file system that drops notifications
    (network mounts, some containers) still gets followed.
    """
    from watchfiles import awatch

    folder = live_file.path.parent
    name = live_file.path.name
    stop_event = stop or threading.Event()

    def only_this_file(_change: object, changed: str) -> bool:
        return os.path.basename(changed) == name

    try:
        async for _changes in awatch(
            folder,
            watch_filter=only_this_file,
            debounce=debounce_ms,
            step=50,
            rust_timeout=poll_ms,
            yield_on_timeout=True,
            recursive=False,
            stop_event=stop_event,
        ):
            change = live_file.check()
            if change is None:
                continue
            yield change
            if change.kind == "deleted":
                return
    finally:
        stop_event.set()
