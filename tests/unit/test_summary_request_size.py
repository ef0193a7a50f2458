"""The size of a summary request known without building it (:meth:`SentHead.content_lengths`),
and compaction's head drops that use it (:class:`core.llm.protocol.OverflowProbe`): the same
figures, drops and outcome as building and sending every shorter request, with the request
built once for the first try and once for the one that is sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.llm.summary_request as summary_request
from core.algorithms.compact import CompactionError, CompactionResult, EntryCache, compact_sync
from core.llm.mock import MockSummarizer
from core.llm.protocol import (
    OverflowProbe,
    Summarizer,
)
from core.llm.summary_request import SentHead
from core.llm.summary_size import MeasuredHead, entry_length
from core.llm.summary_templates import TEMPLATES, build_transcript
from core.model.session import Message, Role, ToolCall, ToolResult
from core.model.tokens import get_counter, utf8_length, utf16_length
from core.policy import CompactionPolicy, Policy, PruningPolicy
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.summarizers import Forwarding

LENGTHS: tuple[Callable[[str], int], ...] = (utf16_length, utf8_length, len)
CALL_IDS = ("c0", "c1", "c2")

_texts = st.text(alphabet="ab é\n[]😀:→\t", max_size=40)


@st.composite
def _message(draw: st.DrawFn, index: int) -> Message:
    role = draw(st.sampled_from([Role.USER, Role.SYSTEM, Role.ASSISTANT, Role.TOOL]))
    summary = draw(st.booleans()) and draw(st.booleans())
    synthetic = draw(st.booleans()) and draw(st.booleans())
    meta = draw(st.booleans())
    text = draw(_texts)
    if role is Role.ASSISTANT:
        calls = draw(
            st.lists(
                st.builds(
                    ToolCall,
                    id=st.sampled_from(CALL_IDS),
                    name=st.sampled_from(["read", "bash"]),
                    arguments=st.one_of(st.none(), st.fixed_dictionaries({"path": _texts}), _texts),
                ),
                max_size=2,
            )
        )
        return Message(
            index=index,
            id=f"m{index}",
            role=role,
            text=text,
            reasoning=draw(_texts),
            tool_calls=calls,
            summary=summary,
            synthetic=synthetic,
        )
    if role is Role.TOOL and draw(st.booleans()):
        result = ToolResult(
            call_id=draw(st.sampled_from(CALL_IDS)),
            tool_name=draw(st.sampled_from([None, None, "grep"])),  # nameless: labelled by a call
            output=draw(_texts),
            is_error=draw(st.booleans()),
        )
        return Message(index=index, id=f"m{index}", role=role, tool_result=result, summary=summary)
    return Message(index=index, id=f"m{index}", role=role, text=text, summary=summary, meta=meta)


@st.composite
def heads(draw: st.DrawFn) -> tuple[list[Message], list[str | None] | None, int, bool]:
    """A head (messages, output stand-ins, the output cap, whether an entry cache is used)."""
    count = draw(st.integers(1, 9))
    messages = [draw(_message(i)) for i in range(count)]
    outputs: list[str | None] | None = None
    if draw(st.booleans()):
        outputs = [
            draw(st.sampled_from([None, "[pruned]", ""])) if m.tool_result is not None else None
            for m in messages
        ]
    return messages, outputs, draw(st.integers(1, 30)), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(heads(), st.sampled_from(LENGTHS))
def test_the_lengths_worked_out_are_the_built_requests_at_every_drop(
    head: tuple[list[Message], list[str | None] | None, int, bool],
    length: Callable[[str], int],
) -> None:
    messages, outputs, cap, cached = head
    sent = SentHead(messages, outputs, cap, EntryCache() if cached else None)
    while True:
        built = [length(m.content) for m in sent.request()]
        assert sent.content_lengths(length) == built
        if len(sent.messages) <= 1:
            break
        sent.drop_oldest()


@settings(max_examples=200, deadline=None)
@given(heads(), st.integers(0, 120), st.sampled_from(["", "Summarise.", "Résume 😀"]))
def test_the_mock_refuses_exactly_the_requests_it_says_it_would(
    head: tuple[list[Message], list[str | None] | None, int, bool], limit: int, prompt: str
) -> None:
    messages, outputs, cap, cached = head
    mock = MockSummarizer(context_limit_tokens=limit)
    assert MockSummarizer().refusal(SentHead(messages, outputs, cap, None), prompt) is None
    sent = SentHead(messages, outputs, cap, EntryCache() if cached else None)
    while True:
        size = mock.request_tokens(sent.request(), prompt)
        assert (mock.refusal(sent, prompt) is not None) == (size > limit)
        if len(sent.messages) <= 1:
            break
        sent.drop_oldest()


def _outcome(
    messages: list[Message], pol: Policy, summarizer: Summarizer, window: int = 30_000
) -> object:
    """What a compaction gave, without its timings."""
    try:
        result: CompactionResult = compact_sync(
            messages, pol, summarizer, window=window, counter=get_counter("chars/4")
        )
    except CompactionError as exc:
        return (str(exc), exc.dropped_head_messages, exc.too_large, exc.head_may_shrink)
    return result.model_dump(exclude={"duration_s"})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=2, max_size=10),
    st.integers(1, 3_000),
    st.integers(0, 12),
    st.booleans(),
)
def test_compaction_with_the_probe_is_compaction_sending_every_request(
    sizes: list[int], limit: int, max_drops: int, nameless: bool
) -> None:
    convo = SessionBuilder()
    for k, tokens in enumerate(sizes):
        if k % 3 == 2:
            convo.tool("grep", text_of_tokens(tokens), {"pattern": str(k)})
        else:
            convo.user(f"request {k} " + text_of_tokens(tokens)).reply(f"reply {k}")
    messages = convo.messages
    if nameless:  # results labelled from their call: entries change as calls are left out
        messages = [
            m
            if m.tool_result is None
            else Message(
                index=m.index,
                id=m.id,
                role=m.role,
                tool_result=ToolResult(call_id=m.tool_result.call_id, output=m.tool_result.output),
            )
            for m in messages
        ]
    pol = Policy(
        pruning=PruningPolicy(enabled=False),
        compaction=CompactionPolicy(
            strategy="summary-only", continuation=False, max_head_drops=max_drops
        ),
    )
    probed = MockSummarizer(context_limit_tokens=limit)
    unprobed = MockSummarizer(context_limit_tokens=limit)
    assert isinstance(probed, OverflowProbe) and not isinstance(Forwarding(unprobed), OverflowProbe)
    # (a window the head is counted over: the shortest head allowed is measured first)
    for window in (30_000, limit):
        assert _outcome(messages, pol, probed, window) == _outcome(
            messages, pol, Forwarding(unprobed), window
        )
        assert probed.calls == unprobed.calls


def _overflow_case() -> tuple[list[Message], Policy, int]:
    """Eight turns, and a mock limit that fits once the five oldest messages are left out."""
    convo = SessionBuilder()
    for i in range(8):
        convo.user(f"request {i} " + text_of_tokens(200)).reply(f"reply {i}")
    pol = Policy(
        pruning=PruningPolicy(enabled=False),
        compaction=CompactionPolicy(strategy="summary-only", continuation=False),
    )
    prompt = TEMPLATES["t12"].prompt()
    sizes = [
        MockSummarizer().request_tokens(
            SentHead(convo.messages[k:], None, 2_000, None).request(), prompt
        )
        for k in range(6)
    ]
    assert sizes[4] > sizes[5]
    return convo.messages, pol, sizes[5]


@pytest.mark.parametrize("cached", [False, True])
def test_a_request_is_not_built_for_each_message_left_out(
    monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    """Five drops, two requests built: the first (refused) and the one sent after the drops
    (before, one was built and sent per drop: six)."""
    messages, pol, limit = _overflow_case()
    built: list[int] = []

    def counting(entries: Sequence[str]) -> str:
        built.append(len(entries))
        return build_transcript(entries)

    monkeypatch.setattr(summary_request, "build_transcript", counting)
    result = compact_sync(
        messages,
        pol,
        MockSummarizer(context_limit_tokens=limit),
        window=30_000,
        counter=get_counter("chars/4"),
        entry_cache=EntryCache() if cached else None,
    )
    assert result.dropped_head_ids == ["m0", "m1", "m2", "m3", "m4"]
    assert built == [len(messages), len(messages) - 5]


def test_no_request_is_built_when_every_drop_allowed_still_overflows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shortest head allowed (``max_head_drops``), measured, and a floor of every longer
    one are refused: no request is built nor sent, and the probe's refusal of that head is the
    error, with the same words and figures as when each request is built and sent (before,
    the whole head's request was built and sent, and before that every shorter one too)."""
    messages, pol, limit = _overflow_case()
    pol.compaction.max_head_drops = 3
    built: list[int] = []

    def counting(entries: Sequence[str]) -> str:
        built.append(len(entries))
        return build_transcript(entries)

    monkeypatch.setattr(summary_request, "build_transcript", counting)
    errors = []
    for summarizer in (
        MockSummarizer(context_limit_tokens=limit),
        Forwarding(MockSummarizer(context_limit_tokens=limit)),
    ):
        with pytest.raises(CompactionError) as info:
            compact_sync(messages, pol, summarizer, window=limit, counter=get_counter("chars/4"))
        errors.append((str(info.value), info.value.dropped_head_messages, info.value.too_large))
        if len(errors) == 1:
            assert built == []
    assert errors[0] == errors[1]
    assert errors[0][1:] == (3, True)
    assert built == [len(messages), *(len(messages) - k for k in (1, 2, 3))]


