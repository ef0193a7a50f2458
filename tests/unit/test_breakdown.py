"""The context breakdown (core.insights.breakdown): each category on built sessions, the reconciliation to
the recorded total, and every call of every real session in ../shared/samples adding up."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.formats import load_session
from core.insights.breakdown import CATEGORIES, CallBreakdown, breakdown, fit
from core.model.session import Usage, UsageConvention
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO

SAMPLES = REPO.parent / "shared" / "samples"
SAMPLE_FILES = (
    [
        *sorted(
            p
            for p in SAMPLES.rglob("*")
            if p.is_file() and p.suffix in (".jsonl", ".json") and "storage" not in p.parts
        ),
        SAMPLES / "opencode" / "storage",
    ]
    if SAMPLES.is_dir()
    else []
)


def added_up(row: CallBreakdown) -> int:
    return sum(row.tokens(category) for category in CATEGORIES)


def test_each_category_is_counted_where_it_belongs() -> None:
    session = (
        SessionBuilder()
        .user(text_of_tokens(100))
        .user(text_of_tokens(40), meta=True)
        .call("Read", {"file_path": "/a.py"}, text=text_of_tokens(20), context=5_000)
        .result(tokens=300)
        .call("Bash", {"command": "ls"}, context=6_000, reasoning=text_of_tokens(50))
        .result(tokens=200)
        .reply("done", context=7_000)
        .session()
    )
    result = breakdown(session, calibrate=False)
    first, second, third = result.calls
    # The first call: everything before it that no message accounts for is system + tools.
    assert result.overhead_call_index == 0
    assert result.overhead_tokens == 5_000 - 140
    assert first.user == 100 and first.attachments == 40
    assert first.system_and_tools == result.overhead_tokens
    assert first.residual == 0 and added_up(first) == 5_000
    # The second: the first call's text and tool call, and Read's output, are in it.
    assert second.assistant_text == 20
    assert second.tool_calls > 0
    assert second.tool_outputs_by_tool == {"Read": 300}
    assert added_up(second) == 6_000
    assert third.reasoning == 50
    assert third.tool_outputs_by_tool == {"Read": 300, "Bash": 200}
    assert third.tool_outputs == 500
    assert all(row.total_provenance == "recorded" for row in result.calls)


def test_estimates_above_the_recorded_total_are_scaled_down_to_it() -> None:
    session = (
        SessionBuilder()
        .user("go")
        .call("Read", context=1_000)
        .result(tokens=5_000)  # the estimator over-counts this output
        .reply("done", context=2_000)
        .session()
    )
    last = breakdown(session).calls[-1]
    assert last.scale < 1.0
    assert last.residual == 0
    assert added_up(last) == last.total_tokens == 2_000


def test_a_call_without_usage_has_its_estimate_as_total() -> None:
    session = SessionBuilder().user(text_of_tokens(30)).reply("hi", context=None).session()
    (row,) = breakdown(session).calls
    assert row.total_provenance == "estimated"
    assert row.total_tokens == 30 and row.residual == 0
    assert breakdown(session).notes  # says there is no recorded usage


def test_a_recorded_compaction_replaces_the_head_with_its_summary() -> None:
    session = (
        SessionBuilder()
        .user("start")
        .call("Bash", context=10_000)
        .result(tokens=4_000)
        .reply("done", context=15_000)
        .compaction(text_of_tokens(500), tokens_before=15_000)
        .user("next")
        .reply("ok", context=12_000)
        .session()
    )
    after = breakdown(session, calibrate=False).calls[-1]
    assert after.summaries == 500
    assert after.tool_outputs == 0  # the Bash output was summarised away
    assert added_up(after) == 12_000


def test_after_reply_usage_counts_the_reply_and_its_recorded_reasoning() -> None:
    usage = Usage(
        input=1_000, output=400, reasoning=300, total=1_400, convention=UsageConvention.OPENAI
    )
    session = (
        SessionBuilder(convention=UsageConvention.OPENAI)
        .user(text_of_tokens(100))
        .reply(text_of_tokens(50), usage=usage)
        .session()
    )
    (row,) = breakdown(session).calls
    assert row.total_tokens == 1_400
    assert row.assistant_text == 50
    assert row.reasoning == 300  # encrypted reasoning: the recorded figure
    assert row.system_and_tools == 900  # the prompt (1,000) minus the user's 100
    assert added_up(row) == 1_400


def test_after_reply_usage_counts_every_tool_call_of_the_reply() -> None:
    """A total recorded after the reply holds all of its tool calls, not only the last one."""
    # (an output large enough for both calls: nothing is scaled down to fit the total)
    usage = Usage(input=5_000, output=3_000, total=8_000, convention=UsageConvention.OPENAI)
    big = {"command": "x" * 4_000}
    small = {"command": "ls"}

    def tool_calls_of(calls: list[tuple[str, dict[str, str]]]) -> int:
        session = (
            SessionBuilder(convention=UsageConvention.OPENAI)
            .user(text_of_tokens(100))
            .calls(calls, usage=usage)
            .session()
        )
        (row,) = breakdown(session, calibrate=False).calls
        return row.tool_calls

    both = tool_calls_of([("bash", big), ("bash", small)])
    alone = tool_calls_of([("bash", small)])
    big_alone = tool_calls_of([("bash", big)])
    assert both == big_alone + alone


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), st.integers(0, 50_000))
def test_fit_never_exceeds_the_total(values: list[int], total: int) -> None:
    fitted = fit(values, total)
    assert all(0 <= f <= v for f, v in zip(fitted, values, strict=True))
    assert sum(fitted) == min(sum(values), total)


def _largest_remainders(values: list[int], total: int) -> list[int]:
    """The definition: each value's exact share floored, the units left over to the largest
    remainders, the first of equals first."""
    whole = sum(values)
    if whole <= total or whole == 0:
        return list(values)
    exact = [v * total / whole for v in values]
    floors = [int(x) for x in exact]
    order = sorted(range(len(values)), key=lambda k: (floors[k] - exact[k], k))
    for k in order[: total - sum(floors)]:
        floors[k] += 1
    return floors


@given(
    st.lists(st.integers(min_value=0, max_value=10**7), max_size=30),
    st.integers(min_value=0, max_value=10**7),
)
def test_fit_gives_the_units_left_to_the_largest_remainders(values: list[int], total: int) -> None:
    assert fit(values, total) == _largest_remainders(values, total)


@pytest.mark.skipif(not SAMPLE_FILES, reason="shared samples are not available")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_call_of_every_sample_adds_up_to_its_recorded_total(path: Path) -> None:
    session = load_session(path)
    result = breakdown(session)
    assert len(result.calls) == sum(
        1 for m in session.messages if m.is_model_call and not m.sidechain
    )
    for row in result.calls:
        assert added_up(row) == row.total_tokens, row.call_index
        assert row.residual >= 0
        assert all(row.tokens(category) >= 0 for category in CATEGORIES)
        assert sum(row.tool_outputs_by_tool.values()) == row.tool_outputs


def test_a_call_names_its_largest_tools_and_puts_the_rest_together() -> None:
    """Issue 26: 3,000 distinct tools made a row per tool at every call (122 MB of JSON for a
    3 MB session); a call names the largest tools and sums the rest under one key."""
    from core.insights.breakdown import MAX_TOOLS_PER_CALL, OTHER_TOOLS

    builder = SessionBuilder().user("go")
    tools = MAX_TOOLS_PER_CALL + 40
    for n in range(tools):
        builder.call(f"tool_{n:03d}", {"n": n}, context=1_000 + 300 * n).result(tokens=10 + n)
    session = builder.reply("done", context=1_000 + 300 * tools).session(window=2_000_000)
    last = breakdown(session, calibrate=False).calls[-1]
    by_tool = last.tool_outputs_by_tool
    assert len(by_tool) == MAX_TOOLS_PER_CALL + 1
    assert list(by_tool)[-1] == OTHER_TOOLS
    named = list(by_tool.values())[:-1]
    assert named == sorted(named, reverse=True) and "tool_059" in by_tool  # the largest first
    assert "tool_000" not in by_tool
    assert sum(by_tool.values()) == last.tool_outputs


_PARTS = st.lists(
    st.tuples(
        st.sampled_from(["user", "reasoning", "tool:Bash", "tool:Read", "x"]), st.integers(0, 50)
    ),
    max_size=6,
)


@given(
    _PARTS,
    st.lists(st.tuples(st.integers(0, 4), _PARTS), max_size=8),
    st.lists(
        st.tuples(
            st.integers(0, 3), st.dictionaries(st.sampled_from(["user", "x"]), st.integers(0, 9))
        ),
        max_size=3,
    ),
)
def test_a_stretchs_columns_are_its_running_sums_at_each_call(
    base: list[tuple[str, int]],
    adds: list[tuple[int, list[tuple[str, int]]]],
    replies: list[tuple[int, dict[str, int]]],
) -> None:
    """Issue 24: the running sums are kept as a column per key over a stretch's calls, not as a
    dict per call. At every call each column holds what the context held before it (its base
    and every message added before the call) plus the call's own reply, as a Counter adds
    them; a key the call does not hold reads 0."""
    from collections import Counter

    from core.insights.breakdown_columns import Stretch

    calls = 4
    stretch = Stretch(0, base)
    replied = {position: reply for position, reply in replies if position < calls}
    added = sorted(adds, key=lambda item: item[0])
    for position in range(calls):
        for at, parts in added:
            if at == position:
                stretch.add(parts)
        stretch.call(replied.get(position))
    columns = stretch.columns()
    for position in range(calls):
        expected: Counter[str] = Counter()
        for key, tokens in base:
            expected[key] += tokens
        for at, parts in added:
            if at <= position:
                for key, tokens in parts:
                    expected[key] += tokens
        for key, tokens in replied.get(position, {}).items():
            expected[key] += tokens
        got = {key: column[position] for key, column in columns.items() if column[position]}
        assert got == {key: tokens for key, tokens in expected.items() if tokens}


@given(
    st.lists(st.integers(-1_000, 10_000), min_size=1, max_size=10).flatmap(
        lambda values: st.tuples(
            st.just(values),
            st.lists(st.sampled_from(range(8)), min_size=len(values), max_size=len(values)),
            st.lists(
                st.sampled_from(["Bash", "Read", None]), min_size=len(values), max_size=len(values)
            ),
        )
    )
)
def test_a_scaled_calls_slots_and_tools_are_the_sums_of_their_keys(
    case: tuple[list[int], list[int], list[str | None]],
) -> None:
    """Issue 24: a scaled call's fitted values are added up by category slot and by tool (in
    one C call where no slot adds up several keys): each slot reads the sum of its keys (0 for
    none), each tool the sum of its keys, a tool at 0 left out."""
    from core.insights.breakdown import _Groups

    values, slot_of, tool_of = case
    slots = [[k for k, s in enumerate(slot_of) if s == slot] for slot in range(8)]
    names = sorted({name for name in tool_of if name is not None})
    tools = [(name, [k for k, t in enumerate(tool_of) if t == name]) for name in names]
    slot, named = _Groups(slots, tools).of(values)
    assert list(slot) == [sum(values[k] for k in keys) for keys in slots]
    expected = {name: sum(values[k] for k in keys) for name, keys in tools}
    assert named == {name: tokens for name, tokens in expected.items() if tokens}


@given(
    st.lists(st.integers(min_value=-(10**5), max_value=10**7), max_size=12),
    st.integers(min_value=0, max_value=10**7),
)
def test_fit_of_values_below_zero_keeps_the_largest_remainders_rule(
    values: list[int], total: int
) -> None:
    """A measured summary can be below its estimate (a negative column): ``fit`` still floors
    each share as ``int`` does and gives the units left to the largest remainders, the first
    of equals first (the one-unit case as the general one)."""
    assert fit(values, total) == _largest_remainders(values, total)


@given(_PARTS, st.lists(st.tuples(st.integers(0, 4), _PARTS), max_size=8), _PARTS)
def test_a_calls_categories_read_from_its_stretchs_columns_are_its_sums_by_category(
    base: list[tuple[str, int]],
    adds: list[tuple[int, list[tuple[str, int]]]],
    second: list[tuple[str, int]],
) -> None:
    """Issue 24: the calibration reads each call's tokens by category from its stretch's
    columns added up by category once (``SumsAt.grouped_at``), not from a dict of its keys
    made and regrouped call by call: the same figures (a category at 0 may be there)."""
    from core.insights.breakdown import _by_category, _category
    from core.insights.breakdown_columns import Stretch, SumsAt

    stretches = [Stretch(0, base), Stretch(4, second)]
    for position in range(4):
        for at, parts in adds:
            if at == position:
                stretches[0].add(parts)
        stretches[0].call(None)
    for _ in range(2):
        stretches[1].call(None)
    columns = [stretch.columns() for stretch in stretches]
    sums_at = SumsAt(stretches, columns, [0, 0, 0, 0, 1, 1])
    for n in range(len(sums_at)):
        grouped = sums_at.grouped_at(n, _category)
        assert {k: v for k, v in grouped.items() if v} == {
            k: v for k, v in _by_category(sums_at[n]).items() if v
        }
