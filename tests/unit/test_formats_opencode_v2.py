"""opencode 2's ``session_message`` table: read when a session has no ``message`` rows.

``fixtures/opencode/session_message.json`` holds hand-written rows of every type (the shapes of
``packages/core/src/session-message.ts``); the test writes them into an ``opencode.db`` with the
``session_message`` table of ``session.sql.ts``, with a ``seq`` column as later builds have, or
without one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.algorithms.overflow import overflow_reason
from core.formats import detect_format, load_session
from core.formats import opencode as oc
from core.model.session import Role, Session, SourceFormat, UsageConvention
from tests.support.paths import TESTS

FIXTURE = TESTS / "fixtures" / "opencode" / "session_message.json"


def write_v2_db(path: Path, *, with_seq: bool) -> Path:
    doc: dict[str, Any] = json.loads(FIXTURE.read_text())
    info = doc["session"]
    conn = sqlite3.connect(path)
    seq = "seq INTEGER," if with_seq else ""
    conn.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT, directory TEXT, version TEXT, "
        "model TEXT, time_created INTEGER, time_updated INTEGER);"
        f"CREATE TABLE session_message (id TEXT PRIMARY KEY, session_id TEXT, type TEXT, {seq} "
        "time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL);"
    )
    conn.execute(
        "INSERT INTO session VALUES (?,?,?,?,?,?,?)",
        (
            info["id"],
            info["title"],
            info["directory"],
            info["version"],
            json.dumps(info["model"]),
            info["time_created"],
            info["time_updated"],
        ),
    )
    # Written in reverse, so that only the ORDER BY puts them in order.
    for number, row in reversed(list(enumerate(doc["rows"]))):
        created = row["data"]["time"]["created"]
        values = [row["id"], info["id"], row["type"]]
        values += [number] if with_seq else []
        values += [created, created, json.dumps(row["data"])]
        marks = ",".join("?" * len(values))
        conn.execute(f"INSERT INTO session_message VALUES ({marks})", values)
    conn.commit()
    conn.close()
    return path


@pytest.fixture(params=[True, False], ids=["seq", "time_created"])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Session:
    db = write_v2_db(tmp_path / "opencode.db", with_seq=request.param)
    assert detect_format(db) is SourceFormat.OPENCODE
    return load_session(db)


def test_a_2x_database_is_recognised_whatever_its_name(tmp_path: Path) -> None:
    db = write_v2_db(tmp_path / "sessions.sqlite", with_seq=True)
    assert oc.sniff(db, db.read_bytes()[:64]) == 0.95


def test_rows_become_messages_in_order(session: Session) -> None:
    assert session.metadata["table"] == "session_message"
    assert [(m.role, m.id) for m in session.messages] == [
        (Role.USER, "smg_02"),
        (Role.USER, "smg_03"),
        (Role.ASSISTANT, "smg_04"),
        (Role.TOOL, "smg_04#3"),
        (Role.TOOL, "smg_04#4"),
        (Role.ASSISTANT, "smg_05"),
        (Role.USER, "smg_06"),
        (Role.ASSISTANT, "smg_06#summary"),
        (Role.USER, "smg_07"),
        (Role.USER, "smg_08"),
        (Role.ASSISTANT, "smg_09"),
        (Role.USER, "smg_10"),
        (Role.ASSISTANT, "smg_10#summary"),
        (Role.USER, "smg_12"),
    ]
    by_id = {m.id: m for m in session.messages}
    assert by_id["smg_02"].text == "rename the config loader\n\n[Attached text/plain: config.py]"
    assert by_id["smg_02"].is_turn_start
    assert by_id["smg_03"].synthetic and not by_id["smg_03"].is_turn_start
    assert by_id["smg_07"].synthetic
    assert by_id["smg_08"].text == "$ git status --short\n M config.py"
    assert [m.index for m in session.messages if m.is_turn_start] == [
        by_id[i].index for i in ("smg_02", "smg_08", "smg_12")
    ]


def test_assistant_content_tools_and_usage(session: Session) -> None:
    by_id = {m.id: m for m in session.messages}
    call = by_id["smg_04"]
    assert call.reasoning == "Find the loader first." and call.text == "Looking for it."
    assert [(c.id, c.name) for c in call.tool_calls] == [("call_1", "grep"), ("call_2", "read")]
    assert call.usage is not None and call.usage.convention is UsageConvention.OPENCODE
    assert call.usage.context_tokens == 1200 + 150 + 170_000
    assert call.stop_reason == "tool-calls" and call.model == "claude-opus-5"
    grep, read = by_id["smg_04#3"].tool_result, by_id["smg_04#4"].tool_result
    assert grep is not None and read is not None
    assert grep.output == "config.py:3: def load_config():" and not grep.is_error
    assert grep.compacted_at_ms == 1790000009000  # time.pruned
    assert read.is_error and read.output == "File not found: cfg.py"


def test_compactions_and_the_failed_call(session: Session) -> None:
    assert [c.trigger for c in session.compactions] == ["auto", "manual"]
    assert [c.trigger_evidence for c in session.compactions] == [
        "compaction message reason=auto in session_message smg_06",
        "compaction message reason=manual in session_message smg_10",
    ]
    assert [c.tokens_before for c in session.compactions] == [300 + 80 + 171_500] * 2
    assert [c.first_kept_id for c in session.compactions] == [None, None]
    first = session.compactions[0]
    assert session.messages[first.message_index].text == "## Objective\n- rename the config loader"
    failed = next(m for m in session.messages if m.id == "smg_09")
    assert failed.is_model_call and failed.usage is None
    assert overflow_reason(failed, None) == "error"


def test_session_facts(session: Session) -> None:
    assert (session.provider, session.model) == ("anthropic", "claude-opus-5")
    assert session.agent_version == "2.0.0-beta.9"
    assert session.metadata["title"] == "Rename the config loader"
    assert session.diagnostics == []
