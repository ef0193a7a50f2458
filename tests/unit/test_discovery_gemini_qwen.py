"""Discovery finds Gemini CLI and Qwen Code sessions where the agents keep them (and where
their environment variables move them), with their id, project and first prompt; a Gemini
sub-agent chat is not listed on its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.formats.discovery import discover_sessions, gemini_tmp_dir, qwen_projects_dir
from core.model.session import SourceFormat
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"
ENV = ("GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "no-pi"))
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return home


def _place(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def _gemini_tree(tmp: Path) -> None:
    chats = tmp / "3f9a" / "chats"
    _place(FIXTURES / "gemini" / "rewind.jsonl", chats / "session-2026-05-01T10-00-gemrewin.jsonl")
    _place(FIXTURES / "gemini" / "single.json", chats / "session-2026-05-03T08-00-gemsingl.json")
    _place(
        FIXTURES / "gemini" / "chats" / "1f0c2a9e-parent-session" / "sub-7.jsonl",
        chats / "gem-rewind-0001" / "sub-7.jsonl",
    )


def test_default_locations(home: Path) -> None:
    assert gemini_tmp_dir() == home / ".gemini" / "tmp"
    assert qwen_projects_dir() == home / ".qwen" / "projects"


def test_env_overrides(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    assert gemini_tmp_dir() == tmp_path / "g" / ".gemini" / "tmp"
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "q"))
    assert qwen_projects_dir() == tmp_path / "q" / "projects"
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "r"))
    assert qwen_projects_dir() == tmp_path / "r" / "projects"


def test_gemini_chats_are_found_and_described(home: Path) -> None:
    _gemini_tree(home / ".gemini" / "tmp")
    found = {Path(s.path).name: s for s in discover_sessions()}
    assert set(found) == {
        "session-2026-05-01T10-00-gemrewin.jsonl",
        "session-2026-05-03T08-00-gemsingl.json",
    }  # the sub-agent chat under its parent's folder is not listed on its own
    jsonl = found["session-2026-05-01T10-00-gemrewin.jsonl"]
    assert jsonl.format is SourceFormat.GEMINI_CLI
    assert (jsonl.session_id, jsonl.project, jsonl.title) == (
        "gem-rewind-0001",
        "/home/dev/app",
        "List the files.",
    )
    single = found["session-2026-05-03T08-00-gemsingl.json"]
    assert single.format is SourceFormat.GEMINI_CLI and single.title == "What is in src?"


def test_gemini_cli_home_moves_the_chats(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _gemini_tree(tmp_path / "profile" / ".gemini" / "tmp")
    assert discover_sessions() == []
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "profile"))
    assert len(discover_sessions()) == 2


def test_qwen_logs_are_found_and_described(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = home / ".qwen" / "projects" / "-home-dev-app" / "chats" / "qwen-0001.jsonl"
    _place(FIXTURES / "qwen" / "branch-compress.jsonl", target)
    (found,) = discover_sessions()
    assert found.format is SourceFormat.QWEN_CODE
    assert (found.session_id, found.project, found.title) == (
        "qwen-0001",
        "/home/dev/app",
        "Read main.py",
    )
    moved = tmp_path / "qwen-home" / "projects" / "-work" / "chats" / "qwen-0002.jsonl"
    _place(FIXTURES / "qwen" / "branch-compress.jsonl", moved)
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "qwen-home"))
    assert [Path(s.path).name for s in discover_sessions()] == ["qwen-0002.jsonl"]
