"""``Calls``' per-message columns (the turn of each message, the call of each, the next call),
against the message-by-message walk they are defined by."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.model.session import Session, Usage
from core.replay.calls import Calls
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files


def _reference(session: Session) -> tuple[list[int], list[int], list[int], list[bool]]:
    """turn_of, call_of, next_call and first_of_turn, one message at a time."""
    turn, since_call = -1, True
    turn_of: list[int] = []
    call_of: list[int] = []
    calls: list[int] = []
    first_of_turn: list[bool] = []
    for i, message in enumerate(session.messages):
        main = not message.sidechain
        if main and message.is_turn_start:
            turn, since_call = turn + 1, True
        turn_of.append(turn)
        if main and message.is_model_call:
            call_of.append(len(calls))
            calls.append(i)
            first_of_turn.append(since_call)
            since_call = False
        else:
            call_of.append(-1)
    next_call = [
        next((c for c, at in enumerate(calls) if at >= i), -1)
        for i in range(len(session.messages) + 1)
    ]
    return turn_of, call_of, next_call, first_of_turn


def _check(session: Session) -> Calls:
    calls = Calls(session)
    turn_of, call_of, next_call, first_of_turn = _reference(session)
    assert list(calls.turn_of) == turn_of
    assert list(calls.call_of) == call_of
    assert list(calls.next_call) == next_call
    assert type(calls.first_of_turn) is bytearray  # (a byte a call)
    assert list(map(bool, calls.first_of_turn)) == first_of_turn
    return calls


def _mixed_session() -> Session:
    """Messages before the first turn, a side chain inside a turn, a summary, trailing
    messages after the last call."""
    return (
        SessionBuilder()
        .system("be brief")
        .call(context=1_000)
        .result("a")
        .user("first")
        .call(context=2_000)
        .user("aside", sidechain=True)
        .call(context=3_000, sidechain=True)
        .result("b")
        .compaction()
        .user("second")
        .user("third")
        .reply("ok", context=4_000)
        .user("last words")
        .session()
    )


def test_columns_of_a_built_session() -> None:
    session = _mixed_session()
    calls = _check(session)
    assert calls.turn_of[0] == -1 and calls.turn_of[len(session.messages) - 1] == 3


def test_columns_without_turns() -> None:
    _check(SessionBuilder().call(context=1_000).result("a").session())


@pytest.mark.parametrize("path", small_shared_files(2_000_000)[:12] or [None])
def test_columns_of_real_sessions(path: Path | None) -> None:
    _check(load_shared_or_skip(path))


def _overflowing_session() -> Session:
    """Calls of 1,000 to 3,000 tokens, one stopped for length and one refused."""
    return (
        SessionBuilder()
        .user("go")
        .call(context=1_000)
        .result("a")
        .call(context=2_000, stop_reason="length")
        .result("b")
        .call(context=3_000)
        .result("c")
        .call(error="prompt is too long")
        .result("d")
        .call()
        .session()
    )


@pytest.mark.parametrize("window", [None, 0, 1_500, 2_500, 10_000])
def test_recorded_overflows_per_window(window: int | None) -> None:
    """Why each call overflowed against ``window``: a fixed overflow (stop reason ``length``,
    an error) whatever the window, else a recorded prompt over a window."""
    from core.algorithms.overflow import overflow_reason

    session = _overflowing_session()
    calls = Calls(session)
    expected: list[str | None] = []
    for c, i in enumerate(calls.calls):
        message = session.messages[i]
        fixed = (
            overflow_reason(message, None)
            if message.stop_reason == "length" or message.error
            else None
        )
        prompt = calls.usage_prompt[c]
        if fixed is None and window and prompt is not None and prompt > window:
            fixed = "over-window"
        expected.append(fixed)
    assert calls.recorded_overflows(window) == expected
    assert calls.recorded_overflow_flags(window) == [reason is not None for reason in expected]
    assert expected[2] == ("over-window" if window in (1_500, 2_500) else None)


def test_kinds_follow_each_calls_usage() -> None:
    """The side of the reply of each call is its usage's (:func:`recorded_kind`, whatever the
    conventions mixed in a session); a call without usable usage takes the session's first
    convention's."""
    from core.algorithms.overflow import recorded_kind, usable_usage
    from core.model.session import Usage, UsageConvention

    def usage(convention: UsageConvention, prompt: int) -> Usage:
        return Usage(input=prompt, output=10, total=prompt + 10, convention=convention)

    session = (
        SessionBuilder()
        .user("go")
        .call(usage=Usage(convention=UsageConvention.OPENAI))  # all zero: not usable
        .result("a")
        .call(usage=usage(UsageConvention.OPENAI, 1_000))
        .result("b")
        .call(usage=usage(UsageConvention.ANTHROPIC, 2_000))
        .result("c")
        .call(usage=usage(UsageConvention.PI, 3_000))
        .result("d")
        .call()
        .session()
    )
    calls = Calls(session)
    first = "after-reply"  # (OpenAI's, the first usable convention)
    expected = [
        recorded_kind(found) if (found := usable_usage(session.messages[i])) else first
        for i in calls.calls
    ]
    assert calls.kinds == expected
    assert expected == ["after-reply", "after-reply", "before-reply", "after-reply", "after-reply"]
    assert list(calls.after_reply) == [kind == "after-reply" for kind in expected]


