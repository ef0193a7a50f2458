"""The shared JSONL reader: lines that hold several records, and the raw bytes it hands over."""

from __future__ import annotations

from pathlib import Path

from core.formats.base import SessionBuilder
from core.formats.jsonl import read_jsonl, read_jsonl_raw, read_record
from core.model.session import Severity, SourceFormat


def _builder() -> SessionBuilder:
    return SessionBuilder(SourceFormat.CODEX, "x.jsonl")


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_two_objects_on_one_line_are_both_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "glued.jsonl",
        '{"n":1}\n{"n":2,"s":"é"}{"n":3}\n{"n":4}\n',
    )
    builder = _builder()
    got = list(read_jsonl(path, builder))
    assert [(line, obj["n"]) for line, _offset, obj in got] == [(1, 1), (2, 2), (2, 3), (3, 4)]
    notes = [(d.line, d.code, d.severity) for d in builder.diagnostics]
    assert notes == [(2, "two-records-on-a-line", Severity.INFO)]
    # each record keeps its own offset, so it can be re-read on its own
    for _line, offset, obj in got:
        assert read_record(path, offset) == obj
    assert got[2][1] - got[1][1] == len('{"n":2,"s":"é"}'.encode())


def test_three_objects_and_spaces_between(tmp_path: Path) -> None:
    path = _write(tmp_path / "three.jsonl", '{"n":1} {"n":2}\t{"n":3}\n')
    builder = _builder()
    assert [obj["n"] for _l, _o, obj in read_jsonl(path, builder)] == [1, 2, 3]
    assert "3 JSON records" in builder.diagnostics[0].message


def test_glued_last_line_without_newline(tmp_path: Path) -> None:
    path = _write(tmp_path / "last.jsonl", '{"n":1}\n{"n":2}{"n":3}')
    builder = _builder()
    assert [obj["n"] for _l, _o, obj in read_jsonl(path, builder)] == [1, 2, 3]
    assert [d.code for d in builder.diagnostics] == ["two-records-on-a-line"]


def test_an_object_followed_by_garbage_is_still_invalid(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", '{"n":1}\n{"n":2} oops\n{"n":3}{"n":\n{"n":4}\n')
    builder = _builder()
    assert [obj["n"] for _l, _o, obj in read_jsonl(path, builder)] == [1, 4]
    assert [(d.line, d.code) for d in builder.diagnostics] == [
        (2, "invalid-json"),
        (3, "invalid-json"),
    ]


def test_a_non_object_among_glued_records_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path / "mixed.jsonl", '{"n":1}\n[1]{"n":2}\n')
    builder = _builder()
    assert [obj["n"] for _l, _o, obj in read_jsonl(path, builder)] == [1, 2]
    assert {d.code for d in builder.diagnostics} == {"two-records-on-a-line", "not-an-object"}


def test_raw_bytes_are_the_line_or_the_records_own_part(tmp_path: Path) -> None:
    path = _write(tmp_path / "raw.jsonl", '{"n":1}\r\n{"n":2}{"n":33}\n\n{"n":4}')
    rows = list(read_jsonl_raw(path, _builder()))
    assert [raw for _l, _o, raw, _obj in rows] == [
        b'{"n":1}\r',  # the line as written, without its newline
        b'{"n":2}',
        b'{"n":33}',
        b'{"n":4}',
    ]
    assert [obj["n"] for *_rest, obj in rows] == [1, 2, 33, 4]
