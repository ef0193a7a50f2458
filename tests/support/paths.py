"""Where the tests find the repository's files, whatever folder of tests/ they sit in."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository's root (sample_sessions/, pyproject.toml, README.md)."""
TESTS = REPO / "tests"
"""tests/ (its fixtures/ are the hand-written session files)."""


def opencode_storage_piece(path: Path) -> bool:
    """A message or part file of an opencode storage folder: read with its session's file (under
    ``storage/session``), not a session on its own."""
    parts = path.parts
    return "storage" in parts and parts[parts.index("storage") + 1 :][:1] in (
        ("message",),
        ("part",),
    )
