"""The opencode loader: export JSON, the legacy storage folder and a read-only opencode.db.

The storage folder and the database are built here from the export fixture, so the three
sources of one session can be compared with each other.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.formats import LoadError, detect_format, load_session
from core.formats import opencode as oc
from core.model.session import Role, Session, SourceFormat, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "opencode" / "export.json"
SAMPLES = REPO.parent / "shared" / "samples"


def _export() -> dict[str, Any]:
    text = FIXTURE.read_text()
    doc: dict[str, Any] = json.loads(text[text.index("{") :])
    return doc


def _snapshot(path: Path) -> tuple[int, bytes]:
    return path.stat().st_mtime_ns, path.read_bytes()


def _shape(session: Session) -> list[tuple[object, ...]]:
    """What must agree between the three sources."""
    return [
        (
            m.role,
            m.id,
            m.text,
            m.reasoning,
            m.tool_calls,
            m.tool_result,
            m.usage,
            m.summary,
            m.meta,
            m.synthetic,
            m.error,
            m.stop_reason,
        )
        for m in session.messages
    ]


def _compactions(session: Session) -> list[dict[str, Any]]:
    """The compactions, but for the evidence: it names the record as each source does."""
    return [c.model_dump(exclude={"trigger_evidence"}) for c in session.compactions]


def write_storage(doc: dict[str, Any], root: Path, project: str = "prj_0a1b") -> Path:
    """The legacy layout: storage/session/<project>/<id>.json, message/<sid>/, part/<mid>/."""
    storage = root / "storage"
    info = doc["info"]
    (storage / "session" / project).mkdir(parents=True, exist_ok=True)
    (storage / "session" / project / f"{info['id']}.json").write_text(json.dumps(info))
    for entry in doc["messages"]:
        msg = entry["info"]
        folder = storage / "message" / info["id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{msg['id']}.json").write_text(json.dumps(msg))
        parts = storage / "part" / msg["id"]
        parts.mkdir(parents=True, exist_ok=True)
        for part in entry["parts"]:
            (parts / f"{part['id']}.json").write_text(json.dumps(part))
    return storage


def write_storage_0x(doc: dict[str, Any], root: Path, folder: str = "home-dev-api") -> Path:
    """The 0.x layout: project/<folder>/storage/session/{info,message,part}/…"""
    storage = root / "project" / folder / "storage" / "session"
    info = doc["info"]
    (storage / "info").mkdir(parents=True, exist_ok=True)
    (storage / "info" / f"{info['id']}.json").write_text(json.dumps(info))
    for entry in doc["messages"]:
        msg = entry["info"]
        (storage / "message" / info["id"]).mkdir(parents=True, exist_ok=True)
        (storage / "message" / info["id"] / f"{msg['id']}.json").write_text(json.dumps(msg))
        parts = storage / "part" / info["id"] / msg["id"]
        parts.mkdir(parents=True, exist_ok=True)
        for part in entry["parts"]:
            (parts / f"{part['id']}.json").write_text(json.dumps(part))
    return storage.parent


SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
  directory TEXT, title TEXT, version TEXT, share_url TEXT, summary_diffs TEXT, revert TEXT,
  time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
  time_updated INTEGER, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,
  time_updated INTEGER, data TEXT NOT NULL);
"""


