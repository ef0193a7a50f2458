"""T8 head/tail split: the seed's walk, turn mode with split turns, safe tool-call boundaries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.split import split
from core.model.session import Message, Role
from core.model.tokens import get_counter
from core.policy import SplitPolicy
from tests.support.builders import SessionBuilder

COUNTER = get_counter("chars/4")


def plain(n: int) -> list[Message]:
    """``n`` alternating user/assistant messages."""
    convo = SessionBuilder()
    for i in range(n):
        if i % 2 == 0:
            convo.user(f"u{i}")
        else:
            convo.reply(f"a{i}")
    return convo.messages


def messages_policy(budget: int, min_messages: int = 2) -> SplitPolicy:
    return SplitPolicy(mode="messages", tail_budget_tokens=budget, min_tail_messages=min_messages)


def test_messages_mode_stops_once_the_budget_is_reached() -> None:
    messages = plain(10)
    result = split(
        messages, messages_policy(250), usable_tokens=0, counter=COUNTER, token_counts=[100] * 10
    )
    assert result.cut_index == 7
    assert result.head_indices == list(range(7))
    assert result.head_ids == [f"m{i}" for i in range(7)]
    assert result.tail_ids == ["m7", "m8", "m9"]
    assert result.tail_tokens == 300
    assert result.head_tokens == 700
    assert result.budget_tokens == 250
    assert result.compactable
    assert "reaches the 250-token budget" in result.reason


def test_messages_mode_keeps_the_minimum_number_of_messages() -> None:
    counts = [10, 10, 10, 500]
    result = split(
        plain(4), messages_policy(100, 3), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert result.tail_ids == ["m1", "m2", "m3"]


def test_nothing_to_compact_when_all_fits() -> None:
    result = split(
        plain(4), messages_policy(1000), usable_tokens=0, counter=COUNTER, token_counts=[10] * 4
    )
    assert result.cut_index == 0
    assert result.head_ids == []
    assert not result.compactable
    assert "nothing to compact" in result.reason


def test_a_head_of_only_an_earlier_summary_is_not_compactable() -> None:
    messages = SessionBuilder().system("old", summary=True).user("a").reply("b").messages
    result = split(
        messages, messages_policy(20), usable_tokens=0, counter=COUNTER, token_counts=[5, 10, 10]
    )
    assert result.head_ids == ["m0"]
    assert not result.compactable


@pytest.mark.parametrize(
    ("usable", "budget"),
    [(0, 2000), (4000, 2000), (8000, 2000), (20000, 5000), (32000, 8000), (1_000_000, 8000)],
)
def test_tail_budget_is_clamped(usable: int, budget: int) -> None:
    result = split(plain(2), SplitPolicy(), usable_tokens=usable, counter=COUNTER)
    assert result.budget_tokens == budget
    assert result.usable_tokens == usable


def test_counts_with_the_counter_when_no_counts_are_given() -> None:
    messages = SessionBuilder().user("x" * 400).reply("y" * 400).user("z" * 400).messages
    result = split(messages, messages_policy(150), usable_tokens=0, counter=COUNTER)
    assert result.tail_tokens == 200
    assert result.tail_ids == ["m1", "m2"]


def test_token_counts_must_match_the_messages() -> None:
    with pytest.raises(ValueError, match="3 entries for 2 messages"):
        split(plain(2), SplitPolicy(), usable_tokens=0, counter=COUNTER, token_counts=[1, 2, 3])


# --- safe boundaries ----------------------------------------------------------------------------


def test_tail_never_starts_with_a_result_whose_call_is_in_the_head() -> None:
    messages = (
        SessionBuilder().user("go").call("read", {"path": "a"}).result("big").reply("ok").messages
    )
    counts = [10, 10, 300, 10]
    result = split(
        messages, messages_policy(300), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    # the walk stops at the result (#2); the cut moves to its call (#1)
    assert result.cut_index == 1
    assert result.moved_for_tool_pair == 1
    assert "moved 1 message earlier" in result.reason


def test_parallel_calls_stay_with_all_their_results() -> None:
    messages = (
        SessionBuilder()
        .user("go")
        .calls([("read", {"path": "a"}), ("read", {"path": "b"}), ("bash", {"command": "ls"})])
        .result("a")
        .result("b")
        .result("c")
        .reply("done")
        .messages
    )
    counts = [10, 10, 10, 10, 200, 10]
    result = split(
        messages, messages_policy(200), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert result.cut_index == 1
    assert result.tail_ids == ["m1", "m2", "m3", "m4", "m5"]
    assert result.moved_for_tool_pair == 3


def test_moving_the_cut_can_reach_the_start() -> None:
    messages = SessionBuilder().call("read").result("x").messages
    result = split(
        messages, messages_policy(5, 1), usable_tokens=0, counter=COUNTER, token_counts=[1, 10]
    )
    assert result.cut_index == 0
    assert not result.compactable


# --- turns mode ---------------------------------------------------------------------------------


def turns_convo() -> list[Message]:
    """Three turns: #0-#3, #4-#8, #9-#10."""
    return (
        SessionBuilder()
        .user("first")  # 0
        .tool("read", "a", {"path": "a"})  # 1, 2
        .reply("ok")  # 3
        .user("second")  # 4
        .tool("read", "b", {"path": "b"})  # 5, 6
        .tool("bash", "c", {"command": "make"})  # 7, 8
        .user("third")  # 9
        .reply("done")  # 10
        .messages
    )


def turns_policy(budget: int, tail_turns: int = 2) -> SplitPolicy:
    return SplitPolicy(mode="turns", tail_budget_tokens=budget, tail_turns=tail_turns)


