"""The typed read of Claude Code lines (:mod:`core.formats.claude_typed`) gives the session the
plain read gives: for every fixture, and for every field of a transcript set to a value of
another type, a number orjson reads as a float, or removed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import claude_typed, load_session
from core.formats.claude_typed import TypedUsage
from core.model.session import held_output
from tests.support.paths import TESTS
from tests.support.sessions import session_facts
from tests.unit.test_formats_claude_robust import _paths, _rows, _set

FIXTURES = TESTS / "fixtures" / "claude"
ODD: list[Any] = [None, 7, 1.5, 2**70, "", [None], {}, "<delete>"]
"""Values a field is set to: other types, an empty string, a float count, a number too big for
64 bits (orjson reads it as a float), and no field at all."""


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    typed = session_facts(load_session(path))
    with monkeypatch.context() as patch:
        patch.setattr(claude_typed, "read", lambda *_args: None)
        plain = session_facts(load_session(path))
    return typed, plain


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_fixture_reads_the_same_typed_and_plain(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed, plain = _both(path, monkeypatch)
    assert typed == plain


def test_well_formed_lines_are_read_typed() -> None:
    lines = (FIXTURES / "recent_lines.jsonl").read_bytes().splitlines()
    kinds = {json.loads(line).get("type") for line in lines if claude_typed.read(line, 1, 0)}
    assert {"user", "assistant"} <= kinds


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"user","uuid":7,"message":{"role":"user","content":"hi"}}',
        b'{"type":"assistant","message":{"usage":{"input_tokens":1.0}}}',
        b'{"type":"user","message":"not an object"}',
        b'{"type":"user","message":{"content":["a string block"]}}',
        b'{"type":"system","subtype":"compact_boundary"}',
        b'{"type":"user","message":{"content":"\xff"}}',
    ],
)
def test_lines_of_other_shapes_are_read_plain(raw: bytes) -> None:
    assert claude_typed.read(raw, 1, 0) is None


def test_tool_arguments_are_read_as_orjson_reads_them() -> None:
    raw = (
        b'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t",'
        b'"name":"Bash","input":{"n":123456789012345678901234567890}}]}}'
    )
    read = claude_typed.read(raw, 1, 0)
    assert read is not None
    entry = read[1]
    assert entry is not None
    assert [call.arguments for call in entry.calls] == [{"n": 1.2345678901234568e29}]


def test_every_odd_field_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(FIXTURES / "recent_lines.jsonl")
    fields = sorted({(k, p) for k, row in enumerate(rows) for p in _paths(row)}, key=str)
    assert len(fields) > 40
    for k, field in fields:
        for value in ODD:
            changed = copy.deepcopy(rows)
            _set(changed[k], field, value)
            path = tmp_path / "t.jsonl"
            path.write_text("".join(json.dumps(row) + "\n" for row in changed), encoding="utf-8")
            typed, plain = _both(path, monkeypatch)
            assert typed == plain, (k, field, value)


def _assistant_line(uuid: str) -> bytes:
    message = {
        "id": f"msg_{uuid}",
        "model": "claude-test-" + "model",  # (built at run time: not the test's constant)
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": f"toolu_{uuid}", "name": "Ba" + "sh", "input": {}}],
    }
    return json.dumps({"type": "assistant", "uuid": uuid, "message": message}).encode()


def test_names_repeated_on_every_line_are_held_once_from_the_read_on() -> None:
    """Each assistant line's model, stop reason and tool names are one string per name as soon as
    the line is read (typed or plain), not one copy per line until the assembly."""
    from core.formats.claude_records import ASSISTANT, Entry, read_assistant

    typed_entries = []
    plain_entries = []
    for n, uuid in enumerate(["a", "b"]):
        raw = _assistant_line(uuid)
        read = claude_typed.read(raw, n + 1, 0)
        assert read is not None and read[1] is not None
        typed_entries.append(read[1])
        obj = json.loads(raw)
        entry = Entry.of(ASSISTANT, n + 1, 0, uuid, None, obj)
        read_assistant(entry, obj, obj["message"])
        plain_entries.append(entry)
    for first, second in (typed_entries, plain_entries):
        assert first.model is second.model and first.stop_reason is second.stop_reason
        assert first.calls[0].name is second.calls[0].name


@pytest.mark.parametrize("output", ["ok", "caf\xe9", "1\u2192 line", ""])
def test_tool_outputs_are_held_as_held_output_holds_them(output: str) -> None:
    """An ASCII tool output is kept as its string without a call; any other as
    :func:`~core.model.session.held_output` keeps it (a Read output's arrow: its UTF-8 bytes)."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}
    reply = {"type": "assistant", "uuid": "a", "message": {"id": "m", "content": [call]}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output}
    user = {"type": "user", "uuid": "u", "message": {"role": "user", "content": [result]}}
    ids: dict[str, str] = {}
    read = claude_typed.read(json.dumps(reply).encode(), 1, 0, call_ids=ids)
    assert read is not None and read[1] is not None
    assert read[1].calls[0].arguments == {"file_path": "a.py"}
    read = claude_typed.read(json.dumps(user).encode(), 2, 100, call_ids=ids)
    assert read is not None and read[1] is not None
    ((call_id, held, failed),) = read[1].results
    assert (call_id, failed) == ("t1", False)
    assert call_id is ids["t1"]
    assert type(held) is type(held_output(output)) and held == held_output(output)


_PASSES: list[list[dict[str, Any]]] = [
    [],
    [{"type": "message", "input_tokens": 1}],
    [{"type": "message", "input_tokens": 1}, {"type": "advisor_message", "input_tokens": 2}],
    [{"type": "message", "input_tokens": 1}, {"type": "message", "input_tokens": 3}],
    [{"type": "advisor_message", "input_tokens": 2}],
]


@pytest.mark.parametrize("passes", _PASSES)
def test_the_typed_read_takes_the_usage_pass_the_plain_read_takes(
    passes: list[dict[str, Any]],
) -> None:
    """``_request_usage`` (the typed read's, asked only of a usage with ``iterations``) is the
    pass :func:`~core.formats.claude_records.request_usage` reads from the same object."""
    from core.formats.claude_records import request_usage

    usage = {"input_tokens": 9, "iterations": passes}
    typed = claude_typed._request_usage(msgspec.json.decode(json.dumps(usage), type=TypedUsage))
    assert typed.input_tokens == request_usage(usage)["input_tokens"]


_BLOCKS = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, st.sampled_from(["", "a", "b c"])),
    st.builds(lambda text: {"type": "thinking", "thinking": text}, st.sampled_from(["", "t"])),
    st.builds(
        lambda n: {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"n": n}},
        st.integers(0, 3),
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    content=st.one_of(st.text(max_size=3), st.lists(_BLOCKS, max_size=5)),
    error=st.sampled_from([None, "boom"]),
)
def test_an_assistant_line_reads_as_the_plain_read_reads_it(
    content: str | list[dict[str, Any]], error: str | None
) -> None:
    """The typed read's texts (its one text, or a list of none or several), calls (one list,
    the message's) and error are what the plain read makes of the same line."""
    from core.formats.claude_records import ASSISTANT, Entry, read_assistant, texts_of

    obj: dict[str, Any] = {
        "type": "assistant",
        "uuid": "a",
        "message": {"id": "m", "content": content},
    }
    if error is not None:
        obj["error"] = error
    read = claude_typed.read(json.dumps(obj).encode(), 1, 0)
    assert read is not None and read[1] is not None
    typed = read[1]
    plain = Entry(ASSISTANT, 1, 0, "a", None)
    read_assistant(plain, obj, obj["message"])
    assert list(texts_of(typed)) == list(texts_of(plain))
    assert (typed.one_text is None) == (plain.one_text is None)
    assert list(typed.reasoning) == list(plain.reasoning)
    assert [(c.id, c.name, c.arguments) for c in typed.calls] == [
        (c.id, c.name, c.arguments) for c in plain.calls
    ]
    assert typed.calls == () or type(typed.calls) is list
    assert typed.error == plain.error
