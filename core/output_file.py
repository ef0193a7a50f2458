"""Files a command writes for the user (a report, an export): never half-written, never over an
existing file unless asked.

A file is written to a temporary name in the target's folder and renamed into place only when
complete (:func:`publish`), so a reader never sees a partial file and a failure leaves the
folder as it was. It gets the permissions any file the user writes gets (``0666`` less the
umask), not the ``0600`` of a temporary file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


class OutputExists(Exception):
    """The target exists and overwriting it was not asked for."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} exists (--force overwrites it)")
        self.path = path


def refuse_existing(path: Path, overwrite: bool) -> None:
    """Raise :class:`OutputExists` when ``path`` exists and ``overwrite`` is not set."""
    if not overwrite and path.exists():
        raise OutputExists(path)


def temporary_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder, named after it, for :func:`publish`."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    return Path(name)


def publish(temporary: Path, path: Path) -> None:
    """Give ``temporary`` the user's permissions and rename it to ``path``."""
    os.chmod(temporary, 0o666 & ~_umask())
    os.replace(temporary, path)


def write_new(path: Path, data: bytes, *, overwrite: bool = False) -> None:
    """Write ``data`` to ``path`` atomically; :class:`OutputExists` if it exists and
    ``overwrite`` is not set; ``OSError`` when the folder cannot be written."""
    refuse_existing(path, overwrite)
    temporary = temporary_beside(path)
    try:
        temporary.write_bytes(data)
        publish(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
