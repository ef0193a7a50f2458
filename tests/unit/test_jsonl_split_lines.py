"""The shared JSONL reader's split of a chunk into lines: what ``bytes.split`` gives, found
with ``bytes.find`` or, for a chunk of short lines, by ``BytesIO.readlines``, and the lines a
file read in chunks of any size holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import jsonl
from core.formats.base import SessionBuilder
from core.formats.jsonl import (
    CHUNK_BYTES,
    SHORT_LINE_BYTES,
    Lines,
    _complete_lines,
    _split_lines,
    _split_short_lines,
    read_jsonl_raw,
)
from core.model.session import SourceFormat

_BYTES = st.lists(st.sampled_from([b"\n", b"{", b"}", b"a", b" ", b"\r", b"\xe2\x86\x92"]))


@given(_BYTES.map(b"".join))
def test_a_chunk_splits_as_bytes_split_does(chunk: bytes) -> None:
    parts = chunk.split(b"\n")
    assert _split_lines(chunk) == (parts[:-1], parts[-1])


@given(_BYTES.map(b"".join))
def test_a_chunk_of_short_lines_splits_as_split_lines_does(chunk: bytes) -> None:
    assert _split_short_lines(chunk) == _split_lines(chunk)


@pytest.mark.parametrize(
    ("line_bytes", "split"),
    [
        (100, "_split_short_lines"),
        (SHORT_LINE_BYTES - 2, "_split_short_lines"),
        (4000, "_split_lines"),
    ],
)
def test_a_chunk_after_one_of_short_lines_is_split_in_c(
    monkeypatch: pytest.MonkeyPatch, line_bytes: int, split: str
) -> None:
    """The first chunk is split by ``_split_lines``; each next one by ``_split_short_lines``
    when the chunk before it held lines shorter than ``SHORT_LINE_BYTES`` on average; the lines
    are the same either way."""
    used: list[str] = []

    def counted(name: str) -> Callable[[bytes], tuple[list[bytes], bytes]]:
        function = getattr(jsonl, name)

        def split(chunk: bytes) -> tuple[list[bytes], bytes]:
            used.append(name)
            return function(chunk)  # type: ignore[no-any-return]

        return split

    for name in ("_split_lines", "_split_short_lines"):
        monkeypatch.setattr(jsonl, name, counted(name))
    line = b"{" + b"x" * (line_bytes - 3) + b"}\n"
    data = line * 40
    size = len(data) // 4 + 7
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    pending: list[bytes] = []
    lines = [got for batch in _complete_lines(chunks, pending) for got in batch]
    assert lines == [line[:-1]] * 40 and pending == []
    assert used == ["_split_lines", split, split, split]


@settings(max_examples=50)
@given(_BYTES.map(b"".join), st.integers(min_value=1, max_value=9))
def test_chunks_of_any_size_give_the_lines_of_the_whole(data: bytes, size: int) -> None:
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    pending: list[bytes] = []
    lines = [line for batch in _complete_lines(chunks, pending) for line in batch]
    lines.append(b"".join(pending))
    assert lines == data.split(b"\n")


def test_records_and_offsets_across_chunk_ends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = '{"n":1}\n\n{"n":2,"s":"→→"}\n{"n":3}'
    path.write_bytes(text.encode())
    builder = SessionBuilder(SourceFormat.CODEX, str(path))
    got = list(read_jsonl_raw(path, builder, chunk_bytes=5))
    assert [(line, offset, raw) for line, offset, raw, _obj in got] == [
        (1, 0, b'{"n":1}'),
        (3, 9, '{"n":2,"s":"→→"}'.encode()),
        (4, 9 + len('{"n":2,"s":"→→"}'.encode()) + 1, b'{"n":3}'),
    ]


def test_a_file_is_read_in_reads_of_at_most_one_mebibyte(tmp_path: Path) -> None:
    """A chunk and its lines are held together while they are read: 1 MiB at a time keeps a
    load's peak memory down (4 MiB chunks peaked 6-11 MB higher at 100 MB)."""
    from core.formats.jsonl import _Chunks

    line = b'{"type": "user", "text": "' + b"x" * 1000 + b'"}\n'
    path = tmp_path / "t.jsonl"
    path.write_bytes(line * 3000)  # ~3 MB
    chunks = _Chunks(path, CHUNK_BYTES, None)
    try:
        sizes = [len(chunk) for chunk in chunks]
    finally:
        chunks.close()
    assert sum(sizes) == len(line) * 3000 and len(sizes) > 2
    assert max(sizes) <= 1 << 20


