"""Analyses of session files kept between runs, keyed by the file's path, size and mtime.

``ctxscope fleet`` analyses hundreds of sessions; most of them have not changed since the last
run. :class:`AnalysisCache` keeps each analysis (as JSON) under the session's path together with
the *fingerprint* the file had when the analysis started, and hands it back only while the file
still has that fingerprint, so a second run over an unchanged folder reads a small SQLite file
instead of every transcript.

Where: ``$XDG_CACHE_HOME/ctxscope/analyses.sqlite`` (default ``~/.cache/ctxscope``); the folder
is created 0700 and the file 0600, since the rows hold project paths, models and titles. The
cache is a convenience: a cache that cannot be opened or written (read-only home, a damaged
file, a symbolic link put at its path) is left alone and the run goes on without it; it is never
written through a symbolic link.

With ``CTXSCOPE_READ_ONLY=1`` in the environment (:func:`read_only`: ``ctxscope open
--read-only``, which every tab of ``ctxscope serve`` runs) the cache is read and never written;
so is the price memo (:mod:`core.insights.prices`) kept in the same folder.

Fingerprints (:func:`fingerprint`):

* a file: its size, its modification time in nanoseconds and a hash of its first and last
  64 KiB (a rewrite of the same size whose mtime was put back is seen);
* ``<opencode.db>#<session id>``: the database file's (any write to it invalidates its sessions);
* an opencode storage folder, or a session file inside one: the number, total size and latest
  modification time of every file under the storage root (a new message adds a file elsewhere
  in the tree, not to the session file).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from core.cache_folder import READ_ONLY_ENV as READ_ONLY_ENV  # (re-exported: its old home)
from core.cache_folder import cache_dir as cache_dir
from core.cache_folder import read_only as read_only
from core.formats.file_kind import open_regular
from core.model.json_text import printable

if TYPE_CHECKING:  # sqlite3 is imported by the methods that open the cache: `analyze` never does
    import sqlite3

CACHE_FILE = "analyses.sqlite"
"""The cache's file name inside the cache folder."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses_v2 (
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    digest INTEGER NOT NULL,
    version TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (kind, path)
)
"""
_OLD_TABLES = "DROP TABLE IF EXISTS analyses"
"""The table of the first layout (no content hash): its rows are dropped, not trusted."""
EDGE_BYTES = 64 * 1024
"""Bytes hashed at each end of a file for its fingerprint."""


class Fingerprint(NamedTuple):
    """What must not change for a cached analysis of a path to stay valid."""

    size: int
    """Bytes (summed over the files of a storage folder)."""
    mtime_ns: int
    """Modification time in nanoseconds (the latest one in a storage folder, plus the count of
    its files, so that removing a file changes it too)."""
    digest: int = 0
    """A hash of the file's first and last :data:`EDGE_BYTES` (0 for a folder or a database)."""


def fingerprint(path: str) -> Fingerprint | None:
    """The fingerprint of the session ``path`` names (see the module docstring); None when
    it cannot be read."""
    disk = _on_disk(path)
    root = _storage_root(disk)
    if root is not None:
        return _tree_fingerprint(root)
    try:
        info = disk.stat()
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return _tree_fingerprint(disk)
    if disk != Path(path):  # <db>#<id>: any write to the database invalidates it
        return Fingerprint(info.st_size, info.st_mtime_ns)
    digest = _edge_digest(disk, info.st_size)
    return None if digest is None else Fingerprint(info.st_size, info.st_mtime_ns, digest)


def _edge_digest(path: Path, size: int) -> int | None:
    """A hash of the first and last :data:`EDGE_BYTES` of a regular file; None when it cannot
    be read (or is not a regular file: it is never opened then)."""
    try:
        with open_regular(path) as handle:
            hasher = hashlib.blake2b(handle.read(EDGE_BYTES), digest_size=7)
            if size > EDGE_BYTES:
                handle.seek(max(EDGE_BYTES, size - EDGE_BYTES))
                hasher.update(handle.read(EDGE_BYTES))
    except OSError:
        return None
    return int.from_bytes(hasher.digest(), "big")


def _on_disk(path: str) -> Path:
    """The file behind ``<db>#<id>`` / ``<storage>#<id>``, else the path itself."""
    candidate = Path(path)
    if "#" in candidate.name and not candidate.exists():
        return Path(path.rpartition("#")[0])
    return candidate


def _storage_root(path: Path) -> Path | None:
    """The opencode storage root a folder or a session file belongs to, if any."""
    from core.formats.opencode_storage import storage_layout

    try:
        found = storage_layout(path)
    except OSError:
        return None
    return found[0].root if found is not None else None


