"""Each rule of the Codex loader is written once: the typed read (:mod:`core.formats.codex_typed_read`)
and the plain read (:mod:`core.formats.codex`) reach the same helper for a tool call, an output's
fit to the history's cap and a model call's texts, on their usual case too, and the helpers
sped up for it read what their plain forms read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from core.formats import codex, codex_call, codex_lines, codex_sizes, codex_typed_read
from core.formats.codex_call import ModelCall, joined

_TS = "2026-04-01T12:00:00.000Z"


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _TS, "type": kind, "payload": payload}


def _rollout(path: Path) -> Path:
    """A turn of the usual shapes: a reasoning, a text and two function calls in one response,
    their outputs, a custom tool call and its output, a usage."""
    usage = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 20}
    rows = [
        _line("session_meta", {"id": "s1", "cwd": "/p", "cli_version": "0.125.0"}),
        _line("turn_context", {"model": "gpt-5", "cwd": "/p"}),
        _line("event_msg", {"type": "task_started", "turn_id": "t"}),
        _line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        ),
        _line("event_msg", {"type": "user_message", "message": "go"}),
        _line(
            "response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x" * 900}
        ),
        _line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "on it"}],
            },
        ),
        _line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"cmd": "ls"}',
                "call_id": "a",
            },
        ),
        _line(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": "not json", "call_id": "b"},
        ),
        _line("response_item", {"type": "function_call_output", "call_id": "a", "output": "x"}),
        _line("response_item", {"type": "function_call_output", "call_id": "b", "output": "y"}),
        _line(
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "input": "p", "call_id": "c"},
        ),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "c", "output": "ok"}),
        _line("event_msg", {"type": "token_count", "info": {"last_token_usage": usage}}),
        _line("event_msg", {"type": "task_complete", "turn_id": "t"}),
    ]
    lines = [json.dumps(row, separators=(",", ":")) for row in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    """Every call of ``owner.name`` from now on (the helper still does its work)."""
    seen: list[tuple[Any, ...]] = []
    helper: Callable[..., Any] = getattr(owner, name)

    def spy(*args: Any) -> Any:
        seen.append(args)
        return helper(*args)

    monkeypatch.setattr(owner, name, spy)
    return seen


def _typed_reads(path: Path) -> int:
    """The lines of ``path`` the typed read reads (the rest is read the plain way)."""
    loader = codex._Loader(path)
    raws = path.read_bytes().splitlines()
    return sum(codex_typed_read.read_typed_line(loader, raw, k, 0) for k, raw in enumerate(raws, 1))


def test_the_usual_lines_are_read_typed(tmp_path: Path) -> None:
    path = _rollout(tmp_path / "r.jsonl")
    assert _typed_reads(path) == 13  # all but session_meta and turn_context


def test_every_tool_call_goes_through_the_one_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_Loader.tool_call`` makes every tool call, the typed read's usual case included."""
    path = _rollout(tmp_path / "r.jsonl")
    seen = _calls(monkeypatch, codex._Loader, "tool_call")
    session = codex.load(path)
    kinds = [args[2] for args in seen]
    assert kinds == ["function_call", "function_call", "custom_tool_call"]
    calls = [[(c.id, c.name, c.arguments) for c in m.tool_calls] for m in session.messages]
    assert [c for c in calls if c] == [
        [("a", "shell", {"cmd": "ls"}), ("b", "shell", "not json")],
        [("c", "apply_patch", "p")],
    ]


def test_every_output_is_fitted_by_the_one_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OutputCap.fits`` decides every typed output's fit, a short one's too."""
    path = _rollout(tmp_path / "r.jsonl")
    seen = _calls(monkeypatch, codex_sizes.OutputCap, "fits")
    codex.load(path)
    assert [args[1] for args in seen] == ["x", "y", "ok"]


def test_every_model_call_text_is_joined_by_the_one_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``codex_call.joined`` makes a model call's text and reasoning, one text each too."""
    path = _rollout(tmp_path / "r.jsonl")
    seen = _calls(monkeypatch, codex, "joined")
    session = codex.load(path)
    assert [args[0] for args in seen] == [["on it"], [], [], []]  # (two model calls)
    assert [m.text for m in session.messages if m.tool_calls] == ["on it", ""]


@pytest.mark.parametrize(
    ("texts", "text"),
    [([], ""), ([""], ""), (["a"], "a"), (["a", "", "b"], "a\n\nb"), (["", ""], "")],
)
def test_joined_leaves_empty_texts_out(texts: list[str], text: str) -> None:
    assert joined(texts) == text


def test_each_model_call_has_lists_of_its_own() -> None:
    first = ModelCall("a", 1, 0, None)
    second = ModelCall("b", 2, 10, _TS)
    first.texts.append("t")
    first.reasoning.append("r")
    assert (second.texts, second.reasoning, second.calls, second.server_calls) == ([], [], [], None)
    assert (second.reasoning_tokens, second.redacted) == (0, 0)
    assert codex_call.ModelCall is ModelCall


