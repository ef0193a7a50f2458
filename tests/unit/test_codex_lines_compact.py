""":func:`core.formats.codex_lines.compact_ignorable` (the check the Codex walk makes first on
an event it decoded as one to pass over) implies :func:`~core.formats.codex_lines.ignorable`,
and says the same of every line Codex writes; the walk passes over what ``ignorable`` says."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import codex, codex_typed, codex_typed_read
from core.formats.codex_lines import (
    COMPACT_EVENT_AT,
    EVENT_PREFIX,
    IGNORED_EVENT_TYPES,
    LINE_START,
    compact_ignorable,
    ignorable,
)

_TS = "2026-05-11T08:27:17.490Z"
_NAMES = [*IGNORED_EVENT_TYPES, "token_count", "turn_started", "agent", "agent_message_x"]

# Pieces a line's head is made of: the envelope's own, quotes, and what overlaps the prefix.
_PIECES = st.sampled_from(
    [
        LINE_START,
        EVENT_PREFIX,
        b'"type":"',
        b'"',
        b",",
        b":",
        b"{",
        b"}",
        b"x",
        _TS.encode(),
        b'","',
        b'"payload":{',
        *(f'{name}"'.encode() for name in _NAMES),
    ]
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_compact_ignorable_implies_ignorable(pieces: list[bytes]) -> None:
    line = b"".join(pieces)
    if compact_ignorable(line):
        assert ignorable(line)
    view = memoryview(line)  # (the walk may hold a view of the chunk)
    assert compact_ignorable(view) is compact_ignorable(line)  # type: ignore[arg-type]


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(_NAMES),
    st.lists(st.tuples(st.integers(0, 110), st.integers(0, 3), _PIECES), max_size=3),
)
def test_compact_ignorable_implies_ignorable_near_codex_lines(
    name: str, edits: list[tuple[int, int, bytes]]
) -> None:
    """Codex's line with pieces put in or in place of its bytes here and there."""
    line = b'{"timestamp":"' + _TS.encode() + b'","type":"event_msg","payload":{"type":"'
    line += name.encode() + b'","message":"hi"}}'
    for at, cut, piece in edits:
        line = line[:at] + piece + line[at + cut :]
    if compact_ignorable(line):
        assert ignorable(line)


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("tail", [b'","message":"hi"}}', b'"}}', b'","text":"\\"type\\":\\""}}'])
def test_on_codex_lines_compact_ignorable_is_ignorable(name: str, tail: bytes) -> None:
    line = b'{"timestamp":"' + _TS.encode() + b'","type":"event_msg","payload":{"type":"'
    line += name.encode() + tail
    assert line.index(EVENT_PREFIX) == COMPACT_EVENT_AT
    assert compact_ignorable(line) is ignorable(line) is (name in IGNORED_EVENT_TYPES)


@pytest.mark.parametrize("name", IGNORED_EVENT_TYPES)
@pytest.mark.parametrize(
    "timestamp", [_TS, "2026-05-11T08:27:17Z", "2026-05-11T08:27:17.490123+00:00", ""]
)
def test_the_walk_passes_over_what_ignorable_says(
    tmp_path: Path, name: str, timestamp: str
) -> None:
    """Whatever the timestamp's length (the fixed-place check only knows Codex's), a decoded event
    to pass over is passed over exactly when ``ignorable`` says so."""
    compact = (
        b'{"timestamp":"'
        + timestamp.encode()
        + b'","type":"event_msg","payload":{"type":"'
        + name.encode()
        + b'","message":"hi"}}'
    )
    spaced = compact.replace(b'","type":"event_msg"', b'", "type": "event_msg"')
    loader = codex._Loader(tmp_path / "r.jsonl")
    for raw in (compact, spaced):
        decoded = codex_typed.decode(raw)
        assert decoded is not None and type(decoded.payload) in codex_typed.PASSED_OVER
        assert codex_typed_read.read_typed_line(loader, raw, 1, 0) is ignorable(raw)


@pytest.mark.parametrize("before", [b"", b"x", b"xx", b"xxx", b"x" * 10])
def test_a_line_with_the_prefix_earlier_is_not_compact(before: bytes) -> None:
    """The prefix at 40 with an ignored type after it, and an earlier match of the prefix that
    ``ignorable`` finds first (overlapping it where it overlaps itself, or before it): not
    ignorable, and not compact (the line does not start as Codex's)."""
    line = before + EVENT_PREFIX
    line += b"y" * (COMPACT_EVENT_AT - len(line)) if len(line) < COMPACT_EVENT_AT else b""
    line = line[:COMPACT_EVENT_AT] + EVENT_PREFIX + b'agent_message","message":"hi"}}'
    assert line[COMPACT_EVENT_AT:].startswith(EVENT_PREFIX + b"agent_message")
    assert not ignorable(line)
    assert not compact_ignorable(line)


@settings(max_examples=2000, deadline=None)
@given(
    st.sampled_from([_TS, "2026-05-11T08:27:17Z", "", 'a"b']),
    st.sampled_from(
        [b'","type":"response_item","payload":', b'", "type": "response_item", "payload": ', b""]
    ),
    st.binary(max_size=40),
    st.booleans(),
)
def test_the_typed_estimate_is_payload_bytes_in_tokens(
    tmp_path_factory: pytest.TempPathFactory,
    timestamp: str,
    middle: bytes,
    payload: bytes,
    view: bool,
) -> None:
    """The typed read's estimate of an input item is
    ``approx_tokens(payload_bytes(...))``, None where the line is not Codex's compact envelope."""
    from core.formats.codex_lines import payload_bytes
    from core.formats.codex_sizes import approx_tokens

    for line in (
        LINE_START + timestamp.encode() + middle + payload,
        LINE_START + timestamp.encode() + middle + payload + b"}",
    ):
        size = payload_bytes(line, timestamp)
        expected = None if size is None else approx_tokens(size)
        loader = codex._Loader(Path("r.jsonl"))
        raw = memoryview(line) if view else line
        estimate = codex_typed_read._estimate(loader, "text", raw, timestamp)  # type: ignore[arg-type]
        assert estimate == expected
