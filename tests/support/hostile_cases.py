"""Builds the hostile inputs that cannot be committed as small files: each case is a
session path (a file, a folder or a database), made in a folder given by the caller.

``python tests/hostile_cases.py DIR`` writes them for a manual run; ``tests/functional/test_hostile_corpus.py``
calls :func:`build` and runs every case through every command and the TUI.

=============================  ===================================================================
case                           what is wrong with it
=============================  ===================================================================
``fifo-subagent``              a Claude Code session with a FIFO named ``agent-x.jsonl`` beside it
``million-values-one-line``    one line holding a million JSON values (``{}{}{}…``, 2 MB)
``million-tiny-lines``         a million lines of ``{}``
``deep-json-line``             a line nested 100,000 deep, then a valid record
``deep-tool-input``            a tool call whose input is nested 1,000 deep
``huge-integer``               a token count of 5,000 digits (too long for ``int()`` of a string)
``read-path-number``           a Read whose ``file_path`` is a number, a list, an object
``bad-dates``                  timestamps of February 30 and 0000-00-00
``non-utf8-name``              a valid session whose file name is not UTF-8
``escape-name``                a valid session whose file name holds terminal escape sequences
``opencode-time-9e18``         an opencode.db whose ``time_updated`` is 9e18
=============================  ===================================================================
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson

SESSION_ID = "11111111-2222-4333-8444-555555555555"
CASES = (
    "fifo-subagent",
    "million-values-one-line",
    "million-tiny-lines",
    "deep-json-line",
    "deep-tool-input",
    "huge-integer",
    "read-path-number",
    "bad-dates",
    "non-utf8-name",
    "escape-name",
    "opencode-time-9e18",
)
"""Every case :func:`build` makes, by name."""


def _claude(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> bytes:
    record = {
        "parentUuid": parent,
        "sessionId": SESSION_ID,
        "version": "2.1.120",
        "type": kind,
        "uuid": uuid,
        "timestamp": extra.pop("timestamp", "2026-05-04T14:00:00.000Z"),
        "message": {"role": kind, "content": content, **extra},
    }
    return orjson.dumps(record) + b"\n"


def _tool_session(tool_input: Any, name: str = "Read", timestamp: str | None = None) -> bytes:
    stamp = {"timestamp": timestamp} if timestamp else {}
    use = {"type": "tool_use", "id": "t1", "name": name, "input": tool_input}
    usage = {"input_tokens": 100, "output_tokens": 10}
    return (
        _claude("u1", None, "user", "go", **stamp)
        + _claude("a1", "u1", "assistant", [use], usage=usage, model="claude-x", **stamp)
        + _claude(
            "u2",
            "a1",
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            **stamp,
        )
    )


def _nested(depth: int) -> bytes:
    """A JSON object nested ``depth`` deep (orjson will not write one that deep)."""
    return b'{"k":' * depth + b'"leaf"' + b"}" * depth


def _opencode_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
          directory TEXT, title TEXT, version TEXT, share_url TEXT, summary_diffs TEXT,
          revert TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER,
          time_archived INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
          time_updated INTEGER, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
          time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL);
        """
    )
    conn.execute(
        "INSERT INTO session (id, project_id, directory, title, version, time_created, "
        "time_updated) VALUES ('ses_1', 'p', '/x', 't', '1.0.0', 9e18, 9e18)"
    )
    message = {"role": "user", "time": {"created": 9e18}}
    conn.execute(
        "INSERT INTO message VALUES ('msg_1', 'ses_1', 9e18, 9e18, ?)", (orjson.dumps(message),)
    )
    part = {"type": "text", "text": "hi"}
    conn.execute(
        "INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', 9e18, 9e18, ?)", (orjson.dumps(part),)
    )
    conn.commit()
    conn.close()
    return path


def build(folder: Path) -> dict[str, Path]:
    """Every case, by name, written under ``folder`` (which must exist)."""
    cases: dict[str, Path] = {}

    def file(name: str, data: bytes, filename: str | bytes | None = None) -> None:
        sub = folder / name
        sub.mkdir()
        target = os.path.join(os.fsencode(sub), os.fsencode(filename or f"{name}.jsonl"))
        with open(target, "wb") as handle:
            handle.write(data)
        cases[name] = Path(os.fsdecode(target))

    plain = _tool_session({"file_path": "/src/a.py"})
    file("fifo-subagent", plain, "session.jsonl")
    os.mkfifo(folder / "fifo-subagent" / "agent-x.jsonl")
    file("million-values-one-line", _claude("u0", None, "user", "go") + b"{}" * 1_000_000)
    file("million-tiny-lines", _claude("u0", None, "user", "go") + b"{}\n" * 1_000_000)
    file("deep-json-line", b"[" * 100_000 + b"]" * 100_000 + b"\n" + plain)
    deep = _tool_session({"command": "DEEP"}, name="Bash")
    file("deep-tool-input", deep.replace(b'"DEEP"', _nested(1_000)))
    huge = plain.replace(b'"input_tokens":100', b'"input_tokens":' + b"7" * 5_000)
    file("huge-integer", huge)
    file(
        "read-path-number",
        _tool_session({"file_path": 12345})
        + _tool_session({"file_path": ["a"]}).replace(b'"t1"', b'"t2"')
        + _tool_session({"file_path": {"x": 1}, "offset": "x"}).replace(b'"t1"', b'"t3"'),
    )
    file(
        "bad-dates",
        _tool_session({"file_path": "/a"}, timestamp="2026-02-30T10:00:00.000Z")
        + _tool_session({"file_path": "/b"}, timestamp="0000-00-00T00:00:00Z"),
    )
    file("non-utf8-name", plain, b"session-\xff\xfe.jsonl")
    file("escape-name", plain, "session-\x1b[2J\x1b]0;owned\x07.jsonl")
    (folder / "opencode-time-9e18").mkdir()
    cases["opencode-time-9e18"] = _opencode_db(folder / "opencode-time-9e18" / "opencode.db")
    return cases


def let_readers_go(cases: dict[str, Path]) -> None:
    """Open and close every FIFO of the cases for writing: a reader blocked on one ends."""
    fifo = cases["fifo-subagent"].parent / "agent-x.jsonl"
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for case, where in build(out).items():
        print(f"{case}: {os.fsencode(where)!r}")
