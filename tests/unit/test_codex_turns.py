"""The turn tracker of the Codex loader (:mod:`core.formats.codex_turns`): a turn's start or end
labels the compactions waiting for it, and writes its reason only when one waits."""

from __future__ import annotations

import pytest

from core.formats.codex_turns import TurnTracker
from core.model.session import CompactionEvent


def _reasons(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    written: list[str] = []
    close_open = TurnTracker._close_open

    def recorded(self: TurnTracker, why: str) -> None:
        written.append(why)
        close_open(self, why)

    monkeypatch.setattr(TurnTracker, "_close_open", recorded)
    return written


def test_turns_with_nothing_waiting_write_no_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nearly every turn starts and ends with no compaction waiting: no reason is written."""
    written = _reasons(monkeypatch)
    turns = TurnTracker()
    for line in range(1, 40, 4):
        turns.task_started(line)
        turns.model_output("message", line + 1)
        turns.task_ended(line + 2, "task_complete")
    assert written == []


@pytest.mark.parametrize(
    ("end", "trigger", "why"),
    [
        ("complete", "manual", "the task ended (task_complete) at line 3"),
        ("next", "manual", "the next task started at line 3"),
    ],
)
def test_a_waiting_compaction_is_labelled_by_what_ends_its_task(
    monkeypatch: pytest.MonkeyPatch, end: str, trigger: str, why: str
) -> None:
    written = _reasons(monkeypatch)
    turns = TurnTracker()
    turns.task_started(1)
    event = CompactionEvent(message_index=0)
    turns.compacted(event, 2)
    if end == "complete":
        turns.task_ended(3, "task_complete")
    else:
        turns.task_started(3)
    assert written == [why]
    assert event.trigger == trigger
    assert event.trigger_evidence is not None and event.trigger_evidence.endswith(why)
    assert turns.open == []