@given(_BYTES.map(b"".join))
def test_a_chunk_splits_into_views_as_into_copies(chunk: bytes) -> None:
    """``views``: the same lines, as views of the chunk (not copies) once a line ends."""
    parts, rest = _split_lines(chunk, views=True)
    assert ([bytes(part) for part in parts], bytes(rest)) == _split_lines(chunk)
    assert all(isinstance(part, memoryview) and part.obj is chunk for part in parts)


@settings(max_examples=80)
@given(
    _BYTES.map(b"".join),
    st.integers(min_value=1, max_value=9),
    st.sampled_from([2, SHORT_LINE_BYTES]),
)
def test_a_walk_reading_views_learns_which_batches_are_ascii(
    data: bytes, size: int, line_bytes: int
) -> None:
    """A walk that asks for views gets the lines of the whole, each batch told ASCII only when
    every line of it is (and always, for a file that is ASCII); a line is a view only in a
    batch told ASCII."""
    data = data.replace(b"a", b"a" * line_bytes)  # (lines long and short: both splits)
    chunks = [data[i : i + size * line_bytes] for i in range(0, len(data), size * line_bytes)]
    pending: list[bytes] = []
    lines = Lines(SessionBuilder(SourceFormat.CODEX, "s.jsonl"), None, 0)
    got: list[bytes] = []
    for batch in _complete_lines(chunks, pending, lines):
        if lines.ascii:
            assert all(bytes(line).isascii() for line in batch)
        else:
            assert not data.isascii()
            assert not any(isinstance(line, memoryview) for line in batch)
        got.extend(map(bytes, batch))
    got.append(b"".join(pending))
    assert got == data.split(b"\n")


@settings(max_examples=80)
@given(
    _BYTES.map(b"".join),
    st.integers(min_value=1, max_value=9),
    st.sampled_from([2, SHORT_LINE_BYTES]),
)
def test_a_walk_taking_any_views_gets_the_same_lines(
    data: bytes, size: int, line_bytes: int
) -> None:
    """With ``any_views`` the lines are those of the whole all the same, a chunk of long lines
    split into views whether it is ASCII or not, and each batch still told ASCII only when
    every line of it is."""
    data = data.replace(b"a", b"a" * line_bytes)  # (lines long and short: both splits)
    chunks = [data[i : i + size * line_bytes] for i in range(0, len(data), size * line_bytes)]
    pending: list[bytes] = []
    lines = Lines(SessionBuilder(SourceFormat.CLAUDE_CODE, "s.jsonl"), None, 0)
    got: list[bytes] = []
    for batch in _complete_lines(chunks, pending, lines, any_views=True):
        if lines.ascii:
            assert all(bytes(line).isascii() for line in batch)
        got.extend(map(bytes, batch))
    got.append(b"".join(pending))
    assert got == data.split(b"\n")


def test_a_chunk_of_long_non_ascii_lines_is_split_into_views() -> None:
    line = "é".encode() * SHORT_LINE_BYTES
    chunk = b"\n".join([line, line, line]) + b"\n"
    (batch,) = _complete_lines(
        [chunk], [], Lines(SessionBuilder(SourceFormat.CLAUDE_CODE, "s"), None, 0), any_views=True
    )
    assert all(isinstance(part, memoryview) for part in batch[1:])
    assert [bytes(part) for part in batch] == [line, line, line]
