"""A damaged or unexpected Claude Code line never stops the load: a wrongly-typed or missing field
gives a diagnostic (or is read as absent), never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Session, Severity
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "claude"
SHAPES = [
    FIXTURES / "recent_lines.jsonl",
    FIXTURES / "preserved_segment.jsonl",
    FIXTURES / "overflow_recovery.jsonl",
    FIXTURES / "starts_with_boundary.jsonl",
]
WRONG: list[Any] = [None, 7, "x", [], {}, [None], "<delete>"]
"""What a field is replaced with: other types, empty containers, and no field at all."""

Path_ = tuple[str | int, ...]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every field of a record, nested ones included (the first items of a list)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for k, item in enumerate(value[:2]):
            yield from _paths(item, (*prefix, k))


def _set(record: Any, path: Path_, value: Any) -> None:
    for key in path[:-1]:
        try:
            record = record[key]
        except (KeyError, IndexError, TypeError):
            return
    last = path[-1]
    if isinstance(record, dict) and last in record:
        if value == "<delete>":
            del record[last]
        else:
            record[last] = value
    elif isinstance(record, list) and isinstance(last, int) and last < len(record):
        record[last] = value


def _fields(path: Path) -> list[Path_]:
    """The fields whose shape the loader reads (the long tails of content are left out)."""
    found = {p for row in _rows(path) for p in _paths(row)}
    return sorted((p for p in found if len(p) <= 4), key=str)


@pytest.mark.parametrize("fixture", SHAPES, ids=lambda p: p.stem)
def test_every_field_wrongly_typed_or_missing_loads(tmp_path: Path, fixture: Path) -> None:
    rows = _rows(fixture)
    target = tmp_path / fixture.name
    for field in _fields(fixture):
        for value in WRONG:
            damaged = copy.deepcopy(rows)
            for row in damaged:
                _set(row, field, value)
            target.write_text("".join(json.dumps(r) + "\n" for r in damaged), encoding="utf-8")
            session = load_session(target)  # must not raise
            assert isinstance(session, Session), (field, value)


def _load_with(tmp_path: Path, fixture: Path, uuid: str, **fields: Any) -> Session:
    rows = _rows(fixture)
    for row in rows:
        if row.get("uuid") == uuid:
            row.update(fields)
    path = tmp_path / fixture.name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_session(path)


def _codes(session: Session) -> list[tuple[str, int | None]]:
    return [(d.code, d.line) for d in session.diagnostics if d.severity is not Severity.INFO]


def test_a_line_without_its_message_object_is_a_diagnostic(tmp_path: Path) -> None:
    session = _load_with(tmp_path, SHAPES[0], "r-u2", message="Fix it please.")
    assert ("unreadable-record", 26) in _codes(session)
    assert "r-u2" not in {m.id for m in session.messages}
    session = _load_with(tmp_path, SHAPES[0], "r-a4", message=None)
    assert ("unreadable-record", 29) in _codes(session)


def test_usage_that_is_not_an_object_is_a_diagnostic(tmp_path: Path) -> None:
    rows = _rows(SHAPES[0])
    for row in rows:
        if row.get("uuid") == "r-a4":
            row["message"]["usage"] = "lots"
    path = tmp_path / "u.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    session = load_session(path)
    assert ("unreadable-usage", 29) in _codes(session)
    assert session.messages[-1].usage is None


def test_a_boundary_without_metadata_is_a_diagnostic(tmp_path: Path) -> None:
    session = _load_with(tmp_path, SHAPES[2], "o-b2", compactMetadata=None)
    assert ("unreadable-compaction", 11) in _codes(session)
    event = session.compactions[1]
    assert (event.trigger, event.tokens_before) == ("unknown", None)


def test_sizes_that_are_not_numbers_are_a_diagnostic(tmp_path: Path) -> None:
    rows = _rows(SHAPES[2])
    for row in rows:
        if row.get("uuid") == "o-b2":
            row["compactMetadata"]["preTokens"] = "167k"
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    session = load_session(path)
    assert ("bad-count", 11) in _codes(session)  # the code every loader gives a bad figure
    assert session.compactions[1].tokens_before is None
    assert session.compactions[1].tokens_after == 21_100
