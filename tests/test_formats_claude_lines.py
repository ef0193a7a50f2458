"""Claude Code's newer line types (2.1.1xx–2.1.2xx): bookkeeping read quietly, attachments the
model is sent counted as context, usage of advisor responses, the agent's version and provider.

``fixtures/claude/recent_lines.jsonl`` is a hand-written session in the shape of 2.1.226 files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.models import Session, Severity

FIXTURES = Path(__file__).parent / "fixtures" / "claude"
RECENT = FIXTURES / "recent_lines.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recent() -> Session:
    return load_session(RECENT)


def test_bookkeeping_lines_load_without_noise(recent: Session) -> None:
    # mode, permission-mode, agent-name, last-prompt, file-history-delta, custom-title, ai-title
    # and the system subtypes stop_hook_summary / turn_duration / away_summary / informational
    # are all known: nothing about them in the diagnostics (the one attachment type from a
    # future version is the only note).
    assert [d.code for d in recent.diagnostics if d.code != "unknown-attachment"] == []


def test_titles_and_agent_name(recent: Session) -> None:
    assert recent.metadata["title"] == "Cart totals"  # the user's custom title wins
    assert recent.metadata["agent_name"] == "Fix the cart total"


def test_custom_title_wins_whatever_the_order(tmp_path: Path) -> None:
    rows = _rows(RECENT)
    custom = next(r for r in rows if r["type"] == "custom-title")
    rows.remove(custom)
    session = load_session(_write(tmp_path / "t.jsonl", [*rows, custom]))
    assert session.metadata["title"] == "Cart totals"
    without = [r for r in rows if r["type"] != "custom-title"]
    assert load_session(_write(tmp_path / "u.jsonl", without)).metadata["title"] == (
        "Fix cart total rounding"  # the last ai-title
    )


def test_a_header_line_of_another_tool_is_an_info(tmp_path: Path) -> None:
    rows = [{"_type": "hive-mind-meta", "version": "0.1", "sessionId": "x"}, *_rows(RECENT)]
    session = load_session(_write(tmp_path / "hive.jsonl", rows))
    notes = [d for d in session.diagnostics if d.code == "foreign-record"]
    assert [(d.line, d.severity) for d in notes] == [(1, Severity.INFO)]
    assert not [d for d in session.diagnostics if d.code == "unknown-record"]
