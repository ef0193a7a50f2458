"""T9 pruning: the skip boundary, protected tools, opencode's budget rule, and purity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.prune import PruneReason, prune, skip_boundary
from core.model.session import Message, Role, ToolResult, replace, to_record
from core.model.tokens import get_counter
from core.policy import PruningPolicy
from tests.support.builders import SessionBuilder, text_of_tokens

COUNTER = get_counter("chars/4")
NOW = 1_700_000_000_000


def seed_example() -> list[Message]:
    """The ten-message example of the T9 seed: user turns at 0, 3 and 8."""
    return (
        SessionBuilder()
        .user("start")  # 0
        .call("read_file", {"path": "a.py"})  # 1
        .result(text_of_tokens(500))  # 2
        .user("next")  # 3
        .call("skill", {"name": "build-report"})  # 4
        .result("SKILL.md instructions")  # 5
        .call("edit_file", {"path": "a.py"})  # 6
        .result("edited")  # 7
        .user("last")  # 8
        .reply("done")  # 9
        .messages
    )


def test_seed_example() -> None:
    result = prune(seed_example(), PruningPolicy(), counter=COUNTER, now_ms=NOW)
    assert result.skip_boundary == 3
    reasons = [d.reason for d in result.decisions]
    assert reasons[2] is PruneReason.PRUNED
    assert all(r is PruneReason.NOT_TOOL_OUTPUT for r in reasons[:2])
    assert reasons[5] is PruneReason.INSIDE_SKIP_BOUNDARY
    assert reasons[7] is PruneReason.INSIDE_SKIP_BOUNDARY
    assert result.pruned_ids == ["m2"]
    pruned = result.messages[2].tool_result
    assert pruned is not None
    assert pruned.output == "<tool-output-compacted />"
    assert pruned.compacted_at_ms == NOW
    assert result.compacted_at_ms == NOW
    assert result.tokens_before == 500
    assert result.tokens_freed == 500 - COUNTER.count("<tool-output-compacted />")


def test_fewer_user_turns_than_protected_prunes_nothing() -> None:
    messages = (
        SessionBuilder()
        .user()
        .tool("read", text_of_tokens(900))
        .tool("bash", text_of_tokens(900))
        .messages
    )
    result = prune(messages, PruningPolicy(), counter=COUNTER)
    assert result.skip_boundary == 0
    assert result.pruned_ids == []
    assert result.messages == messages
    tool_reasons = {d.reason for d in result.decisions if d.tool_name}
    assert tool_reasons == {PruneReason.INSIDE_SKIP_BOUNDARY}
    assert "fewer than 2 user turns" in result.summary


def test_protect_turns_is_an_option() -> None:
    messages = seed_example()
    assert skip_boundary(messages, 1) == 8
    assert skip_boundary(messages, 3) == 0
    assert skip_boundary(messages, 4) == 0
    assert skip_boundary(messages, 0) == len(messages)
    everything = prune(messages, PruningPolicy(protect_turns=0), counter=COUNTER)
    assert everything.pruned_ids == ["m2", "m7"]  # skill stays protected
    assert everything.decisions[5].reason is PruneReason.PROTECTED_TOOL


def test_synthetic_and_summary_user_messages_are_not_turns() -> None:
    messages = (
        SessionBuilder()
        .user("real")
        .tool("read", text_of_tokens(50))
        .user("continue", synthetic=True)
        .tool("read", text_of_tokens(50))
        .user("meta", meta=True)
        .messages
    )
    assert skip_boundary(messages, 2) == 0  # one real turn only
    assert prune(messages, PruningPolicy(), counter=COUNTER).pruned_ids == []


def test_protected_tool_name_comes_from_the_call_when_the_result_lacks_it() -> None:
    convo = SessionBuilder().user().call("skill").result("instructions").user().user()
    message = convo.messages[2]
    assert message.tool_result is not None
    convo.messages[2] = replace(message, tool_result=replace(message.tool_result, tool_name=None))
    result = prune(convo.messages, PruningPolicy(), counter=COUNTER)
    assert result.decisions[2].reason is PruneReason.PROTECTED_TOOL
    assert result.decisions[2].tool_name == "skill"


def test_placeholder_and_protected_tools_are_configurable() -> None:
    policy = PruningPolicy(
        placeholder="[Old tool result content cleared]", protected_tools=["read_file"]
    )
    result = prune(seed_example(), policy, counter=COUNTER)
    assert result.pruned_ids == []
    assert result.decisions[2].reason is PruneReason.PROTECTED_TOOL
    result = prune(
        seed_example(), policy.model_copy(update={"protected_tools": []}), counter=COUNTER
    )
    assert result.messages[2].tool_result is not None
    assert result.messages[2].tool_result.output == "[Old tool result content cleared]"


def test_input_is_never_mutated() -> None:
    messages = seed_example()
    before = [to_record(m) for m in messages]
    original_result = messages[2].tool_result
    result = prune(messages, PruningPolicy(), counter=COUNTER, now_ms=NOW)
    assert [to_record(m) for m in messages] == before
    assert original_result is not None
    assert original_result.output == text_of_tokens(500)
    assert original_result.compacted_at_ms is None
    assert result.messages[2] is not messages[2]
    assert result.messages[3] is messages[3]  # untouched messages are shared, not copied


def test_disabled_policy_returns_the_input() -> None:
    messages = seed_example()
    result = prune(messages, PruningPolicy(enabled=False), counter=COUNTER)
    assert result.messages == messages
    assert {d.reason for d in result.decisions} == {PruneReason.DISABLED}


def test_walk_stops_at_an_earlier_summary() -> None:
    messages = (
        SessionBuilder()
        .user()
        .tool("read", text_of_tokens(100))  # 1, 2: before the summary
        .system("<prior-conversation-summary>\nold\n</prior-conversation-summary>", summary=True)
        .tool("read", text_of_tokens(100))  # 4, 5
        .user()
        .user()
        .messages
    )
    result = prune(messages, PruningPolicy(), counter=COUNTER)
    assert result.decisions[2].reason is PruneReason.BEFORE_SUMMARY
    assert result.pruned_ids == ["m5"]


# --- opencode's budget rule ----------------------------------------------------------------------


def budget_convo(sizes: list[int]) -> list[Message]:
    """Tool outputs of the given sizes (oldest first), then two protected user turns."""
    convo = SessionBuilder().user("task")
    for size in sizes:
        convo.tool("read", text_of_tokens(size), {"path": "f.py"})
    return convo.user("two").reply().user("three").messages


def budget(protect: int, minimum: int) -> PruningPolicy:
    return PruningPolicy(budget_rule=True, protect_tokens=protect, minimum_tokens=minimum)


def test_budget_protects_the_newest_outputs_and_prunes_the_rest() -> None:
    # outputs oldest -> newest: 30, 30, 40, 40; newest-first totals: 40, 80, 110, 140
    messages = budget_convo([30, 30, 40, 40])
    result = prune(messages, budget(protect=100, minimum=50), counter=COUNTER)
    by_id = {d.id: d.reason for d in result.decisions}
    assert by_id["m8"] is PruneReason.INSIDE_PROTECT_BUDGET
    assert by_id["m6"] is PruneReason.INSIDE_PROTECT_BUDGET
    # the output that crosses the protect line is pruned (opencode: total > PRUNE_PROTECT)
    assert result.pruned_ids == ["m2", "m4"]
    assert result.tokens_before == 60


def test_budget_below_minimum_prunes_nothing() -> None:
    messages = budget_convo([30, 30, 40, 40])
    result = prune(messages, budget(protect=100, minimum=61), counter=COUNTER)
    assert result.pruned_ids == []
    assert result.messages == messages
    reasons = {d.id: d.reason for d in result.decisions}
    assert reasons["m2"] is PruneReason.BELOW_MINIMUM
    assert reasons["m4"] is PruneReason.BELOW_MINIMUM
    assert "fewer than 61 tokens" in result.summary


def test_budget_minimum_is_inclusive() -> None:
    result = prune(budget_convo([30, 30, 40, 40]), budget(protect=100, minimum=60), counter=COUNTER)
    assert result.pruned_ids == ["m2", "m4"]


def test_budget_walk_stops_at_an_already_pruned_output() -> None:
    messages = budget_convo([50, 50, 50, 50, 50])
    old = messages[6]
    assert old.tool_result is not None
    messages[6] = replace(old, tool_result=replace(old.tool_result, compacted_at_ms=1))
    result = prune(messages, budget(protect=0, minimum=0), counter=COUNTER)
    reasons = {d.id: d.reason for d in result.decisions}
    assert reasons["m6"] is PruneReason.ALREADY_PRUNED
    assert reasons["m2"] is PruneReason.BEFORE_PRUNED
    assert reasons["m4"] is PruneReason.BEFORE_PRUNED
    assert result.pruned_ids == ["m8", "m10"]
    # without the budget rule an already-pruned output is skipped and the walk goes on
    seed = prune(messages, PruningPolicy(), counter=COUNTER)
    assert seed.pruned_ids == ["m2", "m4", "m8", "m10"]


# --- properties -------------------------------------------------------------------------------

# Weighted so that most examples hold several turns and tool outputs; summaries are rare.
KINDS = ["user"] * 6 + ["assistant"] * 3 + ["tool"] * 12 + ["synthetic"] + ["summary"]
STEP = st.tuples(
    st.sampled_from(KINDS), st.sampled_from(["read", "bash", "skill", "grep"]), st.integers(0, 60)
)


def build(steps: list[tuple[str, str, int]], pruned_every: int) -> list[Message]:
    convo = SessionBuilder()
    for n, (kind, name, size) in enumerate(steps):
        if kind == "user":
            convo.user(f"request {n}")
        elif kind == "assistant":
            convo.reply(f"reply {n}")
        elif kind == "summary":
            convo.system(
                "<prior-conversation-summary>\ns\n</prior-conversation-summary>", summary=True
            )
        elif kind == "synthetic":
            convo.user("continue", synthetic=True)
        else:
            convo.call(name, {"path": f"f{n}"})
            pruned = bool(pruned_every) and n % pruned_every == 0
            convo.result(text_of_tokens(size), compacted_at_ms=5 if pruned else None)
    return convo.messages


POLICIES = st.builds(
    PruningPolicy,
    protect_turns=st.integers(0, 3),
    budget_rule=st.booleans(),
    protect_tokens=st.integers(0, 150),
    minimum_tokens=st.integers(0, 150),
    protected_tools=st.sampled_from([["skill"], ["skill", "grep"], []]),
)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(STEP, max_size=40), policy=POLICIES, pruned_every=st.integers(0, 12))
def test_pruning_invariants(
    steps: list[tuple[str, str, int]], policy: PruningPolicy, pruned_every: int
) -> None:
    messages = build(steps, pruned_every)
    snapshot = [to_record(m) for m in messages]
    result = prune(messages, policy, counter=COUNTER, now_ms=NOW)

    assert [to_record(m) for m in messages] == snapshot  # input untouched
    assert [d.id for d in result.decisions] == [m.id for m in messages]
    assert [m.id for m in result.messages] == [m.id for m in messages]
    boundary = skip_boundary(messages, policy.protect_turns)
    assert result.skip_boundary == boundary
    turns = sum(1 for m in messages if m.is_turn_start)
    pruned = set(result.pruned_ids)
    if policy.protect_turns > turns:
        assert not pruned
    freed = 0
    for i, (before, after, decision) in enumerate(
        zip(messages, result.messages, result.decisions, strict=True)
    ):
        assert decision.pruned == (before.id in pruned)
        if before.id not in pruned:
            assert after is before
            continue
        assert i < boundary
        assert before.role is Role.TOOL
        assert isinstance(before.tool_result, ToolResult)
        assert before.tool_result.tool_name not in policy.protected_tools
        assert before.tool_result.compacted_at_ms is None
        assert not any(m.summary for m in messages[i:])
        assert after.tool_result is not None
        assert after.tool_result.output == policy.placeholder
        assert after.tool_result.compacted_at_ms == NOW
        freed += COUNTER.count(before.tool_result.output)
    assert result.tokens_before == freed
    if policy.budget_rule and pruned:
        assert freed >= policy.minimum_tokens
        # the newest protect_tokens of eligible output are never pruned
        newest_pruned = max(i for i, m in enumerate(messages) if m.id in pruned)
        newest_output = messages[newest_pruned].tool_result
        assert newest_output is not None
        assert (
            COUNTER.count(newest_output.output)
            + sum(
                d.output_tokens
                for d in result.decisions
                if d.reason is PruneReason.INSIDE_PROTECT_BUDGET
            )
            > policy.protect_tokens
        )


def test_results_are_the_objects_validation_and_a_copy_build() -> None:
    # prune builds its decisions without pydantic's generic paths, and its pruned copies with
    # core.model.session.replace; they must be indistinguishable from validated decisions and copies.
    messages = seed_example()
    result = prune(messages, PruningPolicy(), counter=COUNTER, now_ms=NOW)
    for decision in result.decisions:
        validated = type(decision)(**decision.__dict__)
        assert decision == validated
        assert decision.__pydantic_fields_set__ == validated.__pydantic_fields_set__
        assert decision.model_dump() == validated.model_dump()
    original = messages[2]
    assert original.tool_result is not None
    expected = replace(
        original,
        tool_result=replace(
            original.tool_result, output="<tool-output-compacted />", compacted_at_ms=NOW
        ),
    )
    pruned = result.messages[2]
    assert pruned == expected
    assert to_record(pruned) == to_record(expected)
    # The copy is a new object; the input is untouched.
    assert original.tool_result.output == text_of_tokens(500)
    assert pruned.tool_result is not original.tool_result


def test_plan_counts_pruned_copies_as_message_tokens_does() -> None:
    from core.algorithms.prune import plan_prune

    messages = seed_example()
    # A tool message that also has text: its pruned copy is more than the placeholder.
    messages[2] = replace(messages[2], text="a note")
    for copies in (True, False):
        plan = plan_prune(messages, PruningPolicy(), counter=COUNTER, now_ms=NOW, copies=copies)
        assert plan.pruned_at == [2]
        counted = [plan.tokens_of(i, COUNTER) for i in range(len(messages))]
        full = prune(messages, PruningPolicy(), counter=COUNTER, now_ms=NOW)
        assert counted == [COUNTER.message_tokens(m) for m in full.messages]
        plan.materialise(range(len(messages)))
        assert [to_record(m) for m in plan.working] == [to_record(m) for m in full.messages]
        assert plan.reasons() == [d.reason.value for d in full.decisions]


def test_planning_decodes_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """An output held as UTF-8 is decoded at each read: the plan counts an output from the
    lengths it is held with and looks whether it is the placeholder from its bytes, reading
    no output's text."""
    from core.algorithms.prune import plan_prune
    from core.model import session as session_module

    messages = [
        replace(m, tool_result=replace(r, output=session_module.held_output(r.output + " →")))
        if (r := m.tool_result) is not None
        else m
        for m in seed_example()
    ]
    held = [m.tool_result.output_held for m in messages if m.tool_result is not None]
    assert held and all(isinstance(h, session_module.Utf8Text) for h in held)
    reads: list[str] = []
    output = session_module._output

    def read(result: ToolResult) -> str:
        reads.append(result.call_id)
        return output(result)

    monkeypatch.setattr(session_module.ToolResult, "output", property(read))
    plan = plan_prune(messages, PruningPolicy(protect_turns=1), counter=COUNTER, now_ms=NOW)
    assert plan.pruned_at == [2, 7]
    assert reads == []