@settings(max_examples=300, deadline=None)
@given(heads(), st.sampled_from(LENGTHS))
def test_the_floor_of_longer_heads_is_no_more_than_any_of_their_built_requests(
    head: tuple[list[Message], list[str | None] | None, int, bool],
    length: Callable[[str], int],
) -> None:
    messages, outputs, cap, _cached = head
    drops = list(_drops(messages, outputs))
    for k, (shorter, left) in enumerate(drops):
        floor = MeasuredHead(shorter, left, cap).longer_floor().content_lengths(length)
        for longer, longer_outputs in drops[: k + 1]:  # (the head and each longer one)
            request = SentHead(longer, longer_outputs, cap, None).request()
            assert all(f <= length(m.content) for f, m in zip(floor, request, strict=True))


def test_the_floor_of_longer_heads_allows_for_a_result_an_older_call_names() -> None:
    """A result that names no tool is labelled ``tool`` in a head without its call, and by the
    call's (shorter) name in a longer one: the floor takes ``tool``'s length off."""
    messages = [
        Message(index=0, id="a", role=Role.ASSISTANT, tool_calls=[ToolCall(id="c0", name="x")]),
        Message(index=1, id="t", role=Role.TOOL, tool_result=ToolResult(call_id="c0", output="o")),
    ]
    shortest = MeasuredHead(messages[1:], None, 10)
    whole = [len(m.content) for m in SentHead(messages, None, 10, None).request()]
    alone = shortest.content_lengths(len)
    assert shortest.longer_floor().content_lengths(len) == [alone[0], alone[1] - len("tool")]
    # (in the longer head the result's entry is 3 shorter; the call's entry and a separator added)
    assert whole[1] == alone[1] - 3 + len("[Tool call]: x") + 2


