"""What the replay needs from an opencode session: why each compaction ran (with the evidence),
the call the provider refused before an overflow compaction, and who served the calls.

``fixtures/opencode/triggers.json`` is a hand-written export with one compaction of each kind:
a threshold one (``auto``), an overflow recovery after an empty, unfinished call, and ``/compact``
(``auto: false``); the model changes from gpt-5.4 to gpt-5.5 on provider ``openai`` at cost 0.
The real exports in ``../shared/samples/opencode`` are checked when they are there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.algorithms.overflow import overflow_reason
from core.formats import load_session
from core.formats import opencode as oc
from core.formats.opencode_messages import REFUSED_CALL_ERROR
from core.model.session import Message, Session, Severity
from tests.support.paths import REPO, TESTS
from tests.unit.test_formats_opencode import write_db, write_storage

FIXTURE = TESTS / "fixtures" / "opencode" / "triggers.json"
SAMPLES = REPO.parent / "shared" / "samples" / "opencode"
BIG_PICKLE = SAMPLES / "opencode-1.18.10_big-pickle_auto+manual_learn-p5_WB.json"
LUNA = SAMPLES / "opencode-1.18.9_openai-gpt-5.6-luna_auto-overflow_shui_12.json"


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(FIXTURE.read_text())
    return doc


def _info(doc: dict[str, Any], msg_id: str) -> dict[str, Any]:
    info: dict[str, Any] = next(m["info"] for m in doc["messages"] if m["info"]["id"] == msg_id)
    return info


def _load(doc: dict[str, Any], tmp_path: Path) -> Session:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    return oc.load(path)


def _message(session: Session, msg_id: str) -> Message:
    return next(m for m in session.messages if m.id == msg_id)


@pytest.fixture(scope="module")
def session() -> Session:
    return oc.load(FIXTURE)


# -- triggers ------------------------------------------------------------------------------


def test_each_compaction_part_gives_its_trigger_and_evidence(session: Session) -> None:
    assert [c.trigger for c in session.compactions] == ["auto", "overflow", "manual"]
    assert [c.trigger_evidence for c in session.compactions] == [
        "compaction part auto=true overflow=false in messages[3]",
        "compaction part auto=true overflow=true in messages[9]; messages[8] is the call the "
        "provider refused (no usage, no finish)",
        "compaction part auto=false in messages[13]",
    ]
    assert [c.first_kept_id for c in session.compactions] == ["msg_01", "msg_09", "msg_12"]
    # the figure opencode compared: the last call with a usage (the refused one has none)
    assert [c.tokens_before for c in session.compactions] == [163_200, 60_200, 21_000]
    for event in session.compactions:
        summary = session.messages[event.message_index]
        assert summary.summary and not summary.is_model_call


def test_evidence_names_the_message_in_a_database_or_storage_folder(tmp_path: Path) -> None:
    storage = load_session(write_storage(_doc(), tmp_path))
    database = load_session(write_db([_doc()], tmp_path / "opencode.db"))
    for loaded in (storage, database):
        assert [c.trigger for c in loaded.compactions] == ["auto", "overflow", "manual"]
        assert loaded.compactions[1].trigger_evidence == (
            "compaction part auto=true overflow=true in message msg_10; message msg_09 is the "
            "call the provider refused (no usage, no finish)"
        )


def test_a_summary_without_its_request_is_unknown(tmp_path: Path) -> None:
    doc = _doc()
    request = next(m for m in doc["messages"] if m["info"]["id"] == "msg_04")
    request["parts"] = [{"id": "prt_04a", "type": "text", "text": "summarise please"}]
    loaded = _load(doc, tmp_path)
    first = loaded.compactions[0]
    assert first.trigger == "unknown"
    assert first.trigger_evidence == (
        "a summary message with no compaction request before it in messages[4]"
    )


def test_a_part_without_the_auto_flag_is_unknown(tmp_path: Path) -> None:
    doc = _doc()
    request = next(m for m in doc["messages"] if m["info"]["id"] == "msg_04")
    del request["parts"][0]["auto"]
    first = _load(doc, tmp_path).compactions[0]
    assert first.trigger == "unknown"
    assert first.trigger_evidence == "compaction part overflow=false in messages[3] (no auto flag)"


# -- overflow recovery ---------------------------------------------------------------------


def test_the_refused_call_is_a_call_recognised_as_overflowed(session: Session) -> None:
    refused = _message(session, "msg_09")
    assert refused.is_model_call and refused.usage is None
    assert overflow_reason(refused, None) == "error"
    assert refused.error == REFUSED_CALL_ERROR
    # every other call of the fixture either succeeded or says so itself
    overflowed = [m.id for m in session.model_calls() if overflow_reason(m, None)]
    assert overflowed == ["msg_09", "msg_17"]


def test_the_refused_call_keeps_its_own_error_text(tmp_path: Path) -> None:
    doc = _doc()
    _info(doc, "msg_09")["error"] = {"name": "APIError", "data": {"message": "Bad Request"}}
    refused = _message(_load(doc, tmp_path), "msg_09")
    assert refused.error == "APIError: Bad Request (opencode: context window exceeded)"
    assert overflow_reason(refused, None) == "error"

    recognised = "ContextOverflowError: prompt is too long: 412000 tokens > 400000 maximum"
    _info(doc, "msg_09")["error"] = {
        "name": "ContextOverflowError",
        "data": {"message": recognised.split(": ", 1)[1]},
    }
    assert _message(_load(doc, tmp_path), "msg_09").error == recognised


def test_an_overflow_flag_after_a_finished_call_marks_nothing(tmp_path: Path) -> None:
    doc = _doc()
    doc["messages"] = [m for m in doc["messages"] if m["info"]["id"] != "msg_09"]
    loaded = _load(doc, tmp_path)
    event = loaded.compactions[1]
    assert event.trigger == "overflow"
    assert event.trigger_evidence == "compaction part auto=true overflow=true in messages[8]"
    finished = _message(loaded, "msg_08")
    assert finished.error is None and overflow_reason(finished, None) is None


def test_a_context_overflow_error_in_other_words_is_recognised(session: Session) -> None:
    failed = _message(session, "msg_17")
    assert failed.error == (
        "ContextOverflowError: Request too large for gpt-5.5 (opencode: context window exceeded)"
    )
    assert overflow_reason(failed, None) == "error"


# -- provider, model, version --------------------------------------------------------------


def test_provider_model_version_and_subscription(session: Session) -> None:
    assert (session.provider, session.model) == ("openai", "gpt-5.5")
    assert session.agent_version == "1.18.9"
    assert session.metadata["model_changes"] == 1
    assert session.metadata["models"] == ["openai/gpt-5.4", "openai/gpt-5.5"]
    assert session.metadata["subscription"] is True


def test_a_billed_call_or_another_provider_is_no_subscription(tmp_path: Path) -> None:
    doc = _doc()
    _info(doc, "msg_13")["cost"] = 0.0125
    assert "subscription" not in _load(doc, tmp_path).metadata
    doc = _doc()
    for entry in doc["messages"]:
        if entry["info"]["role"] == "assistant":
            entry["info"]["providerID"] = "github-copilot"
    loaded = _load(doc, tmp_path)
    assert loaded.provider == "github-copilot" and "subscription" not in loaded.metadata


def test_a_session_without_calls_takes_the_model_it_asked_for(tmp_path: Path) -> None:
    doc = _doc()
    doc["messages"] = doc["messages"][:1]
    loaded = _load(doc, tmp_path)
    assert (loaded.provider, loaded.model) == ("openai", "gpt-5.4")
    doc["messages"] = []
    assert _load(doc, tmp_path).model == "gpt-5.4"  # the session info's model


def test_the_loader_leaves_an_unstated_window_to_the_caller(session: Session) -> None:
    assert session.context_window is None and session.window_source == "unknown"
    assert session.diagnostics == []


# -- the real exports ----------------------------------------------------------------------


def _sample(path: Path) -> Session:
    if not path.exists():
        pytest.skip("shared samples are not available")
    return oc.load(path)


def _no_problems(session: Session) -> None:
    assert [d for d in session.diagnostics if d.severity is not Severity.INFO] == []


def test_big_pickle_loads_without_a_window_and_has_auto_then_manual() -> None:
    session = _sample(BIG_PICKLE)
    _no_problems(session)
    assert (session.provider, session.model, session.agent_version) == (
        "opencode",
        "big-pickle",
        "1.18.10",
    )
    assert session.context_window is None
    assert [c.trigger for c in session.compactions] == ["auto", "manual"]
    assert [c.tokens_before for c in session.compactions] == [140_110, 123_108]
    assert [c.trigger_evidence for c in session.compactions] == [
        "compaction part auto=true overflow=false in messages[56]",
        "compaction part auto=false in messages[174]",
    ]
    assert "subscription" not in session.metadata
    assert load_session(BIG_PICKLE).compactions == session.compactions  # no --window needed


def test_luna_is_an_overflow_recovery_after_a_refused_call() -> None:
    session = _sample(LUNA)
    _no_problems(session)
    assert (session.provider, session.model, session.agent_version) == (
        "openai",
        "gpt-5.6-luna",
        "1.18.9",
    )
    assert session.metadata["subscription"] is True
    (event,) = session.compactions
    assert event.trigger == "overflow"
    assert event.tokens_before == 182_273
    assert event.trigger_evidence == (
        "compaction part auto=true overflow=true in messages[52]; messages[51] is the call the "
        "provider refused (no usage, no finish)"
    )
    raw = json.loads(LUNA.read_text())
    refused_id = raw["messages"][51]["info"]["id"]
    assert event.first_kept_id == refused_id
    refused = _message(session, refused_id)
    assert refused.is_model_call and refused.usage is None
    assert overflow_reason(refused, None) == "error"
    assert [m.id for m in session.model_calls() if overflow_reason(m, None)] == [refused_id]
