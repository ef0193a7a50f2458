"""The spill files of truncation: the whole of a cut tool output, kept on disk.

Each file gets a time-ordered name of our own, ``tool_<11 hex ms><4 hex counter><12 hex random>``
(:func:`new_spill_name`; a simulation derives one from the call id, :func:`would_be_spill_name`),
so no tool name or call id ever reaches a path. A :class:`SpillFile` is written as a 0600 temp
file in a 0700 folder and renamed into place; it never raises, it reports. Files of our pattern
older than the retention are deleted lazily, once per process and folder
(:func:`cleanup_spill_dir`); other files are left alone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
import threading
import time

SPILL_NAME_RE = re.compile(r"tool_[0-9a-f]{27}")
"""Names of the spill files ctxscope writes (the only files retention cleanup may delete)."""
_TEMP_NAME_RE = re.compile(r"\.tool_[0-9a-f]{27}\.tmp")

_MS_PER_DAY = 24 * 60 * 60 * 1000
_WRITE_BLOCK = 1 << 24  # bytes handed to one os.write call


# --- names and folder ------------------------------------------------------------------------

_name_lock = threading.Lock()
_last_ms = -1
_counter = 0


def new_spill_name(now_ms: int | None = None) -> str:
    """A fresh ``tool_…`` name; names sort by creation time (ms, then a per-process counter)."""
    global _last_ms, _counter
    with _name_lock:
        ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        if ms == _last_ms:
            _counter = (_counter + 1) & 0xFFFF
        else:
            _last_ms, _counter = ms, 0
        counter = _counter
    return f"tool_{ms & 0xFFFFFFFFFFF:011x}{counter:04x}{secrets.token_hex(6)}"


def would_be_spill_name(seed: str) -> str:
    """A deterministic name of our pattern for a simulation (a hash of ``seed``, e.g. a call id)."""
    return "tool_" + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:27]


def spill_name_time_ms(name: str) -> int | None:
    """The creation time (epoch ms) encoded in one of our spill names, else None."""
    match = SPILL_NAME_RE.fullmatch(name) or _TEMP_NAME_RE.fullmatch(name)
    if match is None:
        return None
    start = name.index("tool_") + 5
    return int(name[start : start + 11], 16)


def default_spill_dir() -> str:
    """``$XDG_DATA_HOME/ctxscope/tool-output`` (XDG default ``~/.local/share``)."""
    data_home = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data_home):  # the XDG spec says relative values are ignored
        data_home = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data_home, "ctxscope", "tool-output")


def resolve_spill_dir(spill_dir: str | os.PathLike[str] | None) -> str:
    """The absolute spill folder for an option value (no disk access)."""
    if spill_dir is None or str(spill_dir) == "":
        return default_spill_dir()
    return os.path.abspath(os.path.expanduser(os.fspath(spill_dir)))


def _ensure_dir(directory: str) -> None:
    """Create ``directory`` as 0700 if missing, and its missing parents as 0700 too.

    An existing folder the user chose keeps its mode; our default folder is tightened to 0700.
    """
    if os.path.isdir(directory):
        if directory == default_spill_dir():
            with contextlib.suppress(OSError):
                if stat.S_IMODE(os.stat(directory).st_mode) & 0o077:
                    os.chmod(directory, 0o700)
        return
    _ensure_dir_private(directory)


def _ensure_dir_private(directory: str) -> None:
    """Create ``directory`` and its missing parents, each 0700 whatever the umask (folders that
    already exist are left as they are)."""
    parent = os.path.dirname(directory)
    if parent and parent != directory and not os.path.isdir(parent):
        _ensure_dir_private(parent)
    _make_private(directory)


def _make_private(directory: str) -> None:
    """``mkdir`` with mode 0700 exactly (the umask filters mkdir's mode, so it is set again)."""
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        if not os.path.isdir(directory):
            raise
        return
    os.chmod(directory, 0o700)


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            detail = "no space left on device"
        return detail
    return f"{type(exc).__name__}: {exc}"


def _open_temp(directory: str, name: str) -> tuple[int, str]:
    _ensure_dir(directory)
    temp_path = os.path.join(directory, f".{name}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp_path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # exact mode whatever the umask
    except BaseException:
        os.close(fd)
        _unlink_quietly(temp_path)
        raise
    return fd, temp_path


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        written = os.write(fd, view[offset : offset + _WRITE_BLOCK])
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        offset += written


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class SpillFile:
    """One spill file being written: a 0600 temp file, renamed into place by :meth:`commit`.

    Nothing here raises: the first failure is kept in :attr:`error`, the temp file is removed
    and later writes are ignored (truncation never raises into the agent loop).
    """

    def __init__(self, directory: str, name: str, retention_days: float) -> None:
        self.directory = directory
        self.name = name
        self.error: str | None = None
        self._fd: int | None = None
        self._temp_path: str | None = None
        try:
            _cleanup_once(directory, retention_days)
            self._fd, self._temp_path = _open_temp(directory, name)
        except Exception as exc:
            self._fail(exc)

    def write(self, data: bytes | bytearray) -> None:
        """Append ``data`` (ignored after a failure)."""
        if self._fd is None:
            return
        try:
            _write_all(self._fd, data)
        except Exception as exc:
            self._fail(exc)

    def commit(self) -> str | None:
        """Close and move the file into place; why it failed, or None."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError as exc:
                self._fail(exc)
        if self._temp_path is not None and self.error is None:
            try:
                os.replace(self._temp_path, os.path.join(self.directory, self.name))
                self._temp_path = None
            except OSError as exc:
                self._fail(exc)
        return self.error

    def abort(self) -> None:
        """Close and delete the temp file."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        temp_path, self._temp_path = self._temp_path, None
        if temp_path is not None:
            _unlink_quietly(temp_path)

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = _describe_os_error(exc)
        self.abort()


# --- retention ----------------------------------------------------------------------------------

_cleaned_dirs: set[str] = set()
_cleanup_lock = threading.Lock()


def _cleanup_once(directory: str, retention_days: float) -> None:
    with _cleanup_lock:
        if directory in _cleaned_dirs:
            return
        _cleaned_dirs.add(directory)
    cleanup_spill_dir(directory, retention_days)


def cleanup_spill_dir(
    directory: str | os.PathLike[str], retention_days: float = 7.0, now_ms: int | None = None
) -> list[str]:
    """Delete our spill files (and stale temp files) older than ``retention_days``.

    A file is deleted only when its name matches our pattern, it is a regular file, and both the
    time in its name and its mtime are older than the cutoff. Errors are swallowed. Returns the
    names deleted.
    """
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    cutoff_ms = now - int(retention_days * _MS_PER_DAY)
    deleted: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return deleted
    for entry in entries:
        named_ms = spill_name_time_ms(entry.name)
        if named_ms is None or named_ms >= cutoff_ms:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or info.st_mtime_ns // 1_000_000 >= cutoff_ms:
                continue
            os.unlink(entry.path)
            deleted.append(entry.name)
        except OSError:
            continue
    return deleted