@settings(max_examples=300, deadline=None)
@given(heads(), st.sampled_from(LENGTHS))
def test_a_head_measured_without_its_entries_is_the_built_request_at_every_drop(
    head: tuple[list[Message], list[str | None] | None, int, bool],
    length: Callable[[str], int],
) -> None:
    messages, outputs, cap, _cached = head
    for shorter, left in _drops(messages, outputs):
        built = [length(m.content) for m in SentHead(shorter, left, cap, None).request()]
        assert MeasuredHead(shorter, left, cap).content_lengths(length) == built


def _drops(
    messages: list[Message], outputs: list[str | None] | None
) -> Iterator[tuple[list[Message], list[str | None] | None]]:
    """The head after each number of its oldest messages dropped (none first), with its
    outputs."""
    for k in range(len(messages)):
        yield messages[k:], (outputs[k:] if outputs is not None else None)


@pytest.mark.parametrize("length", LENGTHS)
def test_an_entry_measured_is_the_entry_written_for_windowed_texts_and_cut_outputs(
    length: Callable[[str], int],
) -> None:
    big = "ab→😀 " * (summary_request.MAX_TEXT_CHARS // 4)
    names = {"c0": "read"}
    messages = [
        Message(index=0, id="u", role=Role.USER, text=big),
        Message(index=1, id="s", role=Role.SYSTEM, text=big + "x"),
        Message(
            index=2,
            id="a",
            role=Role.ASSISTANT,
            text=big,
            reasoning="r",
            tool_calls=[
                ToolCall(id="c0", name="read", arguments=big),
                ToolCall(id="c1", name="bash", arguments=""),
                ToolCall(id="c2", name="bash ", arguments="ls \t"),
                ToolCall(id="c3", name="grep", arguments={"pattern": big}),
                ToolCall(id="c4", name="edit", arguments={"path": "a→b", "n": [1, 2.5]}),
                ToolCall(id="c5", name="edit", arguments={"sizes": {1, 2}}),  # (not JSON)
                ToolCall(id="c6", name="édit", arguments={}),
            ],
        ),
        Message(index=3, id="t", role=Role.TOOL, text=big),
        Message(
            index=4,
            id="r",
            role=Role.TOOL,
            tool_result=ToolResult(call_id="c0", output="x→😀" * 900, is_error=True),
        ),
        Message(
            index=5, id="q", role=Role.TOOL, tool_result=ToolResult(call_id="c9", output="é" * 9)
        ),
    ]
    for cap in (0, 5, 2_000, 3_000):
        for message in messages:
            for output in (None, "[pruned]", "p" * 2_500):
                if output is not None and message.tool_result is None:
                    continue
                entry = summary_request.serialize_message(message, names, cap, output=output)
                assert entry_length(message, names, cap, length, output=output) == length(entry), (
                    message.id,
                    cap,
                    output,
                )
