"""Streaming, tolerant JSON Lines reading shared by the JSONL loaders.

The file is opened read-only in binary mode and read in large chunks that are split on
``b"\\n"``; each line is parsed by orjson straight from bytes and dropped, so a line string is
never held twice and memory stays bounded by one chunk plus the longest line (a 50 MB line is
fine). What cannot be parsed becomes a :class:`~core.model.session.Diagnostic` on the builder and
reading goes on:

* invalid JSON → ``invalid-json`` (warning) with the line number;
* a last line without a trailing newline that does not parse → ``partial-last-line`` (info: the
  agent is probably still writing the file);
* bytes that are not UTF-8 → ``non-utf8`` (warning), the line decoded with U+FFFD replacements;
* a JSON value that is not an object → ``not-an-object`` (warning);
* several JSON objects on one line (a writer that lost a newline) → each is read, with an
  info ``two-records-on-a-line``; each object's offset is where it starts in the line.

A file that is not JSON Lines at all (empty, binary, a JSON array, no object on any line)
raises one :class:`~core.formats.base.LoadError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from io import BytesIO
from operator import itemgetter
from pathlib import Path
from typing import Any, cast

import orjson

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.compressed import CompressedError, CompressedFile, open_session
from core.formats.compressed import read_head as compressed_head

HEAD_BYTES = 64 * 1024
"""Detection never reads more than this from the start of a file."""
CHUNK_BYTES = 1024 * 1024
"""Size of each read while loading. A chunk and the copies of its lines are held together until
its lines are read: with 4 MiB chunks, loading the 100 MB Claude Code small-messages file peaked
6 MB higher (VmHWM 169 -> 163 MB, ~3,400 more page faults), its Codex and big-output shapes 9-11 MB
higher; 1 MiB is read as fast (the chunk's lines are still in the cache when they are decoded)."""

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"
# Bytes that do not occur raw in JSON text (C0 controls other than whitespace).
_CONTROL = bytes(i for i in range(32) if i not in (9, 10, 12, 13))


def read_head(path: Path, limit: int = HEAD_BYTES) -> bytes:
    """At most ``limit`` bytes from the start of ``path`` (read-only; decompressed when it is a
    ``.zst`` stream, :mod:`core.formats.compressed`)."""
    return compressed_head(path, limit)


def looks_binary(head: bytes) -> bool:
    """True when the first line of ``head`` holds NUL bytes or many control bytes (over 1 %,
    at least 8). Only the first line is judged: what comes after it is read line by line (a
    bad line is a diagnostic), so a file is not "binary" because zeros follow its sessions
    within the head's reach, when the same zeros further on would have been read past."""
    first = head.lstrip(_WHITESPACE).split(b"\n", 1)[0]
    if not first:
        return False
    if b"\x00" in first:
        return True
    controls = len(first) - len(first.translate(None, _CONTROL))
    return controls >= 8 and controls * 100 > len(first)


def head_records(head: bytes, limit: int = 64) -> list[dict[str, Any]]:
    """The JSON objects on the complete, parseable lines of ``head`` (up to ``limit``).

    Lines that do not parse (including a last line cut by the 64 KB head) are ignored: this is
    for sniffing, where a guess from the lines that do parse is what is wanted. The records of
    the last head read are kept: every sniffer reads the same head (the records are shared:
    read them, do not change them).
    """
    global _last_head  # (a memo of one entry)
    last = _last_head
    if last is not None and last[0] is head and (last[1] >= limit or len(last[2]) < last[1]):
        return last[2][:limit]
    records = _head_records(head, limit)
    _last_head = (head, limit, records)
    return records[:]


_last_head: tuple[bytes, int, list[dict[str, Any]]] | None = None
"""The head :func:`head_records` read last, the limit it read it with, and its records."""


def _head_records(head: bytes, limit: int) -> list[dict[str, Any]]:
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    records: list[dict[str, Any]] = []
    for line in head.split(b"\n"):
        if not line.lstrip(_WHITESPACE).startswith(b"{"):
            continue  # (only an object is kept: a pretty-printed export's lines are not parsed)
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            records.append(obj)
            if len(records) >= limit:
                break
    return records


def non_jsonl_reason(head: bytes, *, whole_file: bool) -> str:
    """Why ``head`` does not look like a JSON Lines session, as a short phrase.

    ``whole_file`` says that ``head`` is the entire file (so its last line is complete).
    """
    if not head.strip(_WHITESPACE):
        return "empty file"
    if looks_binary(head):
        return "binary file"
    body = head[len(_BOM) :] if head.startswith(_BOM) else head
    stripped = body.lstrip(_WHITESPACE)
    if stripped.startswith(b"["):
        return "a JSON array, not JSON Lines"
    first, newline, _ = stripped.partition(b"\n")
    if not newline and not whole_file:
        return "first line is longer than 64 KB and was not recognised"
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        try:
            first.decode("utf-8")
        except UnicodeDecodeError:
            return "first line is not UTF-8 text"
        return "first line is not JSON"
    if not isinstance(obj, dict):
        return "first line is not a JSON object"
    return "no record of a known format in the first lines"


def _check_start(head: bytes, path: Path) -> None:
    if looks_binary(head):
        raise LoadError(f"{path}: not a session (binary file)")
    body = head[len(_BOM) :] if head.startswith(_BOM) else head
    if body.lstrip(_WHITESPACE).startswith(b"["):
        raise LoadError(f"{path}: not a session (a JSON array, not JSON Lines)")


def _parse_repaired(line: bytes, line_no: int, builder: SessionBuilder) -> Any:
    """Second chance for a line orjson rejected: non-UTF-8 bytes are replaced."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = line.decode("utf-8", errors="replace")
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        builder.diagnostic(
            line_no,
            "non-utf8",
            f"invalid UTF-8 at byte {exc.start} of the line; decoded with replacement characters",
        )
        return obj
    return None


_JSON_SPACE = re.compile(r"[ \t\n\r]*")
"""What JSON allows between values."""


def _split_objects(line: bytes) -> list[tuple[int, int, Any]] | None:
    """The values of a line that holds more than one JSON document, each with its start and end
    byte in the line; None when the line is not a sequence of at least two JSON documents (or a
    value nests too deep or holds an integer too long to read). Linear in the line's length."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    space = _JSON_SPACE.match
    values: list[tuple[int, int, Any]] = []
    at, byte_at = 0, 0
    while True:
        spaces = space(text, at)  # always matches (possibly nothing)
        stripped = spaces.end() if spaces else at  # where the next value starts
        if stripped == len(text):
            break
        byte_at += len(text[at:stripped].encode("utf-8"))
        try:
            value, end = decoder.raw_decode(text, stripped)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return None
        byte_end = byte_at + len(text[stripped:end].encode("utf-8"))
        values.append((byte_at, byte_end, value))
        at, byte_at = end, byte_end
    return values if len(values) > 1 else None


def read_jsonl(
    path: Path,
    builder: SessionBuilder,
    *,
    progress: ProgressCallback | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    count: Callable[[], int] | None = None,
    skip: Callable[[bytes], bool] | None = None,
    head_bytes: int | None = None,
    typed: Callable[[bytes, int, int], bool] | None = None,
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Yield ``(line_number, byte_offset, object)`` for every JSON object line of ``path``.

    Line numbers are 1-based; ``byte_offset`` is where the object starts (its line's start,
    unless the line holds several objects), so the raw record can be re-read later with
    :func:`read_record`. Problems go to ``builder`` as diagnostics.
    ``progress`` is called after each chunk with ``(bytes_read, total_bytes, messages)``, where
    ``messages`` is ``count()`` (default: the builder's message count; a loader that assembles
    messages at the end passes its own running count).

    ``skip`` lets a loader pass over lines it would ignore without parsing them (it sees the raw
    bytes; a line it skips counts as read).

    ``head_bytes`` stops after the complete lines of the file's first ``head_bytes`` bytes (the
    line they cut is left out, without a diagnostic): a quick first part of a big file.

    ``typed`` lets a loader read lines its own way (msgspec structs of the fields it needs): it
    is called with ``(raw line, line number, offset)`` before ``skip`` and returns True when it
    read the line (which is then not yielded); for False (always, for a blank line) the line is
    parsed and checked as any other.

    Raises :class:`LoadError` when the file is missing, empty, binary, a JSON array, or holds no
    JSON object at all.
    """
    for line_no, offset, _raw, obj in read_jsonl_raw(
        path,
        builder,
        progress=progress,
        chunk_bytes=chunk_bytes,
        count=count,
        skip=skip,
        head_bytes=head_bytes,
        typed=typed,
    ):
        yield line_no, offset, obj


def read_jsonl_raw(
    path: Path,
    builder: SessionBuilder,
    *,
    progress: ProgressCallback | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    count: Callable[[], int] | None = None,
    skip: Callable[[bytes], bool] | None = None,
    head_bytes: int | None = None,
    typed: Callable[[bytes, int, int], bool] | None = None,
    walk: Callable[[Lines, list[bytes]], Iterator[Record]] | None = None,
    views: bool = False,
    any_views: bool = False,
) -> Iterator[Record]:
    """:func:`read_jsonl` with the bytes each object was parsed from: ``(line_number,
    byte_offset, raw, object)``, for a loader that measures records as the file holds them.
    ``raw`` is the whole line (not copied), or the object's own part of a line that holds
    several; its end-of-line bytes are not included.

    ``walk`` lets a loader walk each batch of complete lines itself (in place of
    :meth:`Lines.objects`): it numbers them as ``objects`` does, reads those it can its own
    way, hands the others to :meth:`Lines.plain` and yields what that gives, in order.

    ``views`` (with ``walk``) tells ``walk`` which batches hold only ASCII (``lines.ascii``,
    from one check of each chunk) and hands it the lines of a chunk of long ASCII lines as
    ``memoryview`` slices of the chunk, not copies (:func:`_split_lines`): a walk reads them
    (msgspec decodes any buffer) and keeps none; :meth:`Lines.plain` takes either.
    ``any_views`` (with ``views``): the lines of every chunk of long lines as views, ASCII or
    not, for a walk that never asks a line whether it is ASCII (one non-ASCII character in a
    chunk of 60 KB lines made every line of it a copy)."""
    path = Path(path)
    chunks = _Chunks(path, chunk_bytes, head_bytes)
    counter = count if count is not None else (lambda: len(builder.messages))
    lines = Lines(builder, skip, chunks.offset, typed)
    objects = lines.objects if walk is None else partial(walk, lines)
    pending: list[bytes] = []  # the start of a line the next chunk ends
    try:
        for batch in _complete_lines(chunks, pending, lines if views else None, any_views):
            yield from objects(batch)
            if progress is not None:
                progress(chunks.bytes_read, chunks.total, counter())
        if chunks.ends_inside_a_line():
            pending.clear()  # the head ends inside this line: it is not part of the head
        if pending:
            yield from lines.last(b"".join(pending))
        if progress is not None:
            progress(chunks.total, chunks.total, counter())
    finally:
        chunks.close()
    if lines.objects_read == 0:
        if lines.non_blank == 0:
            raise LoadError(f"{path}: not a session (empty file)")
        raise LoadError(
            f"{path}: not a session (no JSON object on any of its {lines.line_no} lines)"
        )


class _Chunks:
    """The file read in chunks: the first one checked (not empty, not binary, not a JSON array)
    and freed of its byte-order mark; with a head limit, not a byte past it."""

    def __init__(self, path: Path, chunk_bytes: int, head_bytes: int | None) -> None:
        try:
            total = path.stat().st_size
            self._file = open_session(path)
        except OSError as exc:
            raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
        self.path = path
        if head_bytes is not None:
            total = min(total, max(head_bytes, 0))
            chunk_bytes = max(1, min(chunk_bytes, total))
        self.total = total
        """The bytes to read: the file's size, or the head's."""
        self.bytes_read = 0
        self.offset = 0
        """Where the first line starts (after a byte-order mark)."""
        self._chunk_bytes = chunk_bytes
        self._remaining = total if head_bytes is not None else -1  # -1: the whole file
        try:
            self._first = self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> bytes:
        first = self._read()
        if not first.strip(_WHITESPACE) and len(first) < self._chunk_bytes:
            raise LoadError(f"{self.path}: not a session (empty file)")
        _check_start(first[:HEAD_BYTES], self.path)
        if first.startswith(_BOM):
            first = first[len(_BOM) :]
            self.offset = len(_BOM)
        return first

    def _read(self) -> bytes:
        if self._remaining < 0:
            try:
                return self._file.read(self._chunk_bytes)
            except CompressedError as exc:
                raise LoadError(f"{self.path}: cannot read ({exc})") from None
        if self._remaining == 0:
            return b""
        chunk = self._file.read(min(self._chunk_bytes, self._remaining))
        self._remaining -= len(chunk)
        return chunk

    def __iter__(self) -> Iterator[bytes]:
        chunk = self._first
        self._first = b""
        compressed = self._file if isinstance(self._file, CompressedFile) else None
        while chunk:
            if compressed is not None:  # progress in the file's own (compressed) bytes
                self.bytes_read = min(self.total, compressed.compressed_position())
            else:
                self.bytes_read = min(self.total, self.bytes_read + len(chunk))
            yield chunk
            chunk = self._read()

    def ends_inside_a_line(self) -> bool:
        """A head read stopped before the end of the file: its last line is cut."""
        return self._remaining == 0 and bool(self._file.read(1))

    def close(self) -> None:
        self._file.close()


def _complete_lines(
    chunks: Iterable[bytes],
    pending: list[bytes],
    views: Lines | None = None,
    any_views: bool = False,
) -> Iterator[list[bytes]]:
    """The complete lines of each chunk that ends one; a line's start waits in ``pending``
    until the chunk that ends it (what is left there at the end is the last line). A chunk
    after one whose lines were short on average is split by :func:`_split_short_lines`.

    With ``views`` (the :class:`Lines` a walk reads), ``views.ascii`` says before each batch
    whether its lines are all ASCII (each chunk checked once, not each line), and a chunk of
    long ASCII lines is split into views of it (``read_jsonl_raw``'s ``views``); with
    ``any_views``, a chunk of long lines, ASCII or not."""
    split: Callable[[bytes], tuple[list[bytes], bytes]] = _split_lines
    ascii_before = True  # what ``pending`` holds is ASCII
    for chunk in chunks:
        ascii_chunk = views is not None and chunk.isascii()
        # (views only for a batch that is all ASCII: the walk checks no line of it, and a
        # view has no ``isascii`` to check; a line begun in a non-ASCII chunk makes it not)
        if (
            split is _split_lines
            and views is not None
            and (any_views or (ascii_chunk and (ascii_before or not pending)))
        ):
            parts, rest = _split_lines(chunk, views=True)
        else:
            parts, rest = split(chunk)
        if not parts:  # no newline in the chunk: part of a long line
            ascii_before = ascii_chunk and (ascii_before or not pending)
            pending.append(chunk)
            split = _split_lines
            continue
        split = _split_short_lines if len(parts) * SHORT_LINE_BYTES > len(chunk) else _split_lines
        if views is not None:
            views.ascii = ascii_chunk and (ascii_before or not pending)
        if pending:
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            pending.clear()
        if rest:
            pending.append(rest)
        ascii_before = ascii_chunk  # (what ``pending`` holds now, if anything, is this chunk's)
        yield parts


def _split_lines(chunk: bytes, views: bool = False) -> tuple[list[bytes], bytes]:
    """``chunk``'s lines that a newline ends, and what follows the last newline: what
    ``chunk.split(b"\\n")`` gives, its last part apart. The newlines are found with
    ``bytes.find`` (memchr), not ``split``'s test of every byte: that test was 8 % of the
    instructions of loading a Claude Code file of 1 KB lines, the ``find`` calls are half that
    (they cost less than the test from lines of about 60 bytes up).

    ``views``: the lines (and what follows them) as ``memoryview`` slices of ``chunk``, not
    copies (a line as a view costs ~20 % less to make and to decode than as a copy from 1 KB
    up; the copies of the Codex big-output file's lines were 7 % of the instructions of its
    load)."""
    lines: list[bytes] = []
    put, find = lines.append, chunk.find
    # (typed as the chunk: a view is read as bytes are, by the walk that asks for views)
    source = cast(bytes, memoryview(chunk)) if views else chunk
    start = 0
    end = find(b"\n")
    while end >= 0:
        put(source[start:end])
        start = end + 1
        end = find(b"\n", start)
    return lines, source[start:] if start else chunk


SHORT_LINE_BYTES = 768
"""Below this average length a chunk's lines are split by :func:`_split_short_lines`: a line
costs :func:`_split_lines` a turn of its loop (a ``find`` call parsing its arguments, ~340 ns a
line on the Codex small-message file), where ``_split_short_lines`` copies each line twice in C
(~235 ns a line there, and ~0.11 ns more a byte): the two cost the same near 900 bytes a line."""

_WITHOUT_NEWLINE = itemgetter(slice(None, -1))


def _split_short_lines(chunk: bytes) -> tuple[list[bytes], bytes]:
    """:func:`_split_lines` of a chunk of short lines, with no Python step per line: the lines
    found by ``BytesIO.readlines`` (memchr, in C), each then cut of its newline by a ``map`` of
    a C getter. Held equal to ``_split_lines`` by a test."""
    lines = BytesIO(chunk).readlines()
    rest = lines.pop() if lines and not chunk.endswith(b"\n") else b""
    return list(map(_WITHOUT_NEWLINE, lines)), rest


Record = tuple[int, int, bytes, dict[str, Any]]
"""``(line number, offset, raw, object)``: a JSON object line as :func:`read_jsonl_raw`
yields it."""


class Lines:
    """Parses lines into objects, numbering them and reporting what does not parse.

    ``line_no`` is the number of the last line walked, ``offset`` where the next one starts;
    ``objects_read`` and ``non_blank`` count what the file held (an empty one is an error)."""

    def __init__(
        self,
        builder: SessionBuilder,
        skip: Callable[[bytes], bool] | None,
        offset: int,
        typed: Callable[[bytes, int, int], bool] | None = None,
    ) -> None:
        self.builder = builder
        self.skip = skip
        self.typed = typed
        self.line_no = 0
        self.offset = offset
        self.objects_read = 0
        self.non_blank = 0
        self.ascii = False
        """The lines of the batch being walked are all ASCII (set only for a walk that asks
        for ``views``; False: not known)."""

    def objects(self, lines: list[bytes]) -> Iterator[tuple[int, int, bytes, dict[str, Any]]]:
        """``(line number, offset, raw, object)`` of each object line (except those the
        loader's ``typed`` read); blank lines are passed over."""
        # Locals in the loop: it runs for every line of the file.
        builder, skip, typed = self.builder, self.skip, self.typed
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        line_no, offset = self.line_no, self.offset
        objects_read, non_blank = self.objects_read, self.non_blank
        for line in lines:
            line_no += 1
            start = offset
            offset += len(line) + 1
            # The loader's typed read first: it reads nearly every line (and no blank one).
            if typed is not None and typed(line, line_no, start):
                objects_read += 1
                non_blank += 1
                continue
            if not line or line.isspace():
                continue
            non_blank += 1
            if skip is not None and skip(line):
                objects_read += 1
                continue
            try:
                obj = loads(line)
            except decode_error as exc:
                found = self._second_chance(line, line_no, start, exc.msg)
                objects_read += len(found)
                yield from found
                continue
            if type(obj) is dict:
                objects_read += 1
                yield line_no, start, line, obj
            else:
                builder.diagnostic(
                    line_no,
                    "not-an-object",
                    f"a JSON {type(obj).__name__} where an object was expected, skipped",
                )
        self.line_no, self.offset = line_no, offset
        self.objects_read, self.non_blank = objects_read, non_blank

    def plain(self, line: bytes, line_no: int, start: int) -> list[Record]:
        """The object(s) of a non-blank line (number ``line_no``, at byte ``start``) that a
        loader walking its lines itself did not read its own way, parsed and checked as
        :meth:`objects` does (counted in ``non_blank`` and ``objects_read``). A line handed
        as a ``memoryview`` (``read_jsonl_raw``'s ``views``) is read, and yielded, as bytes."""
        line = bytes(line)  # (a bytes line: itself, not a copy)
        self.non_blank += 1
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            found = self._second_chance(line, line_no, start, exc.msg)
        else:
            if type(obj) is dict:
                found = [(line_no, start, line, obj)]
            else:
                found = []
                self.builder.diagnostic(
                    line_no,
                    "not-an-object",
                    f"a JSON {type(obj).__name__} where an object was expected, skipped",
                )
        self.objects_read += len(found)
        return found

    def _second_chance(
        self, line: bytes, line_no: int, start: int, error: str
    ) -> list[tuple[int, int, bytes, dict[str, Any]]]:
        """A line orjson rejected: several objects on it, or bytes that are not UTF-8; else an
        ``invalid-json`` warning."""
        several = self._several(line, line_no, start)
        if several is not None:
            return several
        obj = _parse_repaired(line, line_no, self.builder)
        if obj is None:
            self.builder.diagnostic(
                line_no, "invalid-json", f"invalid JSON, line skipped ({error})"
            )
            return []
        if type(obj) is not dict:
            self.builder.diagnostic(
                line_no,
                "not-an-object",
                f"a JSON {type(obj).__name__} where an object was expected, skipped",
            )
            return []
        return [(line_no, start, line, obj)]

    def _several(
        self, line: bytes, line_no: int, start: int
    ) -> list[tuple[int, int, bytes, dict[str, Any]]] | None:
        """The objects of a line that holds several JSON documents (a writer lost a newline),
        each at its own offset; None when the line is not that."""
        values = _split_objects(line)
        if values is None:
            return None
        self.builder.info(
            line_no,
            "two-records-on-a-line",
            f"{len(values)} JSON records on one line (a missing newline); each is read",
        )
        found: list[tuple[int, int, bytes, dict[str, Any]]] = []
        for begin, end, value in values:
            if type(value) is dict:
                found.append((line_no, start + begin, line[begin:end], value))
            else:
                self.builder.diagnostic(
                    line_no,
                    "not-an-object",
                    f"a JSON {type(value).__name__} where an object was expected, skipped",
                )
        return found

    def last(self, line: bytes) -> Iterator[tuple[int, int, bytes, dict[str, Any]]]:
        """The last line, which has no newline: a line that does not parse is probably still
        being written (an info, not a warning)."""
        self.line_no += 1
        if not line or line.isspace():
            return
        self.non_blank += 1
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            several = self._several(line, self.line_no, self.offset)
            if several is not None:
                self.objects_read += len(several)
                yield from several
                return
            obj = _parse_repaired(line, self.line_no, self.builder)
            if obj is None:
                self.builder.info(
                    self.line_no,
                    "partial-last-line",
                    "partial last line (file still being written?), skipped",
                )
        if type(obj) is dict:
            self.objects_read += 1
            yield self.line_no, self.offset, line, obj
        elif obj is not None:
            self.builder.diagnostic(
                self.line_no, "not-an-object", "the last line is not a JSON object, skipped"
            )


def _first_object(raw: bytes) -> dict[str, Any] | None:
    """The JSON object at the start of ``raw`` (which may go on with more records)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        values = _split_objects(raw)
        obj = values[0][2] if values else None
    return obj if isinstance(obj, dict) else None


def read_record(path: Path, offset: int) -> dict[str, Any] | None:
    """Re-read the raw JSON object starting at ``offset`` (for a detail view): the record of a
    line, or one of the records of a line that holds several.

    Returns None when the line is gone or no longer parses (the file changed).
    """
    try:
        with open_session(path) as f:
            _skip_to(f, offset)
            pieces: list[bytes] = []
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                cut = block.find(b"\n")
                if cut >= 0:
                    pieces.append(block[:cut])
                    break
                pieces.append(block)
    except OSError:
        return None
    return _first_object(b"".join(pieces))


def _skip_to(handle: Any, offset: int) -> None:
    """Move ``handle`` to byte ``offset`` of the session: a seek, or (a compressed stream, which
    cannot seek) reading up to it."""
    if not isinstance(handle, CompressedFile):
        handle.seek(offset)
        return
    left = offset
    while left > 0:
        skipped = handle.read(min(left, CHUNK_BYTES))
        if not skipped:
            break
        left -= len(skipped)