def _payload_bytes_as_written(raw: bytes, timestamp: str) -> int | None:
    """:func:`codex_lines.payload_bytes` as it was written with startswith / endswith."""
    middle = len(codex_lines.LINE_START) + len(timestamp)
    if (
        raw.startswith(codex_lines.LINE_START)
        and raw.startswith(codex_lines.BEFORE_PAYLOAD, middle)
        and raw.endswith(b"}")
    ):
        return len(raw) - middle - len(codex_lines.BEFORE_PAYLOAD) - 1
    return None


_COMPACT = b'{"timestamp":"' + _TS.encode() + b'","type":"response_item","payload":{"a":1}}'


@pytest.mark.parametrize(
    "raw",
    [
        _COMPACT,
        _COMPACT[:-1],
        _COMPACT.replace(b'"type":', b'"type": '),
        _COMPACT.replace(b'{"timestamp"', b'{ "timestamp"'),
        _COMPACT[: len(_COMPACT) // 2],
        b'{"timestamp":"',
        b"}",
        b"",
    ],
)
@pytest.mark.parametrize("timestamp", [_TS, "", "2026"])
def test_payload_bytes_reads_what_its_plain_form_read(raw: bytes, timestamp: str) -> None:
    """The line as bytes, or as a view of a chunk (``read_jsonl_raw``'s ``views``)."""
    expected = _payload_bytes_as_written(raw, timestamp)
    chunk = b"{}\n" + raw + b"\n"
    view = cast(bytes, memoryview(chunk)[3 : 3 + len(raw)])
    assert codex_lines.payload_bytes(raw, timestamp) == expected
    assert codex_lines.payload_bytes(view, timestamp) == expected


def test_every_payload_the_typed_decode_makes_has_an_entry_in_the_walks_table() -> None:
    """The walk looks each decoded payload's type up in ``TYPED`` without a default (a reader,
    or None for an event passed over): a payload type added to the envelope without an entry
    would stop the load with a KeyError, so every member of the union has one."""
    from typing import get_args, get_type_hints

    from core.formats.codex_typed import Envelope

    union = get_type_hints(Envelope)["payload"]
    members = {member for part in get_args(union) for member in get_args(part) or (part,)}
    assert members
    assert members <= set(codex_typed_read.TYPED)


def _usages() -> list[Any]:
    """Usage objects of every form ``_Loader.repeated`` compares: the typed ones (a
    ``last_token_usage``, one with a key left out and a null; a ``total_token_usage``'s raw
    text, as Codex writes it, spaced, in another key order, and one that does not parse) and
    the plain objects equal to each, one that differs, a dict with a key more, None."""
    from msgspec import UNSET, Raw

    from core.formats.codex_typed import TokenUsage

    counts = {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 3}
    typed = [
        TokenUsage(**counts, reasoning_output_tokens=1, total_tokens=13),
        TokenUsage(**counts, reasoning_output_tokens=UNSET, total_tokens=None),
    ]
    plain = [usage.as_dict() for usage in typed]
    text = json.dumps({**counts, "reasoning_output_tokens": 1}, separators=(",", ":"))
    spaced = json.dumps({**counts, "reasoning_output_tokens": 1})
    reordered = json.dumps(dict(reversed(list(json.loads(text).items()))))
    raw = [Raw(text.encode()), Raw(spaced.encode()), Raw(reordered.encode()), Raw(b"[1e400")]
    return [
        *typed,
        *plain,
        *raw,
        json.loads(text),
        {**counts, "output_tokens": 4},
        {**plain[0], "extra": 1},
        {**counts, "output_tokens": 3.0},  # (equal to 3 as an object is)
        None,
    ]


def test_repeated_answers_as_same_usage_does_for_every_form() -> None:
    """``_Loader.repeated`` compares two usages of one type inline (``==``, same_usage's usual
    case): for every pair of forms, typed or plain, its answer is that of
    :func:`~core.formats.codex_usage.same_usage`, and it keeps what it was given when it is no
    repeat."""
    from msgspec import Raw

    from core.formats.codex_usage import same_usage

    usages = _usages()
    loader = codex._Loader(Path("r.jsonl"))
    for total in usages:
        # (a last_token_usage is never None here, nor a raw text: the typed read decodes it)
        for last in [usage for usage in usages[:-1] if type(usage) is not Raw]:
            for before in usages:
                for last_before in usages:
                    loader.last_total, loader.last_last = before, last_before
                    expected = (
                        total is not None
                        and same_usage(total, before)
                        and same_usage(last, last_before)
                    )
                    assert loader.repeated(total, last) is expected
                    kept = (before, last_before) if expected else (total, last)
                    assert (loader.last_total, loader.last_last) == kept
