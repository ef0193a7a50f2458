"""``analyze --json`` written in pieces (:func:`core.reports.analyze.analysis_json_pieces`):
the pieces join to the bytes of the whole document, whatever the timeline's length, the size of
a piece, or the serialiser the report's strings need."""

from __future__ import annotations

from array import array
from pathlib import Path
from types import GeneratorType

import orjson
import pytest

from core.insights.diagnosis import diagnose
from core.model.json_text import model_json_bytes
from core.model.session import Session
from core.replay import Replayer, native_policy
from core.reports.analyze import AnalysisReport, analysis_json_pieces, analysis_report
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files


def _report(session: Session) -> AnalysisReport:
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    return analysis_report(
        session, result, diagnose(session, result), replayer.inferred_threshold()
    )


def _calls(count: int) -> Session:
    """``count`` calls, one without usage (None in the recorded column)."""
    script = SessionBuilder().user("start")
    for n in range(count):
        script.call(context=None if n == 1 else 1_000 + 10 * n).result(f"out {n}")
    return script.reply("end", context=2_000 + 10 * count).session()


@pytest.mark.parametrize("count", [0, 1, 2, 7, 40])
@pytest.mark.parametrize("calls", [1, 2, 3, 8192])
def test_the_pieces_join_to_the_whole_document(count: int, calls: int) -> None:
    report = _report(_calls(count) if count else SessionBuilder().user("only").session())
    assert report.timeline is not None
    column: object = report.timeline.message_index  # (the calls' own column, written alike)
    assert type(column) is array
    pieces = list(analysis_json_pieces(report, calls=calls))
    whole = model_json_bytes(report)
    assert b"".join(pieces) == whole
    orjson.loads(whole)
    if count > calls:  # the timeline's columns in pieces, none holding the whole timeline
        assert len(pieces) > 4 * (count // calls)


def test_the_document_around_the_timeline_is_held_once() -> None:
    """While its first piece is written, the writer holds the document's head and tail and
    nothing else of the report's bytes (not the document without its timeline besides: three
    copies of its size at the peak of a 100 MB session's ``analyze --json``)."""
    report = _report(_calls(7))
    rest = model_json_bytes(report.model_copy(update={"timeline": None}))
    pieces = analysis_json_pieces(report, calls=2)
    first = next(pieces)
    assert isinstance(pieces, GeneratorType) and pieces.gi_frame is not None
    held = [v for v in pieces.gi_frame.f_locals.values() if isinstance(v, bytes)]
    assert sum(map(len, held)) < len(rest)
    assert first == rest[: len(first)] and first.endswith(b'"timeline": ')
    assert b"".join([first, *pieces]) == model_json_bytes(report)


def test_a_report_without_a_timeline_is_one_piece() -> None:
    report = _report(_calls(3)).model_copy(update={"timeline": None})
    assert list(analysis_json_pieces(report)) == [model_json_bytes(report)]


def test_a_name_pydantic_cannot_write_takes_the_escaped_serialiser_alike() -> None:
    """A file name with an undecodable byte: the whole document and the pieces both escape it."""
    report = _report(_calls(5))
    odd = report.session.model_copy(update={"path": str(Path("/tmp/x\udcff.jsonl"))})
    report = report.model_copy(update={"session": odd})
    whole = model_json_bytes(report)
    assert b"\\\\xff" in whole
    assert b"".join(analysis_json_pieces(report, calls=2)) == whole


def test_a_string_holding_the_timeline_key_is_not_taken_for_it() -> None:
    report = _report(_calls(3))
    odd = report.session.model_copy(update={"path": '\n  "timeline": null'})
    report = report.model_copy(update={"session": odd})
    assert b"".join(analysis_json_pieces(report, calls=1)) == model_json_bytes(report)


@pytest.mark.parametrize("path", small_shared_files(2_000_000)[:12] or [None])
def test_real_sessions_pieces_join_to_the_whole_document(path: Path | None) -> None:
    report = _report(load_shared_or_skip(path))
    assert b"".join(analysis_json_pieces(report, calls=97)) == model_json_bytes(report)


def test_a_cost_worked_out_before_the_replay_gives_the_same_report() -> None:
    """``analyze`` prices the session before its replay and hands the cost to the report."""
    from core.insights.cost import session_cost

    session = _calls(6)
    cost = session_cost(session, each_call=False)
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    diagnosis = diagnose(session, result)
    given = analysis_report(session, result, diagnosis, replayer.inferred_threshold(), cost=cost)
    assert given.cost is cost
    assert model_json_bytes(given) == model_json_bytes(_report(session))
