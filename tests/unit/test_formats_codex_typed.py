"""The typed read of Codex rollout lines (:mod:`core.formats.codex_typed`) gives the session the
plain read gives: for every fixture and sample, for varied records of each kind it reads, and
for every field of those set to a value of another type, a number orjson reads as a float, or
removed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from core.formats import codex, codex_items, codex_lines, codex_sizes, codex_typed, codex_typed_read
from tests.support.paths import TESTS
from tests.support.sessions import session_facts
from tests.unit.test_formats_claude_robust import _paths, _set

FIXTURES = TESTS / "fixtures" / "codex"
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLES = sorted(
    [
        *(SHARED / "samples" / "codex").glob("*.jsonl"),
        *(SHARED / "new-formats" / "codex-subagents").glob("*.jsonl"),
    ]
)
ODD: list[Any] = [None, 7, -1, 1.5, 2**70, True, "", "[REDACTED_TEXT len=9 sha=ab12]", [None], {}]
"""Values a field is set to (and "<delete>": no field at all): other types, a negative and a
float count, a number too big for 64 bits (orjson reads it as a float), a redaction that keeps
the length."""

_TS = "2026-04-01T12:00:0{}.000Z"


def _item(second: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _TS.format(second), "type": "response_item", "payload": payload}


def _event(second: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _TS.format(second), "type": "event_msg", "payload": payload}


def _usage(prompt: int, cached: int, output: int, total: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": 3,
        "total_tokens": total,
    }


def _token_count(second: int, last: dict[str, Any], total: dict[str, Any]) -> dict[str, Any]:
    info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": 1000}
    return _event(
        second,
        {"type": "token_count", "info": info, "rate_limits": {"primary": {"used_percent": 1.0}}},
    )


def _rows() -> list[dict[str, Any]]:
    """A rollout with every record kind the typed read reads, in the shapes it reads and
    hands back (images, refusals, redactions, namespaces, outputs history cuts, repeated and
    request-less token counts, a context-full marker)."""
    text = {"type": "input_text", "text": "fix the bug in shop/cart.py please"}
    return [
        {
            "timestamp": _TS.format(0),
            "type": "session_meta",
            "payload": {"id": "s1", "cwd": "/w", "cli_version": "0.130.0"},
        },
        _event(1, {"type": "task_started", "turn_id": "t1", "model_context_window": 1000}),
        {
            "timestamp": _TS.format(1),
            "type": "turn_context",
            "payload": {"model": "gpt-5", "truncation_policy": {"mode": "bytes", "limit": 60}},
        },
        _item(1, {"type": "message", "role": "developer", "content": [text, text]}),
        _item(2, {"type": "message", "role": "user", "content": [text]}),
        _event(2, {"type": "user_message", "message": "fix the bug", "images": []}),
        _item(
            2,
            {
                "type": "message",
                "role": "user",
                "content": [text, {"type": "input_image", "image_url": "data:image/png;base64,AA"}],
            },
        ),
        _item(
            3,
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "look at the cart"}],
                "content": None,
                "encrypted_content": "gAAAA" + "x" * 1200,
            },
        ),
        _item(
            3,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            },
        ),
        _item(
            3,
            {
                "type": "function_call",
                "name": "exec_command",
                "namespace": "shell",
                "arguments": '{"cmd": "pytest -q"}',
                "call_id": "c1",
            },
        ),
        _item(3, {"type": "function_call", "name": "x", "arguments": "{not json", "id": "c2"}),
        _item(
            3,
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin",
                "call_id": "c3",
            },
        ),
        _event(3, {"type": "agent_message", "message": "ok"}),
        _token_count(4, _usage(100, 40, 10, 110), _usage(100, 40, 10, 110)),
        _token_count(4, _usage(100, 40, 10, 110), _usage(100, 40, 10, 110)),
        _item(5, {"type": "function_call_output", "call_id": "c1", "output": "1 failed\nexit 1"}),
        _item(5, {"type": "function_call_output", "call_id": "c2", "output": "y" * 400}),
        _item(
            5,
            {
                "type": "custom_tool_call_output",
                "call_id": "c3",
                "output": '{"output":"bad","metadata":{"exit_code":1}}',
            },
        ),
        _item(5, {"type": "function_call_output", "call_id": "c9", "output": "orphan"}),
        _item(
            6,
            {"type": "reasoning", "summary": [], "encrypted_content": "REDACTED"},
        ),
        _item(
            6,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "no"}],
            },
        ),
        _token_count(7, _usage(200, 100, 5, 205), _usage(300, 140, 15, 315)),
        _token_count(7, _usage(0, 0, 0, 50), _usage(300, 140, 15, 315)),
        _token_count(7, _usage(1000, 0, 0, 1000), _usage(1300, 140, 15, 1315)),
        _event(7, {"type": "token_count", "info": None, "rate_limits": {}}),
        _event(8, {"type": "task_complete", "turn_id": "t1"}),
        _event(8, {"type": "turn_aborted", "reason": "interrupted"}),
    ]


def _not_typed(raw: bytes) -> codex_typed.Envelope:
    raise msgspec.DecodeError("read plain")


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    typed = session_facts(codex.load(path))
    with monkeypatch.context() as patch:
        patch.setattr(codex_typed_read, "typed_decode", _not_typed)  # every line read plain
        plain = session_facts(codex.load(path))
    return typed, plain


def _write(path: Path, rows: list[dict[str, Any]], *, compact: bool = True) -> Path:
    """The rows as Codex writes them (compact), or spaced as another writer would."""
    separators = (",", ":") if compact else (", ", ": ")
    lines = [json.dumps(row, separators=separators, ensure_ascii=False) for row in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "path", [*sorted(FIXTURES.glob("*.jsonl")), *SAMPLES], ids=lambda p: p.name
)
def test_fixture_and_sample_read_the_same_typed_and_plain(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typed, plain = _both(path, monkeypatch)
    assert typed == plain


@pytest.mark.parametrize("compact", [True, False], ids=["compact", "spaced"])
def test_varied_records_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compact: bool
) -> None:
    typed, plain = _both(_write(tmp_path / "r.jsonl", _rows(), compact=compact), monkeypatch)
    assert typed == plain
    assert len(typed["messages"]) > 8


def test_well_formed_lines_are_read_typed(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", _rows())
    loader = codex._Loader(path)
    read = [
        json.loads(line)["payload"].get("type")
        for k, line in enumerate(path.read_bytes().splitlines(), 1)
        if codex_typed_read.read_typed_line(loader, line, k, 0)
    ]
    assert {"message", "reasoning", "function_call", "custom_tool_call"} <= set(read)
    assert {"function_call_output", "custom_tool_call_output", "token_count"} <= set(read)
    assert {"user_message", "task_complete", "turn_aborted", "task_started"} <= set(read)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"session_meta","payload":{"id":"s"}}',
        b'{"type":"event_msg","payload":{"type":"task_started","turn_id":7}}',
        b'{"type":"event_msg","payload":{"type":"turn_started","model_context_window":1e3}}',
        b'{"type":"response_item","payload":{"type":"function_call_output","output":[]}}',
        b'{"type":"response_item","payload":{"type":"message","content":"a string"}}',
        b'{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":'
        b'{"input_tokens":1.0}}}}',
        b'{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":'
        b'{"input_tokens":1,"new_count":2}}}}',
        b'{"type":"response_item","payload":{"type":"function_call_output","output":"\xff"}}',
        b'{"type":"event_msg","payload":{"type":"user_message","message":"\xff"}}',
    ],
)
def test_lines_of_other_shapes_are_read_plain(tmp_path: Path, raw: bytes) -> None:
    loader = codex._Loader(tmp_path / "r.jsonl")
    assert codex_typed_read.read_typed_line(loader, raw, 1, 0) is False
    assert codex_typed.decode(b"{") is None


def test_every_odd_field_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    fields = sorted({(k, p) for k, row in enumerate(rows) for p in _paths(row)}, key=str)
    assert len(fields) > 80
    path = tmp_path / "r.jsonl"
    for k, field in fields:
        for value in [*ODD, "<delete>"]:
            changed = copy.deepcopy(rows)
            _set(changed[k], field, value)
            _write(path, changed, compact=True)
            typed, plain = _both(path, monkeypatch)
            assert typed == plain, (k, field, value)


def test_events_that_repeat_items_are_passed_over_unparsed(tmp_path: Path) -> None:
    rows = [json.dumps(row, separators=(",", ":")) for row in _rows()]
    broken = '{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message","message":"cut'
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join([*rows[:3], broken, *rows[3:]]) + "\n", encoding="utf-8")
    session = codex.load(path)
    assert not [d for d in session.diagnostics if d.code == "invalid-json"]


@pytest.mark.parametrize("name", codex_lines.IGNORED_EVENT_TYPES)
def test_events_passed_over_decode_and_are_passed_over_as_ignorable_says(
    tmp_path: Path, name: str
) -> None:
    """An event ``ignorable`` names decodes (a struct of no fields: no decode error to raise
    and catch per line), and is passed over exactly when ``ignorable`` says so: in Codex's
    compact envelope; written any other way, it is read the plain way."""
    compact = (
        b'{"timestamp":"2026-05-11T08:27:17.490Z","type":"event_msg","payload":{"type":"'
        + name.encode()
        + b'","message":"hi","n":[1,{"a":null}]}}'
    )
    spaced = compact.replace(b'","type":"event_msg"', b'", "type": "event_msg"')
    loader = codex._Loader(tmp_path / "r.jsonl")
    for raw, passed_over in ((compact, True), (spaced, False)):
        decoded = codex_typed.decode(raw)
        assert decoded is not None and type(decoded.payload) in codex_typed.PASSED_OVER
        assert codex_lines.ignorable(raw) is passed_over
        assert codex_typed_read.read_typed_line(loader, raw, 1, 0) is passed_over


@pytest.mark.parametrize("compact", [True, False], ids=["compact", "spaced"])
def test_records_with_events_passed_over_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compact: bool
) -> None:
    rows = _rows()
    for k, name in enumerate(codex_lines.IGNORED_EVENT_TYPES):
        rows.insert(2 + 2 * k, _event(k, {"type": name, "message": f"m{k}"}))
    typed, plain = _both(_write(tmp_path / "r.jsonl", rows, compact=compact), monkeypatch)
    assert typed == plain


@pytest.mark.parametrize("length", [0, 1, 4, 500, 501, 540, 2000])
@pytest.mark.parametrize("execution", [None, "server", "client"])
def test_inline_steps_read_what_the_loader_steps_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, length: int, execution: str | None
) -> None:
    """What the typed read does beside the loader's own steps (an encrypted reasoning's
    estimate, a passed-over event, a repeated token count, an output's estimate) gives the
    session the plain read gives (a tool call and an output's fit to the history's cap are the
    loader's own steps: ``test_formats_codex_shared_steps``)."""
    call: dict[str, Any] = {"type": "function_call", "name": "shell", "arguments": '{"a": 1}'}
    call["call_id"] = "c1"
    if execution is not None:
        call["execution"] = execution
    usage = _usage(100, 20, 5, 105)
    rows = [
        *_rows()[:3],
        _item(2, {"type": "reasoning", "summary": [], "encrypted_content": "x" * length}),
        _event(2, {"type": "agent_reasoning", "text": "thinking"}),
        _item(3, call),
        _item(4, {"type": "function_call_output", "call_id": "c1", "output": "ok " * length}),
        _token_count(5, usage, usage),
        _token_count(5, usage, usage),
    ]
    typed, plain = _both(_write(tmp_path / "r.jsonl", rows), monkeypatch)
    assert typed == plain
    (reply,) = [m for m in typed["messages"] if m.get("tool_calls")]
    assert reply.get("reasoning_estimate_tokens", 0) == codex_sizes.encrypted_tokens(length)


def test_the_envelope_type_is_one_string_for_every_line() -> None:
    """The two envelope types a typed payload is read in decode to the one string each (no copy
    made per line); a line of another type with a payload the typed read knows is not decoded
    (it is read the plain way, as it was when its type did not match its payload's)."""
    first, second = (
        codex_typed.decode(
            b'{"timestamp":"t","type":"' + kind + b'","payload":{"type":"user_message"}}'
        )
        for kind in (b"event_msg", b"event_msg")
    )
    assert first is not None and second is not None
    assert first.type is second.type
    item = b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user"}}'
    decoded = [codex_typed.decode(item) for _ in range(2)]
    assert decoded[0] is not None and decoded[1] is not None
    assert decoded[0].type is decoded[1].type
    other = item.replace(b'"response_item"', b'"world_state"')
    assert codex_typed.decode(other) is None


@pytest.mark.parametrize("kind", ["task_started", "turn_started"])
@pytest.mark.parametrize("window", [1000, 2000, None, "<delete>"])
def test_turn_starts_are_read_typed_as_the_plain_read_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, window: Any
) -> None:
    """A turn's start (either name) is read typed, with the window it says (the same, another:
    a change, null, left out), and gives the session the plain read gives."""
    rows = _rows()
    start = {"type": kind, "turn_id": "019e1625-0002-7000-8000-000000000000"}
    if window != "<delete>":
        start["model_context_window"] = window
    rows.insert(len(rows) - 2, _event(8, start))
    path = _write(tmp_path / "r.jsonl", rows)
    typed, plain = _both(path, monkeypatch)
    assert typed == plain
    raw = path.read_bytes().splitlines()[len(rows) - 3]
    assert codex_typed_read.read_typed_line(codex._Loader(path), raw, 1, 0) is True


