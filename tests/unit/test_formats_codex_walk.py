"""The Codex loader walks each batch of lines itself (:func:`core.formats.codex_typed_read.
walk_lines`, through ``read_jsonl_raw``'s ``walk``): the session, its diagnostics and the
empty-file errors are those of the generic line reader it replaced (``Lines.objects`` calling
the typed read back for each line), on every fixture and sample and on lines of every damaged
kind the reader reports."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from core.formats import codex
from core.formats.base import LoadError
from core.formats.codex_typed_read import read_typed_line, walk_lines
from core.formats.jsonl import Lines, read_jsonl_raw
from core.model.session import Session
from tests.support.paths import TESTS
from tests.support.sessions import session_facts
from tests.unit.test_formats_codex_typed import SAMPLES, _item, _rows

FIXTURES = TESTS / "fixtures" / "codex"


def _load_by_objects(path: Path, head_bytes: int | None = None) -> Session:
    """The load as it was before the walk: the generic reader's ``objects`` loop, which calls
    the typed read back for each line and yields the others."""
    loader = codex._Loader(path)
    for line_no, offset, raw, obj in read_jsonl_raw(
        path, loader.builder, head_bytes=head_bytes, typed=partial(read_typed_line, loader)
    ):
        loader.line(line_no, offset, raw, obj)
    return loader.finish()


def _same(path: Path, head_bytes: int | None = None) -> dict[str, Any]:
    walked = session_facts(codex.load(path, head_bytes=head_bytes))
    assert walked == session_facts(_load_by_objects(path, head_bytes))
    return walked


@pytest.mark.parametrize(
    "path", [*sorted(FIXTURES.glob("*.jsonl")), *SAMPLES], ids=lambda p: p.name
)
def test_fixture_and_sample_read_the_same_walked(path: Path) -> None:
    _same(path)


_DAMAGED = [
    b"",
    b"   \t",
    b'{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message","message":"cut',
    b"{not json",
    b"[1, 2]",
    b"42",
    b'{"type":"turn_context","payload":{"model":"gpt-5"}}{"type":"turn_context","payload":{}}',
    b'{"type":"response_item","payload":{"type":"function_call_output","output":"\xff"}}',
    b'{"type":"event_msg","payload":{"type":"user_message","message":"\xfe"}}',
    b'{"timestamp":"2026-04-01T12:00:00.000Z","type":"event_msg","payload":{"type":"agent_'
    b'reasoning","text":"\xff"}}',
    b'{"type":"world_state","payload":{"full":true}}',
]
"""Lines of every kind the line reader treats apart: blank, cut, not JSON, not an object,
two records on a line, bytes that are not UTF-8 (in a field read, a field skipped, an event
passed over), a record passed over quietly."""


@pytest.mark.parametrize("last", [b"", b'{"type":"event_msg","payload":{"type":"task_comp'])
def test_damaged_lines_read_the_same_walked(tmp_path: Path, last: bytes) -> None:
    rows = [json.dumps(row, separators=(",", ":")).encode() for row in _rows()]
    lines: list[bytes] = []
    for k, row in enumerate(rows):
        lines.append(row)
        lines.append(_DAMAGED[k % len(_DAMAGED)])
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n" + last)
    facts = _same(path)
    codes = {d["code"] for d in facts["diagnostics"]}
    assert {"invalid-json", "not-an-object", "two-records-on-a-line", "non-utf8"} <= codes
    assert ("partial-last-line" in codes) is bool(last)
    assert len(facts["messages"]) > 8


def test_a_head_reads_the_same_walked(tmp_path: Path) -> None:
    rows = [json.dumps(row, separators=(",", ":")) for row in _rows()]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    size = path.stat().st_size
    for head in (size // 3, size // 2 + 7, size):
        _same(path, head_bytes=head)


@pytest.mark.parametrize(
    ("text", "why"),
    [("\n\n  \n", "empty file"), ('"a"\n[1]\n', "no JSON object on any of its 2 lines")],
)
def test_files_without_a_record_fail_the_same_walked(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(text, encoding="utf-8")
    messages = []
    for load in (codex.load, _load_by_objects):
        with pytest.raises(LoadError) as caught:
            load(path)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert why in messages[0]


def test_a_file_of_lines_read_typed_only_is_a_session(tmp_path: Path) -> None:
    """Lines the typed read takes (or passes over) count as the file's records: no "no JSON
    object" error for a file that holds nothing else."""
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message","message":"m"}}\n'
        '{"timestamp":"t","type":"event_msg","payload":{"type":"task_complete"}}\n',
        encoding="utf-8",
    )
    facts = _same(path)
    assert facts["messages"] == []


