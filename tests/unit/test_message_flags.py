"""The messages' flags a loader's builder writes as it makes each message (``message_flag``), and
the index of the calls ``Calls`` makes from them in C: the same as the message-by-message
reading of :attr:`Message.is_model_call`, :attr:`Message.is_turn_start` and ``sidechain``, on
every fixture of every format and on generated sessions; a list replaced, cut or grown is read
again, never through a column made for another list."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import load_session
from core.formats.base import LoadError, SessionBuilder
from core.model.session import (
    FLAG_CALL,
    FLAG_MAIN,
    FLAG_TURN,
    Message,
    Role,
    Session,
    SourceFormat,
    message_flag,
    message_flags,
    replace,
)
from core.replay.calls import Calls
from tests.support.paths import REPO, TESTS, opencode_storage_piece, small_shared_files


def _flag(message: Message) -> int:
    """The flags of one message, read through the properties the flags stand for."""
    if message.sidechain:
        return 0
    return (
        FLAG_MAIN
        | (FLAG_CALL if message.is_model_call else 0)
        | (FLAG_TURN if message.is_turn_start else 0)
    )


def _index(session: Session) -> dict[str, list[int]]:
    """Every column of the calls' index, one message at a time (the loop ``Calls`` replaced)."""
    calls: list[int] = []
    call_of: list[int] = []
    first_of_turn: list[int] = []
    turn_start: list[int] = []
    turn_of: list[int] = []
    turn, since_call = -1, 1
    for i, message in enumerate(session.messages):
        main = not message.sidechain
        starts = main and message.is_turn_start
        turn_start.append(int(starts))
        if starts:
            turn, since_call = turn + 1, 1
        turn_of.append(turn)
        if main and message.is_model_call:
            call_of.append(len(calls))
            calls.append(i)
            first_of_turn.append(since_call)
            since_call = 0
        else:
            call_of.append(-1)
    n = len(session.messages)
    next_call = [next((c for c, at in enumerate(calls) if at >= i), -1) for i in range(n + 1)]
    return {
        "main": [int(not m.sidechain) for m in session.messages],
        "calls": calls,
        "call_of": call_of,
        "first_of_turn": first_of_turn,
        "turn_start": turn_start,
        "turn_of": turn_of,
        "next_call": next_call,
    }


def _check(session: Session) -> Calls:
    assert list(message_flags(session)) == list(map(_flag, session.messages))
    calls = Calls(session)
    expected = _index(session)
    for name, column in expected.items():
        assert list(getattr(calls, name)) == column, name
    for i in range(len(session.messages) + 1):
        upcoming = expected["next_call"][i]
        assert calls.next_call_or_none(i) == (upcoming if upcoming >= 0 else None)
    return calls


def _refused(path: Path) -> bool:
    """The loaders refuse ``path`` (its refusal and message are tested with the hostile files)."""
    try:
        load_session(path)
    except LoadError:
        return True
    return False


def _not_a_session(path: Path) -> bool:
    """A fixture that is no session on its own: a hostile file the loaders refuse (the others,
    sessions with damaged values, are kept), a piece of an opencode storage folder other than its
    session files (read with the session), a sub-agent's meta file beside its transcript, and the
    opencode v2 rows a test builds a database from."""
    return (
        opencode_storage_piece(path)
        or path.name.endswith(".meta.json")
        or path == TESTS / "fixtures" / "opencode" / "session_message.json"
        or ("hostile" in path.parts and _refused(path))
    )


def _fixture_files() -> list[Path]:
    """Every session file of the fixtures and samples (the loaders' every format), and the
    small shared sessions."""
    found = [
        path
        for folder in (TESTS / "fixtures", REPO / "sample_sessions")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.suffix in (".jsonl", ".json", ".zst", ".db")
        and not _not_a_session(path)
    ]
    return found + small_shared_files(2_000_000)[:20]


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_the_loaded_flags_are_the_messages_own(path: Path) -> None:
    _check(load_session(path))


