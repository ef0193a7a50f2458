"""Compaction pipeline: prune → split → summarise → reassemble → continue, and its failure modes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.compact import (
    CompactionError,
    CompactionResult,
    EntryCache,
    build_request,
    compact,
    compact_sync,
)
from core.llm.mock import MockSummarizer
from core.llm.protocol import (
    ChatMessage,
    ContextOverflowError,
    DeltaCallback,
    LLMUsage,
    ServerError,
    Summarizer,
    SummaryResult,
)
from core.llm.summary_templates import (
    PREVIOUS_SUMMARY_OPEN,
    SUMMARY_BLOCK_CLOSE,
    SUMMARY_BLOCK_OPEN,
    TEMPLATES,
    section_headings,
    split_sections,
)
from core.model.session import Message, Role, replace, to_record
from core.model.tokens import get_counter
from core.policy import CompactionPolicy, Policy, PruningPolicy, SplitPolicy, get_preset
from tests.support.builders import SessionBuilder, text_of_tokens

COUNTER = get_counter("chars/4")
WINDOW = 30_000  # usable 10,000 with the default reserve: tail budget 2,500


def session() -> list[Message]:
    """Four turns with sizeable tool outputs; about 6,000 tokens."""
    return (
        SessionBuilder()
        .user("Fix the parser bug in core/parser.py\nDo not change the public API.")  # 0
        .tool("read", text_of_tokens(1500), {"path": "core/parser.py"})  # 1, 2
        .tool(
            "bash",
            "FAILED test_parse - IndexError\n" + text_of_tokens(500),
            {"command": "pytest -q"},
        )  # 3, 4
        .reply("The issue is an off-by-one in the loop.")  # 5
        .user("Go ahead and fix it")  # 6
        .tool("edit", "applied", {"path": "core/parser.py"})  # 7, 8
        .tool("bash", text_of_tokens(1200), {"command": "pytest -q"})  # 9, 10
        .user("Now add a regression test")  # 11
        .tool("write", "created", {"path": "tests/test_parser.py"})  # 12, 13
        .tool("bash", text_of_tokens(900), {"command": "pytest -q tests/test_parser.py"})  # 14, 15
        .user("Thanks, summarise what changed")  # 16
        .reply("Changed the loop bound and added a test. " + text_of_tokens(300))  # 17
        .messages
    )


def policy(**compaction: object) -> Policy:
    """Pruning off (its own tests turn it on): pruning alone can make a session fit the tail."""
    return Policy(
        pruning=PruningPolicy(enabled=False),
        compaction=CompactionPolicy.model_validate(compaction),
    )


def run(
    messages: Sequence[Message],
    pol: Policy | None = None,
    summarizer: Summarizer | None = None,
    *,
    window: int = WINDOW,
    previous_summary: str | None = None,
    auto: bool = True,
    on_delta: DeltaCallback | None = None,
    token_counts: Sequence[int] | None = None,
    now_ms: int | None = None,
    entry_cache: EntryCache | None = None,
) -> CompactionResult:
    return compact_sync(
        messages,
        pol or policy(),
        summarizer or MockSummarizer(),
        window=window,
        counter=COUNTER,
        previous_summary=previous_summary,
        auto=auto,
        on_delta=on_delta,
        token_counts=token_counts,
        now_ms=now_ms,
        entry_cache=entry_cache,
    )


def assert_summary_message(message: Message, summary: str) -> None:
    assert message.role is Role.SYSTEM
    assert message.summary
    assert message.text == f"{SUMMARY_BLOCK_OPEN}\n{summary}\n{SUMMARY_BLOCK_CLOSE}"


def test_tail_strategy_output_is_summary_then_tail_then_continuation() -> None:
    messages = session()
    result = run(messages)
    assert result.compacted
    assert result.split is not None
    cut = result.split.cut_index
    assert 0 < cut < len(messages)
    assert result.head_ids == [m.id for m in messages[:cut]]
    assert result.tail_ids == [m.id for m in messages[cut:]]
    out = result.output_messages
    assert_summary_message(out[0], result.summary)
    assert [m.id for m in out[1:-1]] == result.tail_ids
    continuation = out[-1]
    assert continuation.role is Role.USER
    assert continuation.synthetic
    assert continuation.text == CompactionPolicy().continuation_text
    assert section_headings(result.summary) == TEMPLATES["t12"].headings


def test_no_continuation_when_manual_or_disabled() -> None:
    manual = run(session(), auto=False)
    assert not manual.output_messages[-1].synthetic
    off = run(session(), policy(continuation=False))
    assert not any(m.synthetic for m in off.output_messages)
    text = run(session(), policy(continuation_text="keep going"))
    assert text.output_messages[-1].text == "keep going"


def test_tokens_before_and_after_are_counted() -> None:
    messages = session()
    result = run(messages)
    assert result.tokens_before == sum(COUNTER.messages_tokens(messages))
    assert result.tokens_after == sum(COUNTER.messages_tokens(result.output_messages))
    assert result.tokens_after < result.tokens_before
    assert result.tokens_saved == result.tokens_before - result.tokens_after


def test_precomputed_token_counts_are_used() -> None:
    messages = session()
    counts = [1] * len(messages)
    result = run(messages, token_counts=counts)
    assert result.tokens_before == len(messages)


def test_input_is_not_mutated() -> None:
    messages = session()
    snapshot = [to_record(m) for m in messages]
    run(messages, Policy(pruning=PruningPolicy(protect_turns=1)))
    assert [to_record(m) for m in messages] == snapshot


def test_pruning_runs_first_and_shows_in_the_output() -> None:
    pol = Policy(
        pruning=PruningPolicy(protect_turns=1),
        split=SplitPolicy(tail_budget_tokens=3000),
    )
    result = run(session(), pol, now_ms=42)
    assert result.prune is not None
    assert result.pruned_ids == ["m2", "m4", "m8", "m10", "m13", "m15"]
    tail = {m.id: m for m in result.output_messages}
    pruned_in_tail = [i for i in result.pruned_ids if i in tail]
    assert pruned_in_tail, "the tail should hold a pruned output"
    for message_id in pruned_in_tail:
        tool_result = tail[message_id].tool_result
        assert tool_result is not None
        assert tool_result.output == "<tool-output-compacted />"
        assert tool_result.compacted_at_ms == 42
    assert result.prune.summary in result.reason


def test_nothing_to_compact() -> None:
    messages = SessionBuilder().user("hi").reply("hello").messages
    result = run(messages)
    assert not result.compacted
    assert result.output_messages == messages
    assert result.request_messages == []
    assert result.usage is None
    assert "Nothing to compact" in result.reason


def test_update_variant_when_the_conversation_starts_with_a_summary() -> None:
    first = run(session(), policy(continuation=False))
    follow_up = (
        SessionBuilder()
        .user("Also update the changelog")
        .tool("edit", "ok", {"path": "CHANGELOG.md"})
        .messages
    )
    again = run([*first.output_messages, *follow_up], policy(strategy="summary-only"))
    assert again.updated_previous_summary
    assert PREVIOUS_SUMMARY_OPEN in again.prompt
    assert first.summary in again.prompt
    assert TEMPLATES["t12"].update_instructions in again.prompt
    # the earlier summary is quoted in the prompt, not repeated in the transcript
    assert SUMMARY_BLOCK_OPEN not in again.request_messages[1].content
    goal = split_sections(again.summary)["Goal"]
    assert "Fix the parser bug" in goal
    assert "CHANGELOG.md" in split_sections(again.summary)["Relevant files"]


def test_update_variant_from_the_argument() -> None:
    result = run(session(), previous_summary="## Goal\n- Ship v2")
    assert result.updated_previous_summary
    assert "- Ship v2" in result.prompt
    assert split_sections(result.summary)["Goal"].startswith("- Ship v2")


def test_new_variant_without_previous_summary() -> None:
    result = run(session())
    assert not result.updated_previous_summary
    assert PREVIOUS_SUMMARY_OPEN not in result.prompt
    assert TEMPLATES["t12"].new_instructions in result.prompt


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_follows_the_policy(template: str) -> None:
    result = run(session(), policy(template=template))
    assert result.template == template
    assert section_headings(result.summary) == TEMPLATES[template].headings


def test_head_tool_outputs_are_capped_in_the_request() -> None:
    messages = (
        SessionBuilder().user("go").tool("read", "abc" * 2000).user("next").reply("ok").messages
    )
    pol = policy(strategy="summary-only", head_tool_output_max_chars=1000)
    result = run(messages, pol)
    content = result.request_messages[1].content
    assert ("abc" * 2000)[
        :1000
    ] + "\n\n[... 5000 more characters cut from this tool output]" in content
    assert "abc" * 400 not in content
    # the output itself is unchanged
    assert messages[2].tool_result is not None
    assert len(messages[2].tool_result.output) == 6000


def test_request_is_the_serialised_head() -> None:
    result = run(session(), policy(strategy="summary-only"))
    system, transcript = result.request_messages
    assert system.role == "system"
    assert transcript.content.startswith("<conversation>\n[User]: Fix the parser bug")
    assert '[Tool call]: read {"path":"core/parser.py"}' in transcript.content
    assert "[Tool result]: bash\nFAILED test_parse" in transcript.content
    assert result.max_tokens == CompactionPolicy().summary_max_tokens


# --- overflow of the summary request ----------------------------------------------------------


def overflow_case() -> tuple[list[Message], Policy]:
    convo = SessionBuilder()
    for i in range(8):
        convo.user(f"request {i} " + text_of_tokens(200)).reply(f"reply {i}")
    return convo.messages, policy(strategy="summary-only", continuation=False)


def test_head_drop_retry_reports_the_drop_count() -> None:
    messages, pol = overflow_case()
    prompt = TEMPLATES["t12"].prompt()
    mock = MockSummarizer()
    sizes = [mock.request_tokens(build_request(messages[k:], 2000), prompt) for k in range(16)]
    limit = sizes[5] + 1  # fits once the five oldest messages are left out
    assert sizes[4] > limit
    result = run(messages, pol, MockSummarizer(context_limit_tokens=limit))
    assert result.compacted
    assert result.dropped_head_messages == 5
    assert result.dropped_head_ids == ["m0", "m1", "m2", "m3", "m4"]
    assert result.head_ids == [m.id for m in messages]  # still replaced by the summary
    assert "5 oldest head messages were left out" in result.reason
    assert "request 0" not in result.request_messages[1].content
    assert "request 3 " in result.request_messages[1].content  # m6 is request 3


def test_head_drop_gives_up_after_the_limit() -> None:
    messages, pol = overflow_case()
    pol.compaction.max_head_drops = 2
    with pytest.raises(CompactionError, match="even after leaving out the 2 oldest") as info:
        run(messages, pol, MockSummarizer(context_limit_tokens=300))
    assert info.value.dropped_head_messages == 2
    assert info.value.too_large  # every size allowed was tried: a longer head fails too


def test_head_drop_gives_up_when_one_message_is_left() -> None:
    messages, pol = overflow_case()
    with pytest.raises(CompactionError, match="too large") as info:
        run(messages, pol, MockSummarizer(context_limit_tokens=10))
    assert info.value.dropped_head_messages == len(messages) - 1
    assert not info.value.too_large  # it ran out of messages: a longer head may fit


def test_a_head_that_is_everything_because_the_tail_would_be_says_so() -> None:
    """Turns mode keeps no tail when the tail would be the whole conversation: the head is
    everything now, but a longer conversation may keep a tail and have a shorter head."""
    messages = (
        SessionBuilder()
        .user("go")
        .tool("read", text_of_tokens(300))
        .tool("read", text_of_tokens(300))
        .messages
    )
    turns = Policy(
        pruning=PruningPolicy(enabled=False),
        split=SplitPolicy(mode="turns", tail_turns=1, tail_budget_tokens=2_000),
    )
    result = run(messages, turns)
    assert result.split is not None and result.split.whole_tail
    assert result.head_ids == [m.id for m in messages]
    with pytest.raises(CompactionError) as info:
        run(messages, turns, MockSummarizer(context_limit_tokens=10))
    assert info.value.head_may_shrink
    # Messages mode keeps its cut as the conversation grows: the head never shrinks.
    messages_mode = Policy(
        pruning=PruningPolicy(enabled=False), split=SplitPolicy(tail_budget_tokens=100)
    )
    assert not run(messages, messages_mode).split.whole_tail  # type: ignore[union-attr]
    with pytest.raises(CompactionError) as info:
        run(messages, messages_mode, MockSummarizer(context_limit_tokens=10))
    assert not info.value.head_may_shrink


class OverflowsFirst:
    """Records every request; the first ``overflows`` of them do not fit its context."""

    name = "overflows-first"

    def __init__(self, overflows: int) -> None:
        self.overflows = overflows
        self.requests: list[list[ChatMessage]] = []

    async def summarize(
        self, messages: Sequence[ChatMessage], *args: object, **kwargs: object
    ) -> SummaryResult:
        self.requests.append(list(messages))
        if len(self.requests) <= self.overflows:
            raise ContextOverflowError("too long")
        return SummaryResult(text="## Goal\n- done", usage=LLMUsage(), model="fixed")


@pytest.mark.parametrize("cache", [False, True])
def test_each_request_after_a_drop_is_the_shorter_heads_own(cache: bool) -> None:
    """The head is serialised once per compaction; each shorter request must still be exactly
    what the shorter head gives, also for a result that names no tool and loses the call it was
    labelled from."""
    convo = SessionBuilder().user("look").call("grep", {"pattern": "x"})
    nameless = convo.result("hit 1").messages[-1]
    assert nameless.tool_result is not None
    convo.messages[-1] = replace(
        nameless, tool_result=replace(nameless.tool_result, tool_name=None)
    )
    convo.tool("read", "file text", {"path": "a.py"}).reply("done")
    messages = convo.messages
    summarizer = OverflowsFirst(overflows=3)
    result = run(
        messages,
        policy(strategy="summary-only"),
        summarizer,
        entry_cache=EntryCache() if cache else None,
    )
    assert result.dropped_head_messages == 3
    expected = [build_request(messages[k:], 2_000) for k in range(4)]
    assert summarizer.requests == expected
    # After the call at m1 is left out, the result at m2 is no longer labelled by it.
    assert "[Tool result]: grep" in expected[1][1].content
    assert "[Tool result]: tool" in expected[2][1].content


# --- failures never yield a partial summary ---------------------------------------------------


class FailingMidStream:
    """Streams half a summary, then fails."""

    name = "failing"

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        if on_delta is not None:
            on_delta("## Goal\n- half of it")
        raise self.error


class Fixed:
    name = "fixed"

    def __init__(self, text: str) -> None:
        self.text = text

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        return SummaryResult(text=self.text, usage=LLMUsage(), model="fixed")


@pytest.mark.parametrize(
    ("error", "match"),
    [
        (ServerError("HTTP 503 from the endpoint"), "summary request failed: HTTP 503"),
        (ConnectionResetError("stream dropped"), "failed part-way .*no summary was kept"),
    ],
)
def test_a_failure_mid_stream_is_an_error(error: Exception, match: str) -> None:
    seen: list[str] = []
    with pytest.raises(CompactionError, match=match):
        run(session(), summarizer=FailingMidStream(error), on_delta=seen.append)
    assert seen == ["## Goal\n- half of it"]


def test_an_empty_summary_is_an_error() -> None:
    with pytest.raises(CompactionError, match="empty summary"):
        run(session(), summarizer=Fixed("  \n"))


def test_streaming_reaches_the_callback() -> None:
    pieces: list[str] = []
    result = run(session(), on_delta=pieces.append)
    assert "".join(pieces).strip() == result.summary


def test_cancellation_propagates() -> None:
    asked = asyncio.Event()

    class Slow:
        name = "slow"

        async def summarize(self, *args: object, **kwargs: object) -> SummaryResult:
            asked.set()
            await asyncio.Event().wait()  # never answers
            raise AssertionError("not reached")

    async def scenario() -> None:
        task = asyncio.create_task(
            compact(session(), policy(), Slow(), window=WINDOW, counter=COUNTER)
        )
        await asyncio.wait_for(asked.wait(), 60)  # cancelled while it waits for the summary
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


# --- strategies -------------------------------------------------------------------------------


def test_summary_only_replaces_everything() -> None:
    messages = session()
    result = run(messages, policy(strategy="summary-only"))
    assert result.head_ids == [m.id for m in messages]
    assert result.tail_ids == []
    assert result.split is None
    assert len(result.output_messages) == 2
    assert_summary_message(result.output_messages[0], result.summary)
    assert result.output_messages[1].synthetic


def test_codex_keeps_recent_user_messages_then_the_summary() -> None:
    messages = (
        SessionBuilder()
        .user("oldest " + text_of_tokens(300))
        .tool("bash", text_of_tokens(100), {"command": "ls"})
        .user("middle " + text_of_tokens(100))
        .reply("sure")
        .user("newest " + text_of_tokens(50))
        .messages
    )
    pol = get_preset("codex")
    pol.compaction.user_message_budget_tokens = 200
    result = compact_sync(messages, pol, MockSummarizer(), window=WINDOW, counter=COUNTER)
    out = result.output_messages
    assert [m.id for m in out[:-1]] == ["m0", "m3", "m5"]
    assert out[1].text == messages[3].text
    assert out[2].text == messages[5].text
    # the oldest did not fit the 200 - 52 - 102 = 46 tokens left: cut in the middle
    assert out[0].text.startswith("oldest ")
    assert "tokens truncated…" in out[0].text
    assert COUNTER.count(out[0].text) < COUNTER.count(messages[0].text)
    assert_summary_message(out[-1], result.summary)
    assert not any(m.role in (Role.TOOL, Role.ASSISTANT) for m in out)
    assert result.tail_ids == ["m0", "m3", "m5"]


# --- properties -------------------------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    convo = SessionBuilder()
    if draw(st.booleans()):
        convo.system(
            "You are a coding agent. " + text_of_tokens(draw(st.integers(0, 500))), meta=True
        )
    if draw(st.booleans()):
        convo.system(
            "<prior-conversation-summary>\n## Goal\n- old\n</prior-conversation-summary>",
            summary=True,
        )
    for kind in draw(st.lists(st.sampled_from(["user", "assistant", "tool", "tool"]), max_size=25)):
        size = draw(st.integers(0, 1500))
        if kind == "user":
            convo.user(f"ask {text_of_tokens(size // 10)}")
        elif kind == "assistant":
            convo.reply(f"say {text_of_tokens(size // 10)}")
        else:
            convo.tool(
                draw(st.sampled_from(["read", "bash", "skill"])),
                text_of_tokens(size),
                {"path": "p"},
            )
    return convo.messages


@settings(max_examples=120, deadline=None)
@given(
    messages=conversations(),
    strategy=st.sampled_from(["tail", "summary-only"]),
    mode=st.sampled_from(["messages", "turns"]),
    auto=st.booleans(),
    prune_on=st.booleans(),
    tail_budget=st.integers(0, 3000),
)
def test_output_shape_invariant(
    messages: list[Message], strategy: str, mode: str, auto: bool, prune_on: bool, tail_budget: int
) -> None:
    pol = Policy(
        pruning=PruningPolicy(enabled=prune_on, protect_turns=1),
        split=SplitPolicy(mode=mode, tail_budget_tokens=tail_budget),
        compaction=CompactionPolicy(strategy=strategy),
    )
    result = run(messages, pol, auto=auto, window=12_000)
    ids = [m.id for m in messages]
    if not result.compacted:
        assert [m.id for m in result.output_messages] == ids
        return
    assert result.pinned_ids + result.head_ids + result.tail_ids == ids
    out = result.output_messages
    pinned = len(result.pinned_ids)
    assert [m.id for m in out[:pinned]] == result.pinned_ids
    assert all(m.role is Role.SYSTEM and not m.summary for m in out[:pinned])
    assert_summary_message(out[pinned], result.summary)
    expected_tail = out[pinned + 1 : -1] if auto else out[pinned + 1 :]
    assert [m.id for m in expected_tail] == result.tail_ids
    assert out[-1].synthetic == auto
    assert result.tokens_after == sum(COUNTER.messages_tokens(out))
    # no orphaned tool result in what the model sees next
    calls = {c.id for m in out for c in m.tool_calls}
    for message in out:
        if message.tool_result is not None:
            assert message.tool_result.call_id in calls


def test_mock_compaction_is_deterministic() -> None:
    first = run(session(), now_ms=1)
    second = run(session(), now_ms=1)
    assert first.summary == second.summary
    assert [to_record(m) for m in first.output_messages] == [
        to_record(m) for m in second.output_messages
    ]


def test_compact_sync_runs_in_a_worker_thread() -> None:
    import threading

    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(run(session())))
    worker.start()
    worker.join()
    assert len(results) == 1
    assert getattr(results[0], "compacted", False)


def with_context(prefix: SessionBuilder) -> list[Message]:
    """``prefix`` followed by the messages of :func:`session`, renumbered."""
    for message in session():
        index = len(prefix.messages)
        prefix.messages.append(replace(message, index=index, id=f"m{index}"))
    return prefix.messages


def test_leading_system_context_is_pinned_not_summarised() -> None:
    messages = with_context(
        SessionBuilder()
        .system("You are a coding agent. " + text_of_tokens(400), meta=True)
        .user("<environment_context>cwd=/repo</environment_context>", meta=True)
        .system(
            "<prior-conversation-summary>\n## Goal\n- old goal\n</prior-conversation-summary>",
            summary=True,
        )
    )
    result = run(messages, policy(strategy="summary-only"))
    assert result.pinned_ids == ["m0", "m1"]
    out = result.output_messages
    assert out[0] is messages[0]
    assert out[1] is messages[1]
    assert_summary_message(out[2], result.summary)
    assert result.head_ids[0] == "m2"  # the old summary is replaced by the new one
    assert result.updated_previous_summary
    assert split_sections(result.summary)["Goal"].startswith("- old goal")
    transcript = result.request_messages[1].content
    assert "You are a coding agent" not in transcript
    assert "environment_context" not in transcript
    assert result.tokens_after == sum(COUNTER.messages_tokens(out))


def test_only_system_context_is_nothing_to_compact() -> None:
    messages = SessionBuilder().system("You are a coding agent.", meta=True).user("hi").messages
    tail_policy = Policy(
        pruning=PruningPolicy(enabled=False),
        split=SplitPolicy(tail_budget_tokens=1, min_tail_messages=1),
    )
    assert not run(messages, tail_policy).compacted
    only_context = SessionBuilder().system("prompt", meta=True).system("old", summary=True).messages
    assert not run(only_context, policy(strategy="summary-only")).compacted


# --- caches used by the replay engine: a hit must give exactly what a miss gives ----------------


def test_entry_cache_gives_the_same_request() -> None:
    messages = session()
    pruned = compact_sync(
        messages, Policy(), MockSummarizer(), window=WINDOW, counter=COUNTER, now_ms=1
    )
    assert pruned.prune is not None and pruned.prune.pruned_ids
    cache = EntryCache()
    for head in (messages, pruned.prune.messages, messages[3:], pruned.prune.messages):
        plain = build_request(head, 100)
        cached = build_request(head, 100, cache=cache)
        assert cached == plain
        assert build_request(head, 100, cache=cache) == plain  # now from the cache
    assert len(cache) > 0
    # The cap is part of the key: another cap is another entry.
    assert build_request(messages, 40, cache=cache) == build_request(messages, 40)


def test_entry_cache_stays_within_its_bound() -> None:
    cache = EntryCache(max_chars=3_000)
    messages = session()
    assert build_request(messages, 2_000, cache=cache) == build_request(messages, 2_000)
    assert cache._weight <= 3_000
    assert len(cache) < sum(1 for m in messages if m.role in (Role.ASSISTANT, Role.TOOL))


def test_compaction_with_an_entry_cache_is_the_same_compaction() -> None:
    cache = EntryCache()
    pol = Policy()  # pruning on: pruned copies are new objects each time
    for _ in range(2):
        with_cache = compact_sync(
            session(),
            pol,
            MockSummarizer(),
            window=WINDOW,
            counter=COUNTER,
            now_ms=7,
            entry_cache=cache,
        )
        plain = compact_sync(
            session(), pol, MockSummarizer(), window=WINDOW, counter=COUNTER, now_ms=7
        )
        assert with_cache.model_dump(exclude={"duration_s"}) == plain.model_dump(
            exclude={"duration_s"}
        )


def test_transcripts_give_back_their_entries() -> None:
    from core.llm.summary_templates import build_transcript, transcript_entries

    entries = ["[User]: one", "[Assistant]: two\n\n[User]: inline"]
    text = build_transcript(entries)
    assert (
        text == "<conversation>\n[User]: one\n\n[Assistant]: two\n\n[User]: inline\n</conversation>"
    )
    assert transcript_entries(text) == tuple(entries)
    assert transcript_entries(str(text[:-1]) + ">") is None  # an equal text, not the one built
    for _ in range(8):  # only the last few are remembered
        build_transcript(["[User]: x"])
    assert transcript_entries(text) is None


@st.composite
def tool_texts(draw: st.DrawFn) -> list[Message]:
    """Conversations whose tool messages may also carry text (their pruned copies then have
    more than the placeholder to count)."""
    messages = draw(conversations())
    return [
        replace(m, text="note") if m.tool_result is not None and draw(st.booleans()) else m
        for m in messages
    ]


@settings(max_examples=150, deadline=None)
@given(
    messages=st.one_of(conversations(), tool_texts()),
    strategy=st.sampled_from(["tail", "summary-only", "codex"]),
    mode=st.sampled_from(["messages", "turns"]),
    auto=st.booleans(),
    prune_on=st.booleans(),
    budget_rule=st.booleans(),
    tail_budget=st.integers(0, 3000),
    limit=st.sampled_from([None, 400, 3000]),
)
def test_outline_is_the_compaction_in_short(
    messages: list[Message],
    strategy: str,
    mode: str,
    auto: bool,
    prune_on: bool,
    budget_rule: bool,
    tail_budget: int,
    limit: int | None,
) -> None:
    # The replay engine runs compact_outline; every value it keeps must be what compact gives.
    from core.algorithms.compact import CompactionOutline, compact_outline

    pol = Policy(
        pruning=PruningPolicy(
            enabled=prune_on,
            protect_turns=1,
            budget_rule=budget_rule,
            protect_tokens=500,
            minimum_tokens=100,
        ),
        split=SplitPolicy(mode=mode, tail_budget_tokens=tail_budget),
        compaction=CompactionPolicy(strategy=strategy, max_head_drops=3),
    )

    def full() -> CompactionResult | str:
        try:
            return run(
                messages,
                pol,
                MockSummarizer(context_limit_tokens=limit),
                auto=auto,
                window=12_000,
                now_ms=5,
            )
        except CompactionError as exc:
            return str(exc)

    def short(cache: EntryCache | None) -> CompactionOutline | str:
        try:
            return asyncio.run(
                compact_outline(
                    messages,
                    pol,
                    MockSummarizer(context_limit_tokens=limit),
                    window=12_000,
                    counter=COUNTER,
                    auto=auto,
                    now_ms=5,
                    entry_cache=cache,
                )
            )
        except CompactionError as exc:
            return str(exc)

    result = full()
    cache = EntryCache()
    for outline in (short(None), short(cache), short(cache)):
        if isinstance(result, str):
            assert outline == result
            continue
        assert not isinstance(outline, str)
        assert outline.compacted == result.compacted
        assert outline.reason == result.reason
        assert outline.summary == result.summary
        assert outline.head_ids == result.head_ids
        assert outline.pruned_ids == result.pruned_ids
        assert outline.dropped_head_messages == result.dropped_head_messages
        assert [to_record(m) for m in outline.output_messages] == [
            to_record(m) for m in result.output_messages
        ]
        prune = result.prune
        expected = [d.reason.value for d in prune.decisions] if prune is not None else []
        assert outline.prune_reasons == expected
