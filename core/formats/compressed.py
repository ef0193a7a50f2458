"""Session files stored compressed: Codex (0.137 and later) zstd-compresses a rollout that has
been idle for a week into ``rollout-….jsonl.zst``.

:func:`open_session` opens a session file read-only and, when it is a zstd stream (by its
``.zst`` name or its magic number), decompresses it as it is read: the whole file is never held
in memory, so a compressed rollout loads in the same bounded memory as a plain one. Every reader
of session bytes (detection's 64 KB head, the JSON Lines reader, re-reading one record for the
detail view, discovery's head) goes through here, so a ``.jsonl.zst`` works wherever a
``.jsonl`` does.

A stream that is cut short or corrupt raises :class:`CompressedError` (an ``OSError``) naming
what is wrong; loaders turn it into their one-line :class:`~core.formats.base.LoadError`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""The first four bytes of a zstd frame."""
COMPRESSED_SUFFIX = ".zst"
"""The ending of a compressed session file (``.jsonl.zst``)."""
_READ_BYTES = 1 << 20
"""Compressed bytes read from the file at a time."""


class CompressedError(OSError):
    """A compressed session file that cannot be decompressed (truncated or corrupt)."""


def is_compressed_name(path: Path | str) -> bool:
    """Whether ``path`` is named as a zstd-compressed session (``….zst``)."""
    return str(path).endswith(COMPRESSED_SUFFIX)


def is_compressed(path: Path | str) -> bool:
    """Whether the file at ``path`` is a zstd stream: by its name, else by its first bytes."""
    if is_compressed_name(path):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(len(ZSTD_MAGIC)) == ZSTD_MAGIC
    except OSError:
        return False


class _Decompressing(io.RawIOBase):
    """The decompressed bytes of a zstd file, produced as they are asked for, frame after frame;
    a cut or corrupt stream raises :class:`CompressedError` rather than ending silently."""

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard  # (a tenth of a small command's start: only a compressed file's reader)

        self._raw = raw
        self._decompressor = zstandard.ZstdDecompressor().decompressobj()
        self._fed = False  # the current frame has been given bytes and is not finished
        self._frames = 0  # frames decompressed completely
        self._pending = b""
        self._ended = False

    def readable(self) -> bool:
        return True

    def compressed_position(self) -> int:
        """How far into the compressed file reading has gone (for progress)."""
        return self._raw.tell()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending and not self._ended:
            self._pending = self._more()
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _more(self) -> bytes:
        """The next decompressed bytes (possibly none yet); at the end of the file, checks that
        the last frame was complete."""
        chunk = self._raw.read(_READ_BYTES)
        if not chunk:
            self._ended = True
            if self._fed:
                raise CompressedError("truncated zstd stream (the last frame is cut short)")
            if not self._frames:
                raise CompressedError("truncated zstd stream (no complete frame)")
            return b""
        import zstandard

        out: list[bytes] = []
        while chunk:
            try:
                out.append(self._decompressor.decompress(chunk))
            except zstandard.ZstdError as exc:
                raise CompressedError(f"corrupt zstd stream ({exc})") from None
            self._fed = True
            chunk = b""
            if self._decompressor.eof:  # a frame ended: what follows starts the next one
                chunk = self._decompressor.unused_data
                self._decompressor = zstandard.ZstdDecompressor().decompressobj()
                self._frames += 1
                self._fed = False
        return b"".join(out)

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class CompressedFile(io.BufferedReader):
    """A buffered reader over :class:`_Decompressing` that also says how far into the
    compressed file it has read."""

    def __init__(self, raw: _Decompressing) -> None:
        super().__init__(raw, buffer_size=_READ_BYTES)
        self._decompressing = raw

    def compressed_position(self) -> int:
        """Compressed bytes consumed so far."""
        return self._decompressing.compressed_position()


def open_session(path: Path | str) -> BinaryIO:
    """``path`` opened read-only as the bytes of its session: decompressed on the fly when it is
    a zstd stream. Raises ``OSError`` (:class:`CompressedError` for a bad stream, when read)."""
    path = Path(path)
    raw = open(path, "rb")  # noqa: SIM115 - the caller closes the returned file
    try:
        magic = raw.read(len(ZSTD_MAGIC))
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    if magic != ZSTD_MAGIC and not is_compressed_name(path):
        return raw
    return CompressedFile(_Decompressing(raw))


def read_head(path: Path | str, limit: int) -> bytes:
    """At most ``limit`` bytes from the start of the session at ``path`` (decompressed); a plain
    file is read no further than ``limit`` bytes."""
    with open(path, "rb") as raw:
        head = raw.read(limit)
    if not head.startswith(ZSTD_MAGIC) and not is_compressed_name(path):
        return head
    with open_session(path) as handle:
        return handle.read(limit)
