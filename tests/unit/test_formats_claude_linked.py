"""A transcript whose lines each name the line before them as parent is read as the whole
active branch without walking the tree (``_Reader.linked``): the session is the one the walk
gives, for every fixture and sample, and for lines whose ids or parents are odd or missing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import claude_code
from core.formats.base import SessionBuilder
from core.formats.claude_assembly import Assembler
from core.formats.claude_records import Entry
from core.formats.jsonl import read_jsonl
from core.model.session import Session
from tests.support.paths import REPO, TESTS
from tests.support.sessions import session_facts
from tests.unit.test_formats_claude_robust import _rows, _set

FIXTURES = TESTS / "fixtures" / "claude"
SAMPLES = REPO.parent / "shared" / "samples" / "claude-code"
ODD: list[Any] = [None, 7, "", "<delete>", "elsewhere", True]


def _load(path: Path, *, walk: bool, head_bytes: int | None = None) -> tuple[Session, bool]:
    """The session of ``path`` (with ``walk``: the active branch found by walking the tree), and
    whether the reader found the file linked. Its lines are read one by one, through the
    generic line reader (``typed=``), not by the loader's own walk."""
    reader = claude_code._Reader(SessionBuilder(claude_code.FORMAT, path))
    for line_no, offset, obj in read_jsonl(
        path, reader.builder, head_bytes=head_bytes, typed=reader.typed_line
    ):
        reader.line(line_no, offset, obj)
    linked = reader.linked
    if walk:
        reader.linked = False
    return reader.finish(path), linked


def _same(path: Path) -> bool:
    shortcut, linked = _load(path, walk=False)
    walked, _ = _load(path, walk=True)
    assert session_facts(shortcut) == session_facts(walked)
    return linked


def _paths() -> list[Path]:
    samples = sorted(SAMPLES.rglob("*.jsonl")) if SAMPLES.is_dir() else []
    return sorted(FIXTURES.glob("*.jsonl")) + samples


@pytest.mark.parametrize("path", _paths(), ids=lambda p: p.name)
def test_the_shortcut_gives_the_walk_s_session(path: Path) -> None:
    _same(path)


def test_a_linear_file_takes_the_shortcut_and_a_rewound_one_does_not(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "hi"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {"id": "m1", "content": [{"type": "text", "text": "hello"}]},
        },
        {"type": "progress", "uuid": "p1", "parentUuid": "a1"},
        {"type": "user", "uuid": "u2", "parentUuid": "p1", "message": {"content": "again"}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert _same(path)
    rows[3]["parentUuid"] = "u1"  # a rewind: the second prompt forks off the first
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert not _same(path)


def test_odd_ids_and_parents_give_the_walk_s_session(tmp_path: Path) -> None:
    rows = _rows(FIXTURES / "recent_lines.jsonl")
    path = tmp_path / "t.jsonl"
    for k in range(len(rows)):
        for field in ("uuid", "parentUuid", "logicalParentUuid", "isSidechain", "type"):
            for value in ODD:
                changed = copy.deepcopy(rows)
                _set(changed[k], (field,), value)
                text = "".join(json.dumps(row) + "\n" for row in changed)
                path.write_text(text, encoding="utf-8")
                _same(path)


def test_a_linked_file_s_assembly_keeps_no_table_of_every_line_s_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linked, each line's parent message is the last one found before it: :attr:`Assembler.
    owner` holds at most one line (it held every line's, 5 MB of a 100 MB session); walked, it
    holds every line that made a message. The sessions are the same either way."""
    made: list[Assembler] = []

    class Kept(Assembler):
        def run(self, entries: list[Entry]) -> None:
            made.append(self)
            super().run(entries)

    monkeypatch.setattr(claude_code, "Assembler", Kept)
    rows: list[dict[str, Any]] = []
    for k in range(6):
        rows.append({"type": "user", "uuid": f"u{k}", "message": {"content": f"prompt {k}"}})
        rows.append({"type": "progress", "uuid": f"p{k}"})
        reply = {"id": f"m{k}", "content": [{"type": "text", "text": "ok"}]}
        rows.append({"type": "assistant", "uuid": f"a{k}", "message": reply})
    uuids = [row["uuid"] for row in rows]
    for row, parent in zip(rows, [None, *uuids], strict=False):
        row["parentUuid"] = parent
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert _same(path)
    linked, walked = made
    assert len(linked.owner) <= 1
    assert len(walked.owner) == 12
