"""The per-message loops of a 100 MB session (the replay's calls and their next-call column,
the token lengths summed in one loop, the gauge's recorded series, the message list's flags with
no write for a message without one) say what the definitions they read say:
:func:`usable_usage`, :attr:`Usage.context_tokens`, :func:`recorded_kind`,
:attr:`Message.is_model_call`, :attr:`Message.is_turn_start`, :func:`message_text`."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.overflow import recorded_kind, usable_usage
from core.model.session import (
    Message,
    Role,
    Session,
    SourceFormat,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
    message_flag,
    message_flags,
)
from core.model.tokens import get_counter, message_text
from core.replay.calls import Calls
from tui.screen_state import _BOUNDARY, _META, _SUMMARY, _SYNTHETIC, _message_flags
from tui.widgets.gauge_series import OVERFLOW_RECORDED, _recorded_columns


def _mixed() -> Session:
    """Every case the loops tell apart: conventions on both sides of the reply, a provider
    total, an all-zero usage, no usage, summaries, meta and synthetic messages, a side chain,
    non-ASCII and astral text, tool calls with structured and string arguments."""
    anthropic, openai = UsageConvention.ANTHROPIC, UsageConvention.OPENAI
    rows: list[dict[str, object]] = [
        {"role": Role.USER, "text": "start → now"},
        {"role": Role.ASSISTANT, "text": "ok", "usage": Usage(input=10, cache_read=90, output=5)},
        {"role": Role.USER, "text": "meta", "meta": True},
        {"role": Role.USER, "text": "synthetic", "synthetic": True},
        {
            "role": Role.ASSISTANT,
            "text": "calling 𝄞",
            "usage": Usage(input=50, output=7, total=400, convention=openai),
            "tool_calls": [
                ToolCall(id="a", name="Bash", arguments={"command": "ls → x"}),
                ToolCall(id="b", name="Read", arguments="raw"),
            ],
        },
        {
            "role": Role.TOOL,
            "tool_result": ToolResult(call_id="a", tool_name="Bash", output="→ out\n𝄞"),
        },
        {"role": Role.ASSISTANT, "text": "aborted", "usage": Usage(convention=openai)},
        {"role": Role.ASSISTANT, "text": "no usage"},
        {"role": Role.ASSISTANT, "text": "side", "sidechain": True, "usage": Usage(input=3)},
        {"role": Role.USER, "text": "summary", "summary": True, "compaction_boundary": True},
        {"role": Role.ASSISTANT, "text": "a summary", "summary": True},
        {"role": Role.USER, "text": "again"},
        {"role": Role.ASSISTANT, "reasoning": "think", "usage": Usage(input=900_000)},
        {
            "role": Role.ASSISTANT,
            "text": "after",
            "usage": Usage(input=20, output=3, convention=anthropic),
            "stop_reason": "length",
        },
    ]
    messages = [
        Message(index=i, id=f"m{i}", **row)  # type: ignore[arg-type]
        for i, row in enumerate(rows)
    ]
    return Session(
        id="mixed", format=SourceFormat.CLAUDE_CODE, messages=messages, context_window=200_000
    )


def test_calls_read_usage_as_the_definitions_do() -> None:
    session = _mixed()
    calls = Calls(session)
    main = [m for m in session.messages if not m.sidechain]
    assert list(calls.calls) == [m.index for m in main if m.is_model_call]
    assert [i for i, start in enumerate(calls.turn_start) if start] == [
        m.index for m in main if m.is_turn_start
    ]
    usables = [usable_usage(session.messages[i]) for i in calls.calls]
    assert calls.usage_prompt == [u.prompt_tokens if u else None for u in usables]
    assert calls.usage_after == [u.context_after_reply if u else None for u in usables]
    assert calls.usage_context == [u.context_tokens if u else None for u in usables]
    first = next(u for u in usables if u is not None)
    assert calls.kinds == [recorded_kind(u if u else first) for u in usables]
    assert calls.usage_notes and calls.usage_notes[0].startswith("1 call(s)")
    assert list(calls.next_call) == [
        next((c for c, i in enumerate(calls.calls) if i >= m), -1)
        for m in range(len(session.messages) + 1)
    ]


def test_token_lengths_are_those_of_the_joined_text() -> None:
    session = _mixed()
    for estimator in ("chars/4", "bytes/4", "ceil(chars/4)"):
        counter = get_counter(estimator)
        assert counter.messages_tokens(session.messages) == [
            counter.count(message_text(m)) for m in session.messages
        ]


def test_gauge_recorded_series_reads_each_call_context() -> None:
    session = _mixed()
    columns = _recorded_columns(session)
    calls = session.model_calls()
    assert list(columns.message_index) == [m.index for m in calls]
    expected = [
        t if m.usage is not None and (t := m.usage.context_tokens) > 0 else -1 for m in calls
    ]
    assert list(columns.recorded) == expected
    assert list(columns.flags) == [OVERFLOW_RECORDED if t > 200_000 else 0 for t in expected]


def test_message_flags_name_each_flag_and_every_call() -> None:
    session = _mixed()
    flags, calls = _message_flags(session.messages, len(session.messages), message_flags(session))
    assert list(calls) == [m.index for m in session.messages if m.is_model_call]
    nonzero = {i: value for i, value in enumerate(flags) if value}
    assert set(nonzero) == {2, 3, 9, 10}  # meta, synthetic, summary + boundary, summary
    assert nonzero[9] != nonzero[10]  # the boundary is a flag of its own


def _flags_one_by_one(messages: list[Message], count: int) -> tuple[list[int], list[int]]:
    """The message list's flags and calls as the definitions say, one message at a time (the
    last message with an index decides its flags; an index past ``count`` has none)."""
    flags = [0] * count
    for message in messages:
        if message.index < count:
            flags[message.index] = (
                (_SUMMARY if message.summary else 0)
                | (_SYNTHETIC if message.synthetic else 0)
                | (_META if message.meta else 0)
                | (_BOUNDARY if message.compaction_boundary else 0)
            )
    return flags, [m.index for m in messages if m.is_model_call]


_FLAGGED_MESSAGE = st.builds(
    lambda index, role, marks: Message(
        index=index,
        id=f"m{index}",
        role=role,
        summary=marks[0],
        synthetic=marks[1],
        meta=marks[2],
        compaction_boundary=marks[3],
        sidechain=marks[4],
    ),
    st.integers(min_value=0, max_value=12),
    st.sampled_from([Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM]),
    st.tuples(*[st.booleans()] * 5),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FLAGGED_MESSAGE, max_size=20), st.integers(min_value=0, max_value=14))
def test_message_flags_are_each_message_s_own_the_last_one_deciding(
    messages: list[Message], count: int
) -> None:
    """Repeated indices (a later message without flags clears an earlier one's), indices past
    the table, every role and mark, side chains (whose calls the loader's column leaves out):
    the one pass says what the definitions do."""
    flags, calls = _message_flags(messages, count, bytearray(map(message_flag, messages)))
    assert (list(flags), list(calls)) == _flags_one_by_one(messages, count)
