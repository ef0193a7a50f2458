"""Compressed Codex rollouts (``.jsonl.zst``, Codex 0.137+): read as a stream wherever a
``.jsonl`` is (loading, detection, the detail view's raw record, folders on the command line,
discovery), and a cut or corrupt stream is one clear sentence, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from core.formats import LoadError, detect_format, load_session, load_session_head
from core.formats.compressed import CompressedError, open_session
from core.formats.discovery import discover_sessions
from core.formats.jsonl import read_record
from core.formats.session_paths import expand_paths
from core.model.session import SourceFormat, to_record
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"
NAME = "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
PLAIN = FIXTURES / "codex" / NAME
COMPRESSED = FIXTURES / "zst" / f"{NAME}.zst"  # the plain rollout in two zstd frames


def test_the_fixture_is_the_plain_rollout_in_two_frames() -> None:
    data = COMPRESSED.read_bytes()
    assert data.count(b"\x28\xb5\x2f\xfd") >= 2
    with open_session(COMPRESSED) as handle:
        assert handle.read() == PLAIN.read_bytes()


def test_a_compressed_rollout_loads_like_the_plain_one() -> None:
    assert detect_format(COMPRESSED) is SourceFormat.CODEX
    compressed, plain = load_session(COMPRESSED), load_session(PLAIN)
    assert compressed.id == plain.id
    assert [to_record(m) for m in compressed.messages] == [to_record(m) for m in plain.messages]
    assert compressed.compactions == plain.compactions
    assert compressed.context_window == plain.context_window


def test_progress_counts_the_compressed_bytes() -> None:
    seen: list[tuple[int, int]] = []
    load_session(COMPRESSED, progress=lambda done, total, _: seen.append((done, total)))
    size = COMPRESSED.stat().st_size
    assert seen and seen[-1] == (size, size)
    assert all(done <= total == size for done, total in seen)


def test_the_detail_view_rereads_a_record_inside_the_stream() -> None:
    session = load_session(COMPRESSED)
    message = session.messages[-1]
    assert message.source_offset is not None and message.source_offset > 0
    assert read_record(COMPRESSED, message.source_offset) == read_record(
        PLAIN, message.source_offset
    )


def test_no_quick_head_of_a_compressed_file() -> None:
    assert load_session_head(COMPRESSED, 1024) is None


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda data: data[: len(data) // 2], "truncated zstd stream"),
        (lambda data: data[:4], "truncated zstd stream"),
        (lambda data: b"\x28\xb5\x2f\xfd" + os.urandom(200), "corrupt zstd stream"),
        (lambda data: b"not zstd at all\n" * 10, "corrupt zstd stream"),
    ],
)
def test_bad_streams_are_one_clear_sentence(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"bad-{NAME}.zst"
    path.write_bytes(make(COMPRESSED.read_bytes()))
    with pytest.raises(LoadError) as caught:
        load_session(path)
    message = str(caught.value)
    assert why in message and str(path) in message and "\n" not in message


def test_a_stream_cut_after_its_first_frame_still_fails(tmp_path: Path) -> None:
    data = COMPRESSED.read_bytes()
    second = data.index(b"\x28\xb5\x2f\xfd", 4)
    path = tmp_path / f"cut-{NAME}.zst"
    path.write_bytes(data[: second + (len(data) - second) // 2])
    with pytest.raises(LoadError, match="truncated zstd stream"):
        load_session(path)
    with pytest.raises(CompressedError), open_session(path) as handle:
        handle.read()


def test_the_command_line_says_one_line_for_a_bad_stream(tmp_path: Path) -> None:
    path = tmp_path / f"cut-{NAME}.zst"
    path.write_bytes(COMPRESSED.read_bytes()[:900])
    done = subprocess.run(
        [sys.executable, "-m", "tui", "analyze", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert "truncated zstd stream" in done.stderr + done.stdout


def test_a_folder_on_the_command_line_takes_compressed_rollouts(tmp_path: Path) -> None:
    (tmp_path / COMPRESSED.name).write_bytes(COMPRESSED.read_bytes())
    (tmp_path / "notes.zst").write_bytes(b"x")
    found, problems = expand_paths([str(tmp_path)])
    assert [p.name for p in found] == [COMPRESSED.name] and problems == []


def test_discovery_lists_compressed_rollouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    day = tmp_path / "codex" / "sessions" / "2026" / "04" / "01"
    day.mkdir(parents=True)
    (day / COMPRESSED.name).write_bytes(COMPRESSED.read_bytes())
    archived = tmp_path / "codex" / "archived_sessions"
    archived.mkdir()
    (archived / PLAIN.name).write_bytes(PLAIN.read_bytes())
    found = {Path(s.path).name: s for s in discover_sessions()}
    assert set(found) == {COMPRESSED.name, PLAIN.name}
    described = found[COMPRESSED.name]
    assert described.format is SourceFormat.CODEX
    assert described.session_id == found[PLAIN.name].session_id  # read from the stream's head
    assert described.project == found[PLAIN.name].project


def test_zstandard_streams_in_chunks(tmp_path: Path) -> None:
    """A rollout much larger than one read is decompressed piece by piece, line for line."""
    lines = PLAIN.read_bytes() * 400
    path = tmp_path / f"big-{NAME}.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(lines))
    with open_session(path) as handle:
        first = handle.read(4096)
        assert first == lines[:4096]
        assert handle.read() == lines[4096:]
