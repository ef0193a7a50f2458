"""Files a command writes for the user (``convert -o``, ``report -o``, ``export --to``): never
half-written, never over an existing file unless asked, never over what is not a regular file,
never left behind as a temporary file.

A file is written to a temporary name in the target's folder and renamed into place only when
complete (:func:`publish`), so a reader never sees a partial file and a failure leaves the
folder as it was. A new file gets the permissions any file the user writes gets (``0666`` less
the umask); a replaced file keeps its mode.

What may be replaced (:func:`destination`): a missing path; an existing regular file only when
overwriting was asked; a symbolic link never (with ``force`` the file it points to is written and
the link stays); a FIFO, a device, a socket or a folder never.

Signals: inside :func:`removed_on_signals` a SIGTERM, SIGHUP or SIGINT removes every temporary
file :func:`temporary_beside` made and not yet published, then ends the process as the signal
would have (SIGINT raises ``KeyboardInterrupt``). The handlers are installed before the first
temporary file is created and the file's name is recorded before the file exists, so there is no
moment between its creation and its rename when a signal leaves it behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from core.formats.file_kind import kind_of, unreadable_reason

CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""Signals that remove the pending temporary files before the process ends."""

STAGE_HOOK: Callable[[str, Path], None] | None = None
"""Called with ``("created", temporary)`` once a temporary file exists and ``("written",
temporary)`` just before it is renamed into place: tests pause there to send a signal."""

_pending: set[str] = set()
_owner_pid = os.getpid()
_depth = 0


class OutputRefused(Exception):
    """The target cannot or must not be written (the message says why, naming the path)."""


class OutputExists(OutputRefused):
    """The target exists and overwriting it was not asked for."""

    def __init__(self, path: Path, message: str | None = None) -> None:
        super().__init__(message or f"{path} exists (--force overwrites it)")
        self.path = path


def refuse_existing(path: Path, overwrite: bool) -> None:
    """Raise :class:`OutputExists` when ``path`` exists and ``overwrite`` is not set."""
    if not overwrite and os.path.lexists(path):
        raise OutputExists(path)


def destination(path: Path, overwrite: bool, *, exists_message: str | None = None) -> Path:
    """The file to write for the target ``path``: ``path`` itself, or with ``overwrite`` the file a
    symbolic link ``path`` points to. Raises :class:`OutputRefused` (:class:`OutputExists` for an
    existing file without ``overwrite``) for anything that must not be replaced."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise OutputRefused(f"{path}: cannot write ({_reason(exc)})") from None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        if not overwrite:
            raise OutputRefused(
                f"{path}: is a symbolic link (to {target}); pass --force to write the file it "
                "points to"
            )
        reason = unreadable_reason(path)
        if reason is not None and not reason.startswith("broken symbolic link"):
            raise OutputRefused(f"{path}: {reason}; refusing to write through it")
        return Path(os.path.realpath(path))
    if not stat.S_ISREG(info.st_mode):
        raise OutputRefused(
            f"{path}: not a regular file ({kind_of(info.st_mode)}); refusing to replace it"
        )
    if not overwrite:
        raise OutputExists(path, exists_message)
    return path


@contextlib.contextmanager
def removed_on_signals() -> Iterator[None]:
    """Within the block, a cleanup signal removes the pending temporary files first (see the
    module's docstring). Handlers are only installed from the main thread; blocks nest."""
    global _depth
    previous: dict[signal.Signals, Any] = {}
    if _depth == 0 and threading.current_thread() is threading.main_thread():
        for number in CLEANUP_SIGNALS:
            previous[number] = signal.signal(number, _on_signal)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        _remove_pending()
        for number, handler in previous.items():
            signal.signal(number, handler)


def temporary_beside(path: Path) -> Path:
    """A new empty file (mode 0600) in ``path``'s folder, named after it, for :func:`publish`.
    Its name is recorded as pending before the file is created. Raises ``OSError``."""
    for _attempt in range(100):
        name = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        _pending.add(str(name))
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            _pending.discard(str(name))
            continue
        except BaseException:
            _pending.discard(str(name))
            raise
        os.close(fd)
        if STAGE_HOOK is not None:
            STAGE_HOOK("created", name)
        return name
    raise OSError(errno.EEXIST, "no free temporary name", str(path))


def publish(temporary: Path, path: Path) -> None:
    """Give ``temporary`` the mode of the file it replaces (or the user's default permissions)
    and rename it to ``path``."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    os.chmod(temporary, mode)
    if STAGE_HOOK is not None:
        STAGE_HOOK("written", temporary)
    os.replace(temporary, path)
    _pending.discard(str(temporary))


def discard(temporary: Path) -> None:
    """Remove an unpublished temporary file (nothing when it is gone)."""
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    _pending.discard(str(temporary))


def write_new(path: Path, data: bytes, *, overwrite: bool = False) -> None:
    """Write ``data`` to ``path`` atomically. Raises :class:`OutputRefused` (see
    :func:`destination`) or ``OSError`` when the folder cannot be written."""
    target = destination(path, overwrite)
    with removed_on_signals():
        temporary = temporary_beside(target)
        try:
            temporary.write_bytes(data)
            publish(temporary, target)
        finally:
            discard(temporary)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _owner_pid:  # a forked worker: its parent owns the files
        _end_by(signum)
    _remove_pending()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    _end_by(signum)


def _remove_pending() -> None:
    for name in list(_pending):
        with contextlib.suppress(OSError):
            os.unlink(name)
        _pending.discard(name)


def _end_by(signum: int) -> NoReturn:
    """End the process as ``signum`` would have (its default action, its exit status)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # not reached where the default action ends the process


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _forked_child() -> None:
    global _owner_pid
    _owner_pid = os.getpid()
    _pending.clear()


os.register_at_fork(after_in_child=_forked_child)
