"""Session discovery over a fake home: every agent's folder, env overrides, newest first."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.formats.discovery import (
    claude_project_dirs,
    codex_home,
    discover_sessions,
    opencode_data_dir,
    pi_sessions_dir,
)
from core.model.session import SourceFormat
from tests.support.paths import TESTS
from tests.unit.test_formats_opencode import _export, _other_session, write_db, write_storage

PI_FIXTURE = TESTS / "fixtures" / "pi" / "v3-tree.jsonl"
ENV = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return home


def _jsonl(path: Path, records: list[dict[str, Any]], mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(path, (mtime, mtime))
    return path


def _claude_lines(cwd: str, prompt: str) -> list[dict[str, Any]]:
    return [
        {"type": "summary", "summary": "Legacy title line", "leafUuid": "u9"},
        {"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}},
        {
            "type": "user",
            "uuid": "u0",
            "cwd": cwd,
            "isMeta": True,
            "message": {
                "role": "user",
                "content": "<local-command-caveat>x</local-command-caveat>",
            },
        },
        {"type": "user", "uuid": "u1", "cwd": cwd, "message": {"role": "user", "content": prompt}},
    ]


def _codex_lines(cwd: str, prompt: str) -> list[dict[str, Any]]:
    return [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "019e-abc", "cwd": cwd}},
        {
            "timestamp": "t",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                ],
            },
        },
        {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": prompt},
        },
    ]


def test_default_locations(home: Path) -> None:
    assert home / ".claude" / "projects" in claude_project_dirs()
    assert home / ".config" / "claude" / "projects" in claude_project_dirs()
    assert codex_home() == home / ".codex"
    assert pi_sessions_dir() == home / ".pi" / "agent" / "sessions"
    assert opencode_data_dir() == home / ".local" / "share" / "opencode"


def test_env_overrides(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path / 'c1'},{tmp_path / 'c2'}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pa"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    dirs = claude_project_dirs()
    assert dirs[:2] == [tmp_path / "c1" / "projects", tmp_path / "c2" / "projects"]
    assert codex_home() == tmp_path / "cx"
    assert pi_sessions_dir() == tmp_path / "pa" / "sessions"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "ps"))
    assert pi_sessions_dir() == tmp_path / "ps"
    assert opencode_data_dir() == tmp_path / "xdg" / "opencode"


def test_discovers_every_agent_newest_first(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = _jsonl(
        home / ".claude" / "projects" / "-home-dev-app" / "s-claude.jsonl",
        _claude_lines("/home/dev/app", "make the build green"),
        1_000,
    )
    _jsonl(home / ".claude" / "projects" / "-home-dev-app" / "agent-123.jsonl", [], 9_000)
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    other_claude = _jsonl(
        config / "projects" / "-w" / "s-other.jsonl", _claude_lines("/w", "second"), 1_500
    )
    codex = _jsonl(
        home
        / ".codex"
        / "sessions"
        / "2026"
        / "01"
        / "05"
        / "rollout-2026-01-05T10-00-00-019e.jsonl",
        _codex_lines("/home/dev/api", "fix the flaky test"),
        3_000,
    )
    pi_dir = home / ".pi" / "agent" / "sessions" / "--home-dev-shop--"
    pi_dir.mkdir(parents=True)
    pi = pi_dir / "2026-01-05T10-00-00-000Z_7d1c.jsonl"
    shutil.copyfile(PI_FIXTURE, pi)
    os.utime(pi, (2_000, 2_000))

    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    doc = _export()
    updated = doc["info"]["time"]["updated"]
    child = _other_session(doc, "ses_child", updated + 1, "child")
    write_db([doc, child], data / "opencode.db", {"ses_child": doc["info"]["id"]})
    legacy = _other_session(doc, "ses_legacy", 500_000, "legacy one")
    write_storage(legacy, data)
    write_storage(doc, data)  # already in the database: listed once

    found = discover_sessions()
    by_path = {s.path: s for s in found}
    assert [s.when for s in found] == sorted((s.when for s in found), reverse=True)
    assert str(home / ".claude" / "projects" / "-home-dev-app" / "agent-123.jsonl") not in by_path

    c = by_path[str(claude)]
    assert c.format is SourceFormat.CLAUDE_CODE and c.project == "/home/dev/app"
    assert c.title == "Legacy title line" and c.size_bytes == claude.stat().st_size
    assert by_path[str(other_claude)].format is SourceFormat.CLAUDE_CODE

    x = by_path[str(codex)]
    assert x.format is SourceFormat.CODEX and x.project == "/home/dev/api"
    assert x.title == "fix the flaky test"

    p = by_path[str(pi)]
    assert p.format is SourceFormat.PI and p.project == "/home/dev/shop"
    assert p.title == "add a discount field to the cart"

    opencode = [s for s in found if s.format is SourceFormat.OPENCODE]
    ids = sorted(s.session_id or "" for s in opencode)
    assert ids == sorted([doc["info"]["id"], "ses_legacy", "ses_child"])  # no duplicate
    child_found = next(s for s in opencode if s.session_id == "ses_child")
    assert child_found.parent_session_id == doc["info"]["id"]  # grouped under its parent
    in_db = next(s for s in opencode if s.session_id == doc["info"]["id"])
    assert in_db.path == f"{data / 'opencode.db'}#{doc['info']['id']}"
    assert in_db.modified == updated / 1000 and in_db.title == doc["info"]["title"]
    assert load_session(in_db.path).id == doc["info"]["id"]
    legacy_found = next(s for s in opencode if s.session_id == "ses_legacy")
    assert legacy_found.title == "legacy one" and load_session(legacy_found.path).id == "ses_legacy"

    # the two newest by their own time (not the two files modified last: the legacy opencode
    # session's file is new, its own time is not). The search stops at the first file older
    # than the two kept, so it relies on a session's time being no later than its file's: a
    # fixture file whose mtime was set before its own records is not a file an agent wrote.
    newest = discover_sessions(limit=2)
    assert len(newest) == 2
    assert [s.when for s in newest] == sorted((s.when for s in newest), reverse=True)
    written = [s for s in found if s.when <= s.modified and s.path not in {n.path for n in newest}]
    assert all(s.when <= newest[-1].when for s in written)


def test_missing_and_broken_locations(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert discover_sessions() == []
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    monkeypatch.setenv("CODEX_HOME", str(not_a_dir))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(not_a_dir))
    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    (data / "opencode.db").write_bytes(b"not a database at all")
    assert discover_sessions() == []


def test_discovery_never_writes(home: Path) -> None:
    path = _jsonl(home / ".claude" / "projects" / "p" / "s.jsonl", _claude_lines("/p", "x"), 10)
    before = (path.stat().st_mtime_ns, path.read_bytes())
    discover_sessions()
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_folder_that_raises_is_skipped(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the OS refuses to list (permissions) hides only that folder."""
    good = _jsonl(home / ".claude" / "projects" / "ok" / "a.jsonl", _claude_lines("/a", "hi"), 10)
    locked = home / ".claude" / "projects" / "locked"
    _jsonl(locked / "b.jsonl", _claude_lines("/b", "hi"), 20)
    real_scandir = os.scandir

    def refusing(path):  # type: ignore[no-untyped-def]
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr("core.formats.discovery.os.scandir", refusing)
    assert [s.path for s in discover_sessions()] == [str(good)]


def test_the_date_is_the_sessions_own_time(home: Path) -> None:
    # Regression: a copied (or touched) file keeps its session's date, read from its tail
    lines = _claude_lines("/home/dev/app", "make the build green")
    lines[-1]["timestamp"] = "2026-01-05T10:00:00.000Z"
    lines.append(
        {
            "type": "assistant",
            "uuid": "a1",
            "timestamp": "2026-01-05T10:15:30.000Z",
            "message": {"role": "assistant", "content": "x" * 100_000},  # a long last line
        }
    )
    copied = _jsonl(home / ".claude" / "projects" / "-a" / "copied.jsonl", lines, 4_000_000_000)
    undated = _jsonl(
        home / ".claude" / "projects" / "-a" / "undated.jsonl",
        _claude_lines("/home/dev/app", "no dates"),
        1_000,
    )
    found = {s.path: s for s in discover_sessions()}
    session = found[str(copied)]
    assert session.last_active == 1_767_608_130.0  # 2026-01-05T10:15:30Z, not the file's time
    assert session.when == session.last_active and session.when_iso.startswith("2026-01-05")
    assert found[str(undated)].last_active is None  # no timestamp: the file's time, said so
    assert found[str(undated)].when == 1_000