def _tree_fingerprint(root: Path) -> Fingerprint | None:
    count = size = latest = 0
    for entry in _walk(root):
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        count += 1
        size += info.st_size
        latest = max(latest, info.st_mtime_ns)
    if count == 0:
        return None
    return Fingerprint(size, latest + count)


def _walk(folder: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            found = list(entries)
    except OSError:
        return
    for entry in found:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield entry
        except OSError:
            continue


class AnalysisCache:
    """Analyses (JSON bytes) by kind and path, valid while the path keeps its fingerprint.

    ``version`` is part of every key: analyses made by another version of the analysis are
    never returned. Every method is safe to call from any thread (each opens its own
    connection) and never raises for a cache problem: it behaves as an empty cache instead.
    """

    def __init__(self, folder: Path | None = None, *, version: str) -> None:
        self.folder = folder if folder is not None else cache_dir()
        self.path = self.folder / CACHE_FILE
        self.version = version
        self.usable = True
        """False once the cache turned out unusable (then every lookup misses)."""

    def get(self, kind: str, path: str, print_: Fingerprint | None) -> bytes | None:
        """The analysis stored for ``path`` with fingerprint ``print_``, else None."""
        if print_ is None:
            return None
        return self.get_many(kind, {path: print_}).get(path)

    def get_many(self, kind: str, prints: dict[str, Fingerprint]) -> dict[str, bytes]:
        """The stored analyses of every path of ``prints`` whose fingerprint still matches."""
        found: dict[str, bytes] = {}
        if not prints or not self.path.exists():
            return found
        with self._connection() as conn:
            if conn is None:
                return found
            rows = conn.execute(
                "SELECT path, size, mtime_ns, digest, data FROM analyses_v2 "
                "WHERE kind = ? AND version = ?",
                (kind, self.version),
            )
            by_key = {printable(path): path for path in prints}  # names that are not UTF-8
            for key, size, mtime_ns, digest, data in rows:
                path = by_key.get(key)
                if path is not None and prints[path] == (size, mtime_ns, digest):
                    found[path] = bytes(data)
        return found

    def put(self, kind: str, path: str, print_: Fingerprint | None, data: bytes) -> None:
        """Store ``data`` as the analysis of ``path`` as it was at ``print_``."""
        if print_ is not None:
            self.put_many(kind, [(path, print_, data)])

    def put_many(self, kind: str, items: list[tuple[str, Fingerprint, bytes]]) -> None:
        """Store several analyses in one transaction (nothing when :func:`read_only`)."""
        if not items or read_only():
            return
        with self._connection(create=True) as conn:
            if conn is None:
                return
            conn.executemany(
                "INSERT OR REPLACE INTO analyses_v2 "
                "(kind, path, size, mtime_ns, digest, version, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (kind, printable(p), f.size, f.mtime_ns, f.digest, self.version, d)
                    for p, f, d in items
                ],
            )

    @contextlib.contextmanager
    def _connection(self, create: bool = False) -> Iterator[sqlite3.Connection | None]:
        import sqlite3

        conn = self._open(create) if self.usable else None
        if conn is None:
            yield None
            return
        try:
            with conn:
                yield conn
        except sqlite3.Error:
            self.usable = False
        finally:
            conn.close()

    def _open(self, create: bool) -> sqlite3.Connection | None:
        import sqlite3

        try:
            if create:
                self._create_files()
            elif not self.path.exists():
                return None
            if self.path.is_symlink():  # never written through (nor read from) a link
                self.usable = False
                return None
            conn = sqlite3.connect(self.path, timeout=5.0)
            conn.execute(_SCHEMA)
            conn.execute(_OLD_TABLES)
            return conn
        except sqlite3.DatabaseError:
            return self._recreate() if create else None
        except OSError:
            self.usable = False
            return None

    def _create_files(self) -> None:
        """The folder (0700) and the file (0600), created with those modes from the start."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.path.lexists(self.path):
            flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
            with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                os.close(os.open(self.path, flags, 0o600))

    def _recreate(self) -> sqlite3.Connection | None:
        """A damaged cache file is ours to throw away (it holds nothing that cannot be
        recomputed); try once with a fresh one."""
        import sqlite3

        try:
            if self.path.is_symlink():
                self.usable = False
                return None
            self.path.unlink()
            self._create_files()
            conn = sqlite3.connect(self.path, timeout=5.0)
            conn.execute(_SCHEMA)
            return conn
        except (OSError, sqlite3.Error):
            self.usable = False
            return None