def test_turns_mode_keeps_whole_turns_within_budget() -> None:
    counts = [10] * 11
    result = split(
        turns_convo(), turns_policy(100), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert result.cut_index == 4
    assert not result.split_turn
    assert result.tail_tokens == 70
    assert "last 2 whole turns" in result.reason


def test_turns_mode_splits_the_turn_that_does_not_fit() -> None:
    counts = [10, 10, 10, 10, 10, 10, 50, 10, 10, 10, 10]
    # last turn: 20; second turn #4-#8: 90 > 60 left; its suffixes: #5.. 80, #6.. 70, #7.. 20
    result = split(
        turns_convo(), turns_policy(80), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert result.split_turn
    assert result.cut_index == 7
    assert result.tail_ids == ["m7", "m8", "m9", "m10"]
    assert result.tail_tokens <= 80
    assert "split" in result.reason


def test_split_turn_suffix_never_starts_at_an_orphaned_result() -> None:
    counts = [10, 10, 10, 10, 10, 10, 50, 20, 45, 10, 10]
    # suffix from #8 (the bash result) fits 60 but its call is #7; from #7 it is 65: no fit
    result = split(
        turns_convo(), turns_policy(80), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert not result.split_turn
    assert result.cut_index == 9
    assert result.tail_ids == ["m9", "m10"]


def test_turns_mode_summarises_everything_when_nothing_fits() -> None:
    counts = [10] * 9 + [500, 500]
    result = split(
        turns_convo(), turns_policy(100), usable_tokens=0, counter=COUNTER, token_counts=counts
    )
    assert result.cut_index == 11
    assert result.tail_ids == []
    assert result.compactable
    assert "everything is summarised" in result.reason


def test_turns_mode_summarises_everything_when_the_tail_would_be_everything() -> None:
    result = split(
        turns_convo(),
        turns_policy(10_000, tail_turns=5),
        usable_tokens=0,
        counter=COUNTER,
        token_counts=[10] * 11,
    )
    assert result.cut_index == 11
    assert result.compactable


def test_turns_mode_with_zero_tail_turns_keeps_no_tail() -> None:
    result = split(
        turns_convo(), turns_policy(1000, tail_turns=0), usable_tokens=0, counter=COUNTER
    )
    assert result.tail_ids == []


# --- properties -------------------------------------------------------------------------------

KINDS = ["user"] * 3 + ["assistant"] * 2 + ["tools"] * 5 + ["synthetic"]


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Message], list[int]]:
    convo = SessionBuilder()
    for kind in draw(st.lists(st.sampled_from(KINDS), max_size=30)):
        if kind == "user":
            convo.user()
        elif kind == "assistant":
            convo.reply()
        elif kind == "synthetic":
            convo.user("continue", synthetic=True)
        else:
            n = draw(st.integers(1, 3))
            convo.calls([("read", {"path": f"f{i}"}) for i in range(n)])
            for _ in range(n):
                convo.result()
    counts = draw(
        st.lists(st.integers(0, 80), min_size=len(convo.messages), max_size=len(convo.messages))
    )
    return convo.messages, counts


SPLIT_POLICIES = st.builds(
    SplitPolicy,
    mode=st.sampled_from(["messages", "turns"]),
    tail_budget_tokens=st.integers(0, 400),
    min_tail_messages=st.integers(1, 4),
    tail_turns=st.integers(0, 3),
)


@settings(max_examples=400, deadline=None)
@given(convo=conversations(), policy=SPLIT_POLICIES)
def test_split_invariants(convo: tuple[list[Message], list[int]], policy: SplitPolicy) -> None:
    messages, counts = convo
    result = split(messages, policy, usable_tokens=0, counter=COUNTER, token_counts=counts)
    ids = [m.id for m in messages]
    # head + tail is exactly the input sequence
    assert result.head_ids + result.tail_ids == ids
    assert result.head_indices == list(range(result.cut_index))
    assert result.head_tokens + result.tail_tokens == sum(counts)
    assert result.tail_tokens == sum(counts[result.cut_index :])
    # no tool result in the tail without its call
    head_calls = {c.id for m in messages[: result.cut_index] for c in m.tool_calls}
    for message in messages[result.cut_index :]:
        if message.role is Role.TOOL:
            assert message.tool_result is not None
            assert message.tool_result.call_id not in head_calls
    if policy.mode == "messages" and result.cut_index > 0 and not result.moved_for_tool_pair:
        assert result.tail_tokens >= result.budget_tokens
        assert len(result.tail_ids) >= policy.min_tail_messages
    if policy.mode == "turns" and result.tail_ids and not result.moved_for_tool_pair:
        assert result.tail_tokens <= result.budget_tokens
        first_tail = messages[result.cut_index]
        assert first_tail.is_turn_start or result.split_turn


def test_a_head_of_only_system_context_is_not_compactable() -> None:
    messages = (
        SessionBuilder()
        .system("You are an agent", meta=True)
        .user("env", meta=True)
        .user("a")
        .messages
    )
    result = split(
        messages, messages_policy(10), usable_tokens=0, counter=COUNTER, token_counts=[50, 50, 10]
    )
    assert result.head_ids == ["m0"]
    assert not result.compactable
    assert "system context" in result.reason
    turns = split(
        messages, turns_policy(1000), usable_tokens=0, counter=COUNTER, token_counts=[50, 50, 10]
    )
    assert turns.tail_ids == []  # opencode: a tail of the whole conversation means no tail
    assert turns.compactable