def write_db(
    docs: list[dict[str, Any]], path: Path, parent_of: dict[str, str] | None = None
) -> Path:
    """An opencode.db holding ``docs``: ``data`` columns without the ids, as opencode stores them."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for doc in docs:
        info = doc["info"]
        sid = info["id"]
        conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, "
            "time_created, time_updated) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                sid,
                info.get("projectID"),
                (parent_of or {}).get(sid),
                info.get("slug"),
                info.get("directory"),
                info.get("title"),
                info.get("version"),
                info["time"]["created"],
                info["time"]["updated"],
            ),
        )
        for entry in doc["messages"]:
            msg = entry["info"]
            data = {k: v for k, v in msg.items() if k not in ("id", "sessionID")}
            created = msg["time"]["created"]
            conn.execute(
                "INSERT INTO message VALUES (?,?,?,?,?)",
                (msg["id"], sid, created, created, json.dumps(data)),
            )
            for part in entry["parts"]:
                pdata = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                conn.execute(
                    "INSERT INTO part VALUES (?,?,?,?,?,?)",
                    (part["id"], msg["id"], sid, created, created, json.dumps(pdata)),
                )
    conn.commit()
    conn.close()
    return path


def _other_session(doc: dict[str, Any], sid: str, updated: int, title: str) -> dict[str, Any]:
    text = json.dumps(doc).replace(doc["info"]["id"], sid).replace('"msg_', f'"{sid}_msg_')
    text = text.replace('"prt_', f'"{sid}_prt_')
    other: dict[str, Any] = json.loads(text)
    other["info"]["time"]["updated"] = updated
    other["info"]["title"] = title
    return other


# -- export ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported() -> Session:
    return load_session(FIXTURE)


def test_export_is_detected_despite_leading_text() -> None:
    assert not FIXTURE.read_text().startswith("{")
    assert detect_format(FIXTURE) is SourceFormat.OPENCODE


def test_export_messages_follow_steps_and_tool_parts(exported: Session) -> None:
    doc = _export()
    tool_parts = [p for e in doc["messages"] for p in e["parts"] if p["type"] == "tool"]
    tools = [m for m in exported.messages if m.role is Role.TOOL]
    results = [m.tool_result for m in tools]
    assert [r.call_id if r else None for r in results] == [p["callID"] for p in tool_parts]
    # one assistant message per step of each non-summary assistant message
    steps = sum(
        max(1, sum(p["type"] == "step-start" for p in e["parts"]))
        for e in doc["messages"]
        if e["info"]["role"] == "assistant" and not e["info"].get("summary")
    )
    assert len(exported.model_calls()) == steps
    calls = [c.id for m in exported.model_calls() for c in m.tool_calls]
    assert calls == [p["callID"] for p in tool_parts]
    # every tool message follows the assistant step that called it
    for tool in tools:
        caller = next(m for m in exported.messages if m.id == tool.parent_id)
        assert caller.index < tool.index
        assert tool.tool_result is not None
        assert tool.tool_result.call_id in {c.id for c in caller.tool_calls}


def test_export_tool_results(exported: Session) -> None:
    doc = _export()
    parts = {p["callID"]: p for e in doc["messages"] for p in e["parts"] if p["type"] == "tool"}
    results = {m.tool_result.call_id: m.tool_result for m in exported.messages if m.tool_result}
    for call_id, part in parts.items():
        state = part["state"]
        result = results[call_id]
        assert result.tool_name == part["tool"]
        assert result.is_error == (state["status"] != "completed")
        assert result.compacted_at_ms == state.get("time", {}).get("compacted")
        assert result.truncated_by_tool == bool(state.get("metadata", {}).get("truncated"))
        if state["status"] == "completed":
            assert result.output == state["output"]
        elif state["status"] == "error":
            assert result.output == state["error"]
        else:
            assert result.output == oc.INTERRUPTED_TOOL_OUTPUT
    assert any(d.code == "tool-not-finished" for d in exported.diagnostics)


def test_export_usage_per_step(exported: Session) -> None:
    doc = _export()
    finishes = [
        p["tokens"]
        for e in doc["messages"]
        if e["info"]["role"] == "assistant" and not e["info"].get("summary")
        for p in e["parts"]
        if p["type"] == "step-finish"
    ]
    usages = [m.usage for m in exported.model_calls() if m.usage is not None]
    assert len(usages) == len(finishes)
    for usage, tokens in zip(usages, finishes, strict=True):
        assert usage.convention is UsageConvention.OPENCODE
        assert usage.input == tokens["input"] and usage.output == tokens["output"]
        assert usage.cache_read == tokens["cache"]["read"]
        assert usage.cache_write == tokens["cache"]["write"]
        assert usage.total == tokens.get("total")
        expected = tokens.get("total") or (
            tokens["input"] + tokens["output"] + tokens["cache"]["read"] + tokens["cache"]["write"]
        )
        assert usage.context_tokens == expected


def test_export_compaction_and_summaries(exported: Session) -> None:
    doc = _export()
    summaries = [
        e
        for e in doc["messages"]
        if e["info"]["role"] == "assistant" and e["info"].get("summary") is True
    ]
    user_diff_summaries = [e for e in doc["messages"] if isinstance(e["info"].get("summary"), dict)]
    assert user_diff_summaries, "the fixture must hold a user diff summary"
    assert len(exported.compactions) == len(summaries) == 1
    event = exported.compactions[0]
    message = exported.messages[event.message_index]
    assert message.summary and message.id == summaries[0]["info"]["id"]
    assert not message.is_model_call
    request = next(p for e in doc["messages"] for p in e["parts"] if p["type"] == "compaction")
    assert event.first_kept_id == request["tail_start_id"]
    assert event.trigger == "auto"
    assert any(
        m.id == event.first_kept_id and m.index < event.message_index for m in exported.messages
    )
    last_call = [m for m in exported.messages[: event.message_index] if m.is_model_call][-1]
    assert last_call.usage is not None
    assert event.tokens_before == last_call.usage.context_tokens
    # the compaction request is a meta message, not a turn start; the diff summary is ignored
    request_message = exported.messages[event.message_index - 1]
    assert request_message.meta and not request_message.is_turn_start
    assert not any(m.summary for m in exported.messages if m.role is Role.USER)
    # the synthetic continue message is flagged
    after = exported.messages[event.message_index + 1]
    assert after.synthetic and not after.is_turn_start


def test_export_session_fields(exported: Session) -> None:
    doc = _export()
    assert exported.id == doc["info"]["id"]
    assert exported.project == doc["info"]["directory"]
    assert exported.metadata["title"] == doc["info"]["title"]
    assert exported.model == "claude-sonnet-4-5"
    # the provider's overflow error states the limit ("… > 200000 maximum"): the window is that
    assert exported.context_window == 200_000 and exported.window_source == "recorded"
    assert exported.window_evidence is not None and "overflow error" in exported.window_evidence
    error = exported.messages[-1]
    assert error.error and error.error.startswith("ContextOverflowError")


def test_truncated_export_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(FIXTURE.read_bytes()[:2000])
    with pytest.raises(LoadError, match="truncated export"):
        oc.load(path)


# -- storage folder and database agree with the export ----------------------------------------


def test_storage_folder_matches_export(tmp_path: Path, exported: Session) -> None:
    storage = write_storage(_export(), tmp_path)
    for path in (storage, tmp_path, next((storage / "session").rglob("*.json"))):
        assert detect_format(path) is SourceFormat.OPENCODE
        session = load_session(path)
        assert _shape(session) == _shape(exported)
        assert _compactions(session) == _compactions(exported)


def test_0x_storage_folder_matches_export(tmp_path: Path, exported: Session) -> None:
    storage = write_storage_0x(_export(), tmp_path)
    session_file = next((storage / "session" / "info").glob("*.json"))
    for path in (storage, storage.parent, session_file):
        assert detect_format(path) is SourceFormat.OPENCODE
        session = load_session(path)
        assert _shape(session) == _shape(exported)
        assert _compactions(session) == _compactions(exported)
        assert session.metadata["storage_layout"] == "0.x"
    assert load_session(f"{storage}#{exported.id}").id == exported.id


def test_database_matches_export(tmp_path: Path, exported: Session) -> None:
    db = write_db([_export()], tmp_path / "opencode.db")
    before = _snapshot(db)
    files_before = sorted(p.name for p in tmp_path.iterdir())
    assert detect_format(db) is SourceFormat.OPENCODE
    session = load_session(db)
    assert _shape(session) == _shape(exported)
    assert _compactions(session) == _compactions(exported)
    assert session.path == f"{db}#{exported.id}"
    assert session.metadata["source"] == "sqlite"
    assert _snapshot(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files_before


def test_database_newest_session_or_fragment(tmp_path: Path) -> None:
    doc = _export()
    older = _other_session(doc, "ses_older", doc["info"]["time"]["updated"] - 10_000, "older")
    newer = _other_session(doc, "ses_newer", doc["info"]["time"]["updated"] + 10_000, "newer")
    child = _other_session(doc, "ses_child", doc["info"]["time"]["updated"] + 99_000, "child")
    db = write_db([doc, older, newer, child], tmp_path / "opencode.db", {"ses_child": "ses_newer"})
    assert load_session(db).id == "ses_newer"  # newest top-level session, not the sub-agent one
    picked = load_session(f"{db}#ses_older")
    assert picked.id == "ses_older" and picked.metadata["title"] == "older"
    assert detect_format(f"{db}#ses_older") is SourceFormat.OPENCODE
    with pytest.raises(LoadError, match="no session 'ses_missing'"):
        load_session(f"{db}#ses_missing")


def test_locked_database_is_read_or_refused_cleanly(tmp_path: Path, exported: Session) -> None:
    db = write_db([_export()], tmp_path / "opencode.db")
    holder = sqlite3.connect(db, timeout=0)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE session SET title = 'being written'")
    try:
        session = load_session(db)
    finally:
        holder.rollback()
        holder.close()
    # The exclusive lock blocks a normal read; the immutable fallback reads the committed file.
    assert any(d.code == "db-immutable" for d in session.diagnostics)
    assert _shape(session) == _shape(exported)
    assert session.metadata["title"] == _export()["info"]["title"]


def test_unknown_schema_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT);"
        "CREATE TABLE event (id TEXT, session_id TEXT, type TEXT, data TEXT);"
        "INSERT INTO session VALUES ('ses_1', 't');"
    )
    conn.commit()
    conn.close()
    before = _snapshot(db)
    with pytest.raises(LoadError, match="no 'message' table"):
        load_session(db, format="opencode")
    assert _snapshot(db) == before


def test_bad_rows_become_diagnostics(tmp_path: Path) -> None:
    db = write_db([_export()], tmp_path / "opencode.db")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE part SET data = '{not json' WHERE id = 'prt_04b'")
    conn.execute("INSERT INTO part VALUES ('prt_zz', 'msg_gone', 'ses_fixture01', 0, 0, '{}')")
    conn.commit()
    conn.close()
    session = load_session(db)
    codes = [d.code for d in session.diagnostics]
    assert "invalid-json" in codes and "orphan-part" in codes
    refactor = next(m for m in session.messages if m.id == "msg_04")
    assert refactor.text == ""  # its only text part was the broken one


def test_not_a_database(tmp_path: Path) -> None:
    fake = tmp_path / "opencode.db"
    fake.write_bytes(oc.SQLITE_MAGIC + b"\x00" * 200)
    with pytest.raises(LoadError):
        oc.load(fake)


# -- the shared sample -----------------------------------------------------------------------


def test_sample_storage_folder() -> None:
    storage = SAMPLES / "opencode" / "storage"
    if not storage.exists():
        pytest.skip("shared samples are not available")
    parts = [json.loads(p.read_text()) for p in (storage / "part").rglob("*.json")]
    session = load_session(storage)
    tools = [m for m in session.messages if m.role is Role.TOOL]
    assert len(tools) == sum(p["type"] == "tool" for p in parts)
    users = [m for m in session.messages if m.role is Role.USER]
    assert [u.text for u in users] == [p["text"] for p in parts if p["messageID"] == "msg-user-1"]
    assert session.messages[0].role is Role.USER  # ordered by time, not by file name
    call = session.model_calls()[0]
    assert call.usage is not None and call.usage.context_tokens == 1000 + 500 + 200 + 100