def test_a_function_calls_name_and_arguments_are_read_by_one_rule_in_both_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The typed read and the plain one make a ``function_call``'s tool name and arguments with
    the same function (:func:`~core.formats.codex_items.function_call`), not each its own copy
    of the rule."""
    seen: list[tuple[Any, Any, Any]] = []
    rule = codex_items.function_call

    def counted(name: Any, namespace: Any, arguments: Any) -> tuple[Any, Any]:
        seen.append((name, namespace, arguments))
        return rule(name, namespace, arguments)

    monkeypatch.setattr(codex_items, "function_call", counted)
    monkeypatch.setattr(codex_typed_read, "function_call", counted)
    path = _write(tmp_path / "r.jsonl", _rows())
    calls = [row["payload"] for row in _rows() if row["payload"].get("type") == "function_call"]
    typed, plain = _both(path, monkeypatch)
    assert typed == plain
    expected = [(c.get("name"), c.get("namespace"), c.get("arguments")) for c in calls]
    assert seen == expected + expected  # the typed read's, then the plain read's


@pytest.mark.parametrize(
    ("name", "namespace", "arguments", "expected"),
    [
        ("exec", None, '{"cmd": "ls"}', ("exec", {"cmd": "ls"})),
        ("exec", "shell", '{"cmd": "ls"}', ("shell.exec", {"cmd": "ls"})),
        ("exec", "shell", "not json", ("shell.exec", "not json")),
        (None, "shell", None, (None, None)),
        (7, "shell", {"cmd": "ls"}, (7, {"cmd": "ls"})),
        ("exec", 7, "[1]", ("exec", [1])),
    ],
)
def test_function_call_joins_the_namespace_and_parses_the_arguments(
    name: Any, namespace: Any, arguments: Any, expected: tuple[Any, Any]
) -> None:
    assert codex_items.function_call(name, namespace, arguments) == expected
