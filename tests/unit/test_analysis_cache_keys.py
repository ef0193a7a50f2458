"""The fleet cache keys on content and never trusts an error or a link: a
same-size rewrite with its mtime put back is analysed again; an error row is never kept; a
symbolic link at the cache's path is never written through."""

from __future__ import annotations

import os
from pathlib import Path

from core.analysis_cache import CACHE_FILE, AnalysisCache, cache_dir, fingerprint
from core.fleet.session_rows import FleetRow
from core.fleet.survey import CACHE_KIND, cached_rows, fleet
from tests.support.paths import REPO

SAMPLES = REPO / "sample_sessions"


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "s.jsonl"
    path.parent.mkdir()
    path.write_bytes((SAMPLES / "pi" / "session.jsonl").read_bytes())
    return path


def test_a_same_size_rewrite_with_its_mtime_restored_is_analysed_again(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    first = fleet([str(path)], jobs=1)
    assert first.analysed == 1
    before = path.stat()
    data = bytearray(path.read_bytes())
    tail = data.rindex(b"a")  # one letter near the end becomes another: same size
    data[tail : tail + 1] = b"b"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    again = fleet([str(path)], jobs=1)
    assert (again.cached, again.analysed) == (0, 1)


def test_an_error_row_is_never_kept(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text("not a session\n")
    report = fleet([str(path)], jobs=1)
    assert report.rows[0].error is not None
    assert cached_rows([str(path)]) == {}
    # nor trusted when an older ctxscope stored one
    cache = AnalysisCache(version=_version())
    row = FleetRow(path=str(path), error="permission denied").model_dump_json().encode()
    cache.put(CACHE_KIND, str(path), fingerprint(str(path)), row)
    assert cached_rows([str(path)], cache) == {}


def _version() -> str:
    from core.fleet.survey import default_cache

    return default_cache().version


def test_a_link_at_the_cache_path_is_never_written_through(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    victim = tmp_path / "victim.db"
    victim.write_bytes(b"")  # an empty file: SQLite would take it for a new database
    folder = cache_dir()
    folder.mkdir(parents=True)
    (folder / CACHE_FILE).symlink_to(victim)
    report = fleet([str(path)], jobs=1)
    assert report.analysed == 1 and report.rows[0].error is None  # the run goes on without it
    assert victim.read_bytes() == b""
    assert (folder / CACHE_FILE).is_symlink()
