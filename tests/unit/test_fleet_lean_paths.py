"""The fleet's per-session pipeline: nothing outlives a session's row, and the loaders' quick
paths give what their general paths give."""

from __future__ import annotations

import gc
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.fleet.survey import analyse_row
from core.formats import load_session
from core.formats.jsonl import head_records
from core.formats.opencode_messages import iso_ms
from core.gc_pause import gc_paused
from core.model.session import Role
from core.policy import get_preset
from tests.support.paths import TESTS
from tests.support.sessions import replay_and_plain_truncation

FIXTURES = TESTS / "fixtures"


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each ``gc.freeze()`` call from now on, recorded (and still made). The freeze count itself
    cannot tell: with the other tests' frozen objects being freed meanwhile, it may go down."""
    calls: list[int] = []
    real = gc.freeze

    def spy() -> None:
        calls.append(gc.get_count()[0])
        real()

    monkeypatch.setattr(gc, "freeze", spy)
    return calls


def test_the_spy_sees_a_freeze(freezes: list[int]) -> None:
    with gc_paused():
        pass
    assert len(freezes) == (1 if gc.isenabled() else 0)


@pytest.mark.parametrize(
    "path", [FIXTURES / "pi" / "v3-tree.jsonl", FIXTURES / "opencode" / "export.json"]
)
def test_a_fleet_row_freezes_nothing(path: Path, freezes: list[int]) -> None:
    """A run over hundreds of sessions must not keep them: frozen objects in a reference cycle
    (a session and its replay hold each other) are never freed."""
    row = analyse_row(str(path))
    assert row.error is None
    assert freezes == []


def test_a_pause_inside_a_pause_leaves_the_freezing_to_the_outer_one(freezes: list[int]) -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            built = [[n] for n in range(100)]
        assert freezes == []
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()
    assert len(built) == 100


def _iso_by_datetime(value: Any) -> str | None:
    moment = datetime.fromtimestamp(value / 1000.0, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_iso_ms_writes_what_a_datetime_writes() -> None:
    picks = random.Random(7)
    values: list[Any] = [1, 999, 1_000, 1_001, 1_773_648_000_123, 2**32 * 1000 - 1, 2**32 * 1000]
    values += [picks.randrange(1, 2**33 * 1000) for _ in range(20_000)]
    values += [1_773_648_000_123.9, 253_402_300_799_999]  # a float, the last millisecond of 9999
    assert [iso_ms(v) for v in values] == [_iso_by_datetime(v) for v in values]
    assert [iso_ms(v) for v in (0, -5, True, "12", None)] == [None] * 5


def test_head_records_keeps_only_object_lines() -> None:
    pretty = b'{\n  "info": {\n    "id": "ses_1"\n  },\n  "messages": [\n'
    assert head_records(pretty) == []
    lines = b' \t{"type": "session"}\n[1, 2]\n"text"\n\n{"type": "message"}\n{"cut'
    assert head_records(lines) == [{"type": "session"}, {"type": "message"}]


def test_head_records_answers_every_limit_from_one_read() -> None:
    """The sniffers ask the same head with limits 32, 8, 16 and 1: each answer is the one a
    fresh read of that head gives, and a caller's list is its own."""
    head = b"".join(b'{"n": %d}\n' % n for n in range(40)) + b'{"cut'
    first = head_records(head, 32)
    assert first == [{"n": n} for n in range(32)]
    first.clear()
    assert head_records(head, 8) == [{"n": n} for n in range(8)]
    assert head_records(head, 64) == [{"n": n} for n in range(40)]
    assert head_records(head, 1) == [{"n": 0}]
    few = b'{"a": 1}\nnot json\n'
    assert head_records(few, 1) == [{"a": 1}]
    assert head_records(few, 64) == [{"a": 1}]  # (one read with limit 1 could not tell)
    assert head_records(b'{"a": 2}\n', 64) == [{"a": 2}]  # another head: read anew


def _opencode_export(tmp_path: Path, tokens: dict[str, Any], parts: list[dict[str, Any]]) -> Path:
    info = {"id": "msg_a", "role": "assistant", "modelID": "m", "tokens": tokens}
    user = {"info": {"id": "msg_u", "role": "user"}, "parts": [{"type": "text", "text": "go"}]}
    document = {"info": {"id": "ses_1"}, "messages": [user, {"info": info, "parts": parts}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))
    return path


STEP: dict[str, Any] = {"type": "step-start"}
TEXT: dict[str, Any] = {"type": "text", "text": "ok"}


def test_opencode_last_step_without_usage_takes_the_messages_tokens(tmp_path: Path) -> None:
    finish = {"type": "step-finish", "tokens": {"input": 5, "output": 1}}
    parts = [STEP, TEXT, finish, STEP, TEXT]
    path = _opencode_export(tmp_path, {"input": 30, "output": 2, "cache": {"read": 4}}, parts)
    calls = [m for m in load_session(path).messages if m.role is Role.ASSISTANT]
    assert [(m.id, m.usage.input if m.usage else None) for m in calls] == [
        ("msg_a", 5),
        ("msg_a#step2", 30),
    ]
    assert calls[1].usage is not None and calls[1].usage.cache_read == 4


def test_opencode_damaged_message_tokens_are_reported_first(tmp_path: Path) -> None:
    """A message's damaged tokens are reported even when every step has its own usage, and
    before the steps' (the order the records give)."""
    finish = {"type": "step-finish", "tokens": {"input": -3, "output": 1}}
    path = _opencode_export(tmp_path, {"input": "many", "output": 2}, [STEP, TEXT, finish])
    session = load_session(path)
    counts = [d.message for d in session.diagnostics if d.code == "bad-count"]
    assert len(counts) == 2
    assert "not a number" in counts[0] and "negative" in counts[1]
    calls = [m for m in session.messages if m.role is Role.ASSISTANT]
    assert calls[0].usage is not None and calls[0].usage.output == 1


@pytest.mark.parametrize(("max_bytes", "max_lines"), [(100, 10), (100, 0), (30, 50)])
def test_truncation_measures_only_what_may_not_fit(max_bytes: int, max_lines: int) -> None:
    """An output short enough to fit whatever its characters is passed over unmeasured: the
    outputs on both sides of that length (4-byte characters, newlines only) are truncated
    exactly as a truncation of every output truncates them."""
    outputs = ["😀" * 7, "😀" * 8, "😀" * 25, "😀" * 26, "\n" * 9, "\n" * 10, "x" * 9, "é" * 51]
    policy = get_preset("pi")
    policy.estimator = "chars/4"
    policy.truncation.enabled = True
    policy.truncation.max_bytes = max_bytes
    policy.truncation.max_lines = max_lines
    truncated, expected = replay_and_plain_truncation(outputs, policy)
    assert truncated == expected
    assert 0 < sum(expected) < len(outputs)
