"""The fleet's per-session pipeline: nothing outlives a session's row, and the loaders' quick
paths give what their general paths give."""

from __future__ import annotations

import gc
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.fleet.survey import analyse_row
from core.formats.jsonl import head_records
from core.formats.opencode_messages import iso_ms
from core.gc_pause import gc_paused
from tests.support.paths import TESTS

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
