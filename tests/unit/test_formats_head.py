"""load_session_head: the first part of a big file, exactly as a file cut there would load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.formats import LoadError, load_session, load_session_head
from tests.support.paths import REPO

SAMPLES = REPO / "sample_sessions"

JSONL_SAMPLES = [
    SAMPLES / "claude-code" / "long.jsonl",
    SAMPLES / "codex" / "rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl",
    SAMPLES / "pi" / "session.jsonl",
    SAMPLES / "ctxscope" / "long.jsonl",
]


def _cut_copy(path: Path, head_bytes: int, folder: Path) -> Path:
    """A copy of ``path`` holding only the complete lines of its first ``head_bytes`` bytes."""
    data = path.read_bytes()[:head_bytes]
    cut = folder / path.name
    cut.write_bytes(data[: data.rfind(b"\n") + 1])
    return cut


@pytest.mark.parametrize("path", JSONL_SAMPLES, ids=lambda p: p.parent.name)
def test_head_is_what_the_file_cut_there_loads(path: Path, tmp_path: Path) -> None:
    assert path.is_file(), f"sample session missing: {path} (make samples)"
    size = path.stat().st_size
    head_bytes = size // 3
    head = load_session_head(path, head_bytes)
    assert head is not None
    cut = load_session(_cut_copy(path, head_bytes, tmp_path))
    whole = load_session(path)
    assert 0 < len(head.messages) < len(whole.messages)
    assert [m.id for m in head.messages] == [m.id for m in cut.messages]
    assert [m.text for m in head.messages] == [m.text for m in cut.messages]
    assert head.format == whole.format and head.model == whole.model
    assert head.metadata["partial"] == {"bytes_read": head_bytes, "total_bytes": size}
    # the line the head cuts is not reported as a broken last line: it is not part of the head
    assert "partial-last-line" not in {d.code for d in head.diagnostics}
    # the file was only read
    assert path.stat().st_size == size


def test_head_cut_inside_a_line_leaves_that_line_out(tmp_path: Path) -> None:
    source = SAMPLES / "claude-code" / "overflow.jsonl"
    path = tmp_path / "s.jsonl"
    shutil.copyfile(source, path)
    data = path.read_bytes()
    second_newline = data.index(b"\n", data.index(b"\n") + 1)
    on_boundary = load_session_head(path, second_newline + 1)
    inside = load_session_head(path, second_newline + 50)
    assert on_boundary is not None and inside is not None
    assert [m.id for m in inside.messages] == [m.id for m in on_boundary.messages]


def test_no_head_for_small_files_or_formats_read_whole(tmp_path: Path) -> None:
    small = SAMPLES / "pi" / "branched.jsonl"
    assert load_session_head(small, small.stat().st_size) is None
    export = SAMPLES / "opencode" / "export.json"
    assert load_session_head(export, 1000) is None  # one JSON document: no first part
    storage = SAMPLES / "opencode" / "storage"
    assert load_session_head(storage, 1000) is None


def test_an_empty_head_holds_no_record() -> None:
    """A head of 0 bytes is an empty file cut (it once read the whole file, a byte at a time)."""
    path = SAMPLES / "claude-code" / "overflow.jsonl"
    with pytest.raises(LoadError, match="empty file"):
        load_session_head(path, 0)
