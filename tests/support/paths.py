"""Where the tests find the repository's files, whatever folder of tests/ they sit in."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from core.model.session import Session

REPO = Path(__file__).resolve().parents[2]
"""The repository's root (sample_sessions/, pyproject.toml, README.md)."""
TESTS = REPO / "tests"
"""tests/ (its fixtures/ are the hand-written session files)."""
SHARED = REPO.parent / "shared"
"""The real sessions beside the project (``samples/``, ``new-formats/``), when present."""


def small_shared_files(limit: int = 8_000_000) -> list[Path]:
    """The session files of ``../shared`` (one folder down in each collection) under ``limit``
    bytes, without a Claude Code sub-agent's metadata (``*.meta.json``); empty when the folder is
    absent."""
    found = sorted(SHARED.glob("*/*/*.jsonl")) + sorted(SHARED.glob("*/*/*.json"))
    return [p for p in found if p.stat().st_size < limit and not p.name.endswith(".meta.json")]


def load_shared_or_skip(path: Path | None) -> Session:
    """The session of a file :func:`small_shared_files` gave (a test parametrised with
    ``small_shared_files() or [None]`` skips when there are none; a file that does not load
    fails the test)."""
    from core.formats import load_session

    if path is None:
        pytest.skip("shared samples are not available")
    return load_session(path)


def opencode_storage_piece(path: Path) -> bool:
    """A file of an opencode storage folder other than a session's own (under
    ``storage/session``): a message, a part or a project, read with the session, not a session
    on its own."""
    parts = path.parts
    return "storage" in parts and parts[parts.index("storage") + 1 :][:1] != ("session",)