@pytest.mark.parametrize("chunk_bytes", [64, 700, 1 << 20])
def test_lines_read_as_views_of_the_chunk_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int
) -> None:
    """``codex.load`` reads the lines of an ASCII chunk as views of it (``read_jsonl_raw``'s
    ``views``): long outputs, the ASCII damaged lines and the lines left to the plain read
    (handed over as bytes) read as the copies do, wherever the chunks end."""
    rows = [json.dumps(row, separators=(",", ":")).encode() for row in _rows()]
    output = {"type": "function_call_output", "call_id": "c9", "output": "x\n" * 900}
    rows.append(json.dumps(_item(9, output), separators=(",", ":")).encode())
    lines: list[bytes] = []
    for k, row in enumerate(rows):
        lines += [row, row, _DAMAGED[k % len(_DAMAGED)]]
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\n".join(line for line in lines if line.isascii()) + b"\n")
    kinds: set[type] = set()
    seen = codex._Loader.line

    def line(loader: codex._Loader, line_no: int, offset: int, raw: bytes, obj: Any) -> None:
        kinds.add(type(raw))
        seen(loader, line_no, offset, raw, obj)

    monkeypatch.setattr(codex._Loader, "line", line)
    walked = []
    given: set[type] = set()
    for views in (True, False):
        loader = codex._Loader(path)

        def walk(lines: Lines, batch: list[bytes], loader: codex._Loader = loader) -> Any:
            given.update(map(type, batch))
            return walk_lines(loader, lines, batch)

        for record in read_jsonl_raw(
            path, loader.builder, chunk_bytes=chunk_bytes, walk=walk, views=views
        ):
            loader.line(*record)
        walked.append(session_facts(loader.finish()))
    assert walked[0] == walked[1] == session_facts(_load_by_objects(path))
    assert memoryview in given and kinds == {bytes}
    assert {"invalid-json", "two-records-on-a-line"} <= {
        d["code"] for d in walked[0]["diagnostics"]
    }


@pytest.mark.parametrize("chunk_bytes", [64, 700, 4096])
def test_a_line_begun_in_a_non_ascii_chunk_and_ended_in_an_ascii_one_reads_the_same(
    tmp_path: Path, chunk_bytes: int
) -> None:
    """A line whose start (in an earlier chunk) is not ASCII makes the batch its end belongs
    to not ASCII, though the chunk that ends it is: that batch's lines come as bytes, which the
    walk checks (a view has no ``isascii``; before, such a file stopped the load with an
    ``AttributeError``). Non-ASCII damaged lines and long outputs read as the copies do."""
    rows = [json.dumps(row, separators=(",", ":")).encode() for row in _rows()]
    output = {"type": "function_call_output", "call_id": "c9", "output": "é" + "x" * 9000}
    long_line = json.dumps(_item(9, output), separators=(",", ":"), ensure_ascii=False).encode()
    lines: list[bytes] = []
    for k, row in enumerate(rows):
        lines += [row, long_line, row, _DAMAGED[k % len(_DAMAGED)]]
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    walked = []
    for views in (True, False):
        loader = codex._Loader(path)
        for record in read_jsonl_raw(
            path,
            loader.builder,
            chunk_bytes=chunk_bytes,
            walk=partial(walk_lines, loader),
            views=views,
        ):
            loader.line(*record)
        walked.append(session_facts(loader.finish()))
    assert walked[0] == walked[1] == session_facts(_load_by_objects(path))
    assert "non-utf8" in {d["code"] for d in walked[0]["diagnostics"]}
