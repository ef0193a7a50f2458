"""What a path is on disk, found without opening it: only regular files are read as sessions.

Opening a FIFO for reading blocks until someone writes to it (forever, for a stray named pipe
under ``~/.claude/projects``); a character device may never end (``/dev/zero``); a socket cannot
be opened at all. So every place that is about to read a session file asks
:func:`unreadable_reason` first — a ``stat``, which never blocks — and says the reason in one
line when the path is anything but a regular file (or a folder, where folders are sessions).
:func:`open_regular` is for code that must open a path it did not check: the open itself does
not block (``O_NONBLOCK``) and the file is refused unless ``fstat`` says it is regular.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def kind_of(mode: int) -> str:
    """What a ``st_mode`` says the file is, in a few words."""
    if stat.S_ISREG(mode):
        return "a regular file"
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a special file"


def unreadable_reason(path: str | os.PathLike[str], *, directories: bool = False) -> str | None:
    """Why ``path`` cannot be read as a session file, or None when it can: a regular file, or a
    folder when ``directories``. Symbolic links are followed; a loop of them is named as such."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return _stat_failure(path, exc)
    if stat.S_ISREG(mode) or (directories and stat.S_ISDIR(mode)):
        return None
    return f"not a regular file ({kind_of(mode)})"


def _stat_failure(path: str | os.PathLike[str], exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop (the link leads back to itself)"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"broken symbolic link (its target {os.readlink(path)!r} does not exist)"
        return "no such file or directory"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return (exc.strerror or str(exc)).lower()


def is_regular(path: str | os.PathLike[str]) -> bool:
    """A regular file (following symbolic links), found with a ``stat``: never opens it."""
    return unreadable_reason(path) is None


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading, only if it is a regular file; the open never blocks (a FIFO
    put in the file's place after a check is refused, not waited on). Raises ``OSError``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({kind_of(mode)})", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


__all__ = ["is_regular", "kind_of", "open_regular", "unreadable_reason"]