def test_per_message_flags_are_one_byte_each() -> None:
    """The flags ``Calls`` and ``RecordedCompactions`` keep per message (main conversation, turn
    start, owned by a recorded compaction) and per call (measured after the reply) are bytes, not
    lists of 8-byte pointers, holding what each message says (the walked flags too: the message
    states' ``in_context_at_end`` copied from them is read as bools, see
    ``test_truncated_and_in_context_states_are_bools_read_from_bytes``)."""
    from core.replay.recorded import placed

    session = _mixed_session()
    calls, recorded = placed(session)
    messages = session.messages
    for flags in (calls.main, calls.turn_start, calls.after_reply, recorded.owned):
        assert type(flags) is bytearray
    assert list(calls.main) == [not m.sidechain for m in messages]
    assert list(calls.turn_start) == [(not m.sidechain) and m.is_turn_start for m in messages]
    assert list(calls.after_reply) == [kind == "after-reply" for kind in calls.kinds]
    assert any(recorded.owned) and len(recorded.owned) == len(messages)
    assert type(recorded.walked) is bytearray
    assert list(map(bool, recorded.walked)) == [
        bool(main) and not owned for main, owned in zip(calls.main, recorded.owned, strict=True)
    ]


def test_the_recorded_overflows_are_the_fixed_ones_where_no_call_is_over_the_window() -> None:
    """Why each call overflowed, against a window no recorded call passes (or no window), is
    the column of the fixed overflows itself, not a copy per window; a window some call passes
    has a column of its own."""
    calls = Calls(_overflowing_session())
    fixed = calls.fixed_overflow
    assert calls.recorded_overflows(None) is fixed
    assert calls.recorded_overflows(10_000) is fixed
    assert fixed[1] is not None and fixed[2] is None
    over = calls.recorded_overflows(2_500)
    assert over is not fixed and over[2] == "over-window"


def test_call_messages_are_an_int_array_the_timeline_keeps() -> None:
    """The message of each call is a 4-byte int column (no int object per call), the analysis
    timeline keeps that column itself (not a list copy of it) and writes it as a list."""
    from array import array

    from core.model.json_text import model_json_bytes
    from core.policy import get_preset
    from core.replay import replay
    from core.reports.analyze import call_timeline

    session = _mixed_session()
    calls = Calls(session)
    assert type(calls.calls) is array and calls.calls.typecode == "i"
    assert list(calls.calls) == [
        i for i, m in enumerate(session.messages) if m.is_model_call and not m.sidechain
    ]
    result = replay(session, get_preset("claude-code"))
    timeline = call_timeline(result)
    assert timeline.message_index is result.point_column("message_index")
    column: object = timeline.message_index  # (held as the int array its field is written from)
    assert type(column) is array
    written = model_json_bytes(timeline)
    assert b"array" not in written
    assert orjson.loads(written)["message_index"] == list(calls.calls)


def test_turn_start_flags_are_bytes_and_checks_stay_bools() -> None:
    """The turn-start flags are a byte a call; a policy checking only at turn starts (pi) still
    says ``true`` or ``false`` of each call's check, never 1 or 0."""
    from core.policy import get_preset
    from core.replay import replay

    script = SessionBuilder().user("a").call("bash", context=1_000).result("x")
    session = script.call("bash", context=1_500).result("y").reply("ok", context=2_000).session()
    calls = Calls(session)
    assert type(calls.first_of_turn) is bytearray and list(calls.first_of_turn) == [1, 0, 0]
    checked = replay(session, get_preset("pi")).point_column("checked")
    assert all(type(flag) is bool for flag in checked), list(checked)


