"""The typed read of pi message entries (:mod:`core.formats.pi_typed`) gives the session the
plain read gives: for every fixture, and for every field of a session set to a value of
another type, a number orjson reads as a float, or removed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session, pi_typed
from tests.support.paths import TESTS
from tests.support.sessions import session_facts
from tests.unit.test_formats_claude_robust import _paths, _set

FIXTURES = TESTS / "fixtures" / "pi"
ODD: list[Any] = [None, 7, 1.5, 2**70, -3, 10**10, "", [None], {}, "<delete>"]
"""Values a field is set to: other types, an empty string, a float count, a number too big for
64 bits (orjson reads it as a float), negative and implausible counts, and no field at all."""

_ROWS: list[dict[str, Any]] = [
    {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-05T10:00:00Z", "cwd": "/p"},
    {
        "type": "model_change",
        "id": "a1",
        "parentId": None,
        "provider": "anthropic",
        "modelId": "m1",
    },
    {
        "type": "message",
        "id": "a2",
        "parentId": "a1",
        "timestamp": "2026-01-05T10:01:00Z",
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "mimeType": "image/png", "data": "xx"},
            ],
        },
    },
    {
        "type": "message",
        "id": "a3",
        "parentId": "a2",
        "timestamp": "2026-01-05T10:02:00Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "reading → now"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
            ],
            "provider": "anthropic",
            "model": "m2",
            "usage": {
                "input": 5,
                "output": 7,
                "cacheRead": 11,
                "cacheWrite": 13,
                "totalTokens": 36,
                "cost": {"total": 0.5},
            },
            "stopReason": "toolUse",
            "errorMessage": "no",
        },
    },
    {
        "type": "message",
        "id": "a4",
        "parentId": "a3",
        "timestamp": "2026-01-05T10:03:00Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x = 1"}],
            "details": {"truncation": {"truncated": True}, "diff": "d"},
            "isError": False,
        },
    },
    {
        "type": "message",
        "id": "a5",
        "parentId": "a4",
        "timestamp": "2026-01-05T10:04:00Z",
        "message": {"role": "assistant", "content": "done", "usage": {"input": 1}},
    },
    {"type": "compaction", "id": "a6", "parentId": "a5", "summary": "s", "tokensBefore": 9},
    {
        "type": "message",
        "id": "a7",
        "timestamp": "2026-01-05T10:05:00Z",
        "message": {"role": "user", "content": "next"},
    },
]
"""A small v3 session whose message entries use every field the typed read reads."""


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    typed = session_facts(load_session(path, format="pi"))
    with monkeypatch.context() as patch:
        patch.setattr(pi_typed, "read", lambda raw: None)
        plain = session_facts(load_session(path, format="pi"))
    return typed, plain


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_fixture_reads_the_same_typed_and_plain(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed, plain = _both(path, monkeypatch)
    assert typed == plain


def test_well_formed_message_entries_are_read_typed() -> None:
    lines = [json.dumps(row).encode() for row in _ROWS]
    read = [json.loads(line)["id"] for line in lines if pi_typed.read(line) is not None]
    assert read == ["a2", "a3", "a4", "a5", "a7"]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"message","message":{"role":"user","content":"no id"}}',
        b'{"type":"message","id":7,"message":{"role":"user","content":"hi"}}',
        b'{"type":"message","id":"x","message":{"role":"bashExecution","command":"ls"}}',
        b'{"type":"message","id":"x","message":{"role":"assistant","usage":{"input":1.0}}}',
        b'{"type":"message","id":"x","message":{"role":"user","content":["a string block"]}}',
        b'{"type":"compaction","id":"x","summary":"s"}',
        b'{"type":"message","id":"x","message":{"role":"user","content":"\xff"}}',
    ],
)
def test_lines_of_other_shapes_are_read_plain(raw: bytes) -> None:
    assert pi_typed.read(raw) is None


def test_the_session_reads_the_same_typed_and_plain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed, plain = _both(_write(tmp_path / "t.jsonl", _ROWS), monkeypatch)
    assert typed == plain
    assert [m["role"] for m in typed["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "user",
    ]


def test_every_odd_field_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fields = sorted({(k, p) for k, row in enumerate(_ROWS) for p in _paths(row)}, key=str)
    assert len(fields) > 40
    path = tmp_path / "t.jsonl"
    for k, field in fields:
        for value in ODD:
            changed = copy.deepcopy(_ROWS)
            _set(changed[k], field, value)
            typed, plain = _both(_write(path, changed), monkeypatch)
            assert typed == plain, (k, field, value)