HELD_TEXTS = st.sampled_from(
    ["ok", "<tool-output-compacted />", "é done", "→ done", "<pruned →/>", "x→" * 40, "𝄞 clef", ""]
)
"""Outputs held as their text (ASCII, Latin-1) and as their UTF-8 (two and four bytes a
character), some of them the placeholder."""


@settings(max_examples=200, deadline=None)
@given(
    outputs=st.lists(HELD_TEXTS, max_size=10),
    placeholder=HELD_TEXTS.filter(bool),
    protect_turns=st.integers(0, 2),
)
def test_plan_reads_held_outputs_as_their_text(
    outputs: list[str], placeholder: str, protect_turns: int
) -> None:
    """Whatever form an output is held in, the plan counts it as its text and finds it to be
    the placeholder exactly when its text is."""
    from core.algorithms.prune import plan_prune

    convo = SessionBuilder()
    for n, text in enumerate(outputs):
        convo.user(f"request {n}")
        convo.call("read", {"path": f"f{n}"})
        convo.result(text)
    messages = convo.messages
    policy = PruningPolicy(protect_turns=protect_turns, placeholder=placeholder)
    plan = plan_prune(messages, policy, counter=COUNTER, now_ms=NOW, copies=False)
    boundary = skip_boundary(messages, protect_turns)
    for i, message in enumerate(messages):
        result = message.tool_result
        if result is None:
            continue
        assert plan.output_tokens[i] == COUNTER.count(result.output)
        if i < boundary:
            same = result.output == placeholder
            assert plan.why[i] is (PruneReason.ALREADY_PRUNED if same else PruneReason.PRUNED)
