"""Where the tests find the repository's files, whatever folder of tests/ they sit in."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository's root (sample_sessions/, pyproject.toml, README.md)."""
TESTS = REPO / "tests"
"""tests/ (its fixtures/ are the hand-written session files)."""
