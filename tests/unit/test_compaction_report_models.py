"""The records of a session's compactions (why each ran, what its summary forgot, the report
joining them) are built from typed values without validation, one or more for every
compaction: the same records, field for field, as the validated models."""

from __future__ import annotations

from typing import Any

import pytest

from core.insights.compaction_causes import CompactionCause
from core.insights.compaction_records import CompactionReport, compaction_reports
from core.insights.forgotten_facts import (
    NO_SUMMARY,
    Forgotten,
    KindRecall,
    recorded_forgotten,
    recorded_heads,
    unreadable,
)
from core.model.session import Session
from core.replay import native_policy, replay
from tests.support.builders import SessionBuilder


def _session() -> Session:
    builder = SessionBuilder().user("Never push to main.")
    builder.call("Read", {"file_path": "/r/app/main.py"}, context=1_000).result("print()")
    builder.call("Bash", {"command": "make test"}, context=1_500)
    builder.result("error: it broke\nexit code 2").reply("done", context=2_000)
    builder.compaction("## Summary\n- read app/main.py", tokens_before=2_000)
    return builder.user("next").reply("ok", context=1_500).session()


def test_the_records_are_built_without_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    session = _session()
    result = replay(session, native_policy(session))

    def refused(self: Any, **data: Any) -> None:
        raise AssertionError(f"{type(self).__name__} validated")

    for model in (CompactionCause, CompactionReport, Forgotten, KindRecall):
        monkeypatch.setattr(model, "__init__", refused)
    (report,) = compaction_reports(session, result)
    assert report.why.source == "recorded" and report.why.recorded_index == 0
    assert report.forgotten is not None and report.forgotten.readable
    assert report.forgotten.head_messages == 6
    assert [(k.kind, k.facts, k.kept) for k in report.forgotten.by_kind] == [
        ("file_read", 1, 1),
        ("command", 1, 0),
        ("failed_command", 1, 0),
        ("instruction", 1, 0),
    ]
    gone = unreadable(3, "no summary")
    assert (gone.readable, gone.facts, gone.recall, gone.by_kind, gone.dropped) == (
        False,
        0,
        None,
        [],
        [],
    )


def test_the_built_records_are_the_validated_ones() -> None:
    session = _session()
    for report in compaction_reports(session, replay(session, native_policy(session))):
        again = CompactionReport.model_validate(report.model_dump())
        assert again.model_dump_json(indent=2) == report.model_dump_json(indent=2)
    gone = unreadable(3, "no summary", "replayed")
    again_gone = Forgotten(
        readable=False, reason="no summary", summary_source="replayed", head_messages=3
    )
    assert gone.model_dump_json() == again_gone.model_dump_json()


class _Counted(list):  # type: ignore[type-arg]
    """A message list that counts the messages read by index."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        _Counted.reads += 1
        return super().__getitem__(index)


def test_an_unreadable_summary_s_head_is_not_gathered() -> None:
    """A compaction whose summary cannot be read reports its head's size without reading its
    messages (a Codex head is everything before its remote compaction)."""
    builder = SessionBuilder().user("one").reply("two", context=1_000).user("three")
    builder.reply("four", context=2_000).compaction("", tokens_before=2_000)
    session = builder.user("next").reply("ok", context=500).session()
    heads = recorded_heads(session)
    session.messages = _Counted(session.messages)
    ((report, records),) = recorded_forgotten(session, heads).values()
    assert (report.readable, report.reason, report.head_messages, records) == (
        False,
        NO_SUMMARY,
        4,
        [],
    )
    assert _Counted.reads <= 1  # (the summary message it owns, looked at for a summary)


def test_a_replayed_compaction_s_cause_reads_the_point_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cause of a compaction the replay made itself reads its call's threshold, check and
    window from the result's columns (``analyze`` builds no point): the figures of its point."""
    from pathlib import Path

    from core.formats import load_session
    from core.insights.compaction_causes import compaction_causes
    from core.replay.results import ReplayResult

    session = load_session(Path(__file__).parents[2] / "sample_sessions/ctxscope/long.jsonl")
    result = replay(session, native_policy(session))
    replayed = [e for e in result.events if e.kind == "compact" and e.recorded_index is None]
    assert replayed and all(e.call_index is not None for e in replayed)
    points = [result.point(e.call_index) for e in replayed if e.call_index is not None]

    def refused(self: ReplayResult, call_index: int) -> None:
        raise AssertionError("a point was built")

    monkeypatch.setattr(ReplayResult, "point", refused)
    causes = [c for c in compaction_causes(session, result) if c.source == "replayed"]
    assert [(c.threshold, c.check_tokens, c.window) for c in causes] == [
        (p.threshold, p.check_tokens, p.window) for p in points
    ]