def _usage_reference(session: Session, calls: Calls) -> tuple[list[object], ...]:
    """The usage columns and notes of ``calls``, call by call through ``usable_usage`` and the
    usage's properties (the reading the one-pass loop of :class:`Calls` replaces)."""
    from core.algorithms.overflow import overflow_reason, usable_usage
    from core.model.session import BEFORE_REPLY_CONVENTIONS

    context: list[object] = []
    prompt: list[object] = []
    after: list[object] = []
    fixed: list[object] = []
    zero = 0
    for i in calls.calls:
        message = session.messages[i]
        usage = usable_usage(message)
        zero += usage is None and message.usage is not None
        before = usage is not None and usage.convention in BEFORE_REPLY_CONVENTIONS
        context.append(None if usage is None else usage.context_tokens)
        prompt.append(None if usage is None else usage.prompt_tokens)
        after.append(None if usage is None else usage.context_after_reply)
        assert usage is None or usage.context_tokens == (
            usage.prompt_tokens if before else usage.context_after_reply
        )
        fixed.append(
            overflow_reason(message, None)
            if message.stop_reason == "length" or message.error
            else None
        )
    return context, prompt, after, fixed, [zero]


def test_usage_columns_are_usable_usage_call_by_call() -> None:
    """Each call's recorded context, prompt and context after the reply (None without a usable
    usage: none, or all zero), its fixed overflow and the all-zero count, read in one loop,
    are what ``usable_usage`` and the usage's properties say of it: a total of 0 falls back to
    prompt plus output, each convention measures on its own side, a negative prompt is no
    figure."""
    from core.model.session import Usage, UsageConvention

    openai, anthropic = UsageConvention.OPENAI, UsageConvention.ANTHROPIC
    session = (
        SessionBuilder()
        .user("go")
        .call(usage=Usage(convention=openai))  # all zero
        .result("a")
        .call(usage=Usage(input=900, cache_read=100, output=10, total=1_010, convention=openai))
        .result("b")
        .call(usage=Usage(input=5, cache_read=2_000, cache_write=40, output=7))
        .result("c")
        .call(usage=Usage(input=300, output=20, total=0, convention=UsageConvention.PI))
        .result("d")
        .call(usage=Usage(input=-50, output=20, convention=anthropic), stop_reason="length")
        .result("e")
        .call(error="prompt is too long")
        .result("f")
        .call(usage=Usage(input=10, output=5, convention=UsageConvention.GEMINI))
        .call()
        .session()
    )
    calls = Calls(session)
    context, prompt, after, fixed, zero = _usage_reference(session, calls)
    assert calls.usage_context == context
    assert calls.usage_prompt == prompt
    assert calls.usage_after == after
    assert calls.fixed_overflow == fixed
    assert context[:4] == [None, 1_010, 2_045, 320] and fixed[4] == "stop-length"
    assert calls.usage_notes == [
        f"{zero[0]} call(s) recorded an all-zero usage (aborted or failed calls); "
        "their context is estimated from the neighbouring calls."
    ]


@pytest.mark.parametrize("path", small_shared_files(2_000_000)[:12] or [None])
def test_usage_columns_of_real_sessions(path: Path | None) -> None:
    session = load_shared_or_skip(path)
    calls = Calls(session)
    context, prompt, after, fixed, _zero = _usage_reference(session, calls)
    assert (calls.usage_context, calls.usage_prompt, calls.usage_after) == (context, prompt, after)
    assert calls.fixed_overflow == fixed


_STOPS = [None, "end_turn", "tool_use", "length", "stop"]
_ERRORS = [None, "", "prompt is too long", "rate limited"]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(_STOPS),
            st.sampled_from(_ERRORS),
            st.none() | st.integers(min_value=0, max_value=5_000),
            st.booleans(),
        ),
        max_size=12,
    )
)
def test_fixed_overflows_and_usage_are_read_call_by_call(
    calls_made: list[tuple[str | None, str | None, int | None, bool]],
) -> None:
    """The calls' fixed overflows (read as columns, looked up only where a stop for length or
    an error is among them) and usage columns are what each call's message says of it, with
    or without such calls, usage recorded or not, in the main conversation or a side chain."""
    builder = SessionBuilder().user("go")
    for stop, error, sent, side in calls_made:
        usage = None if sent is None else Usage(input=sent, output=3)
        builder.call(usage=usage, stop_reason=stop, error=error, sidechain=side).result("ok")
    session = builder.session()
    calls = Calls(session)
    context, prompt, after, fixed, _zero = _usage_reference(session, calls)
    assert (calls.usage_context, calls.usage_prompt, calls.usage_after) == (context, prompt, after)
    assert calls.fixed_overflow == fixed
