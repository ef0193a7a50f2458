"""The per-message work of :func:`extract_facts` kept lean: the memo keeps a message's facts as
a plain tuple (one for every message of every head), and a shell call's arguments are not
searched for a path (no read or write tool is a shell tool: only those name one)."""

from __future__ import annotations

from typing import Any

import pytest

from core.insights import conversation_facts as cf
from core.insights.conversation_facts import FactMemo, extract_facts
from tests.support.builders import SessionBuilder


def _session() -> Any:
    builder = SessionBuilder().user("Always run the tests first.")
    builder.call("Bash", {"command": "pytest -x tests", "path": "/r/not/a/read.py"})
    builder.result("error: boom\nexit code 1")
    builder.call("Read", {"file_path": "/r/app/main.py"}).result("x = 1")
    return builder.session()


def test_the_tool_sets_do_not_overlap() -> None:
    assert not cf._SHELL_TOOLS & (cf._READ_TOOLS | cf._WRITE_TOOLS)
    assert not cf._READ_TOOLS & cf._WRITE_TOOLS


def test_the_memo_keeps_a_tuple_per_message() -> None:
    session = _session()
    memo = FactMemo()
    facts = extract_facts(session.messages, memo)
    assert [(f.kind, f.text, f.message_index) for f in facts] == [
        ("instruction", "Always run the tests first.", 0),
        ("command", "pytest -x tests", 1),
        ("failed_command", "pytest -x tests", 2),
        ("file_read", "/r/app/main.py", 3),
    ]
    found = memo.facts(session.messages[2], {})  # (the result without its call: another key)
    assert type(found) is tuple
    assert found[0][0][1].text == "Bash"  # (no call in the head: the tool's name)
    assert extract_facts(session.messages, memo) == facts  # (read again from the memo)


def test_a_shell_call_s_arguments_are_not_searched_for_a_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[tuple[str, ...]] = []
    first = cf._first

    def spy(arguments: Any, keys: tuple[str, ...]) -> Any:
        searched.append(tuple(keys))
        return first(arguments, keys)

    monkeypatch.setattr(cf, "_first", spy)
    facts = extract_facts(_session().messages)
    assert searched.count(cf._PATH_KEYS) == 1  # (the Read call's)
    assert [f.kind for f in facts if f.kind.startswith("file")] == ["file_read"]