def test_a_builders_session_keeps_its_column_and_a_claude_code_file_reads_it() -> None:
    session = load_session(REPO / "sample_sessions" / "claude-code" / "overflow.jsonl")
    kept = message_flags(session)
    assert type(kept) is bytearray and message_flags(session) is kept  # (not worked out again)
    _check(session)


_ROLES = st.sampled_from(list(Role))
_MESSAGE = st.fixed_dictionaries(
    {
        "role": _ROLES,
        "summary": st.booleans(),
        "synthetic": st.booleans(),
        "meta": st.booleans(),
        "sidechain": st.booleans(),
    }
)


def _built(rows: list[dict[str, object]], changed: list[int]) -> Session:
    """A session made by the loaders' builder from ``rows``, the messages at ``changed`` made
    meta after they were appended (as the Codex loader does), the builder told so."""
    builder = SessionBuilder(SourceFormat.CODEX, None)
    for k, row in enumerate(rows):
        builder.append(Message(index=0, id=f"m{k}", **row))  # type: ignore[arg-type]
    for k in changed:
        if k < len(rows):
            message = builder.messages[k]
            message.meta = True
            builder.reflag(message)
    return builder.build()


@settings(max_examples=200, deadline=None)
@given(st.lists(_MESSAGE, max_size=40), st.lists(st.integers(0, 39), max_size=5))
def test_the_index_of_generated_sessions_is_the_loops(
    rows: list[dict[str, object]], changed: list[int]
) -> None:
    session = _built(rows, changed)
    assert message_flags(session) is session.derived["message_flags"][1]
    calls = _check(session)
    for i in range(len(session.messages) + 1):
        assert calls.checkpoint_before(i) == _checkpoint_before(_index(session), i)


def _checkpoint_before(index: dict[str, list[int]], i: int) -> int:
    """:meth:`Calls.checkpoint_before` as it read the next-call column."""
    nxt = index["next_call"][i]
    calls = index["calls"]
    if nxt < 0:
        nxt = len(calls)
    if nxt < len(calls) and calls[nxt] == i:
        return nxt
    return max(0, nxt - 1) if nxt > 0 else 0


@settings(max_examples=100, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=30), st.data())
def test_a_list_replaced_cut_or_grown_is_read_again(
    rows: list[dict[str, object]], data: st.DataObject
) -> None:
    session = _built(rows, [])
    messages = session.messages
    start = data.draw(st.integers(0, len(messages)))
    session.messages = [m for m in messages[start:] if not m.sidechain]  # (filtered: a new list)
    _check(session)
    session.messages = messages
    del messages[data.draw(st.integers(0, len(messages) - 1))]  # (cut in place: shorter)
    _check(session)
    messages.append(Message(index=len(messages), id="more", role=Role.USER))  # (grown)
    _check(session)
    messages[0] = Message(index=0, id="other", role=Role.ASSISTANT)  # (replaced in place)
    _check(session)


def test_every_flag_is_one_of_four_codes() -> None:
    """The index reads four codes: a side chain's message, and a main one that is a call, a
    turn's start or neither."""
    plain = [Message(index=0, id="m", role=role) for role in Role]
    seen = {
        message_flag(replace(message, **({name: True} if name else {})))
        for message in plain
        for name in (None, "summary", "synthetic", "meta", "sidechain")
    }
    assert seen == {0, FLAG_MAIN, FLAG_MAIN | FLAG_CALL, FLAG_MAIN | FLAG_TURN}


def test_sessions_equal_in_fields_are_equal_whatever_was_derived_from_them() -> None:
    """A session's kept flags (or placed calls) do not make it unequal to the same session
    read another way (the ctxscope reader keeps none)."""
    path = REPO / "sample_sessions" / "claude-code" / "overflow.jsonl"
    one, two = load_session(path), load_session(path)
    two.derived.clear()
    assert one == two
    two.model = "another"
    assert one != two
