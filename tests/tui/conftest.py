"""Fixtures shared by the TUI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

import tui.screens.session.loading as loading_module
from tests.support.claude_jsonl import write_claude_session


@pytest.fixture
def big_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code session of 60 turns that the app opens as a big file: its first eighth is
    shown first (the preview sizes are set from its size for the test)."""
    path = tmp_path / "session.jsonl"
    write_claude_session(path, 60)
    size = path.stat().st_size
    monkeypatch.setattr(loading_module, "PREVIEW_MIN_BYTES", size // 4)
    monkeypatch.setattr(loading_module, "PREVIEW_BYTES", size // 8)
    return path
