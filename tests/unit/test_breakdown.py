"""The context breakdown (core.insights.breakdown): each category on built sessions, the reconciliation to
the recorded total, and every call of every real session in ../shared/samples adding up."""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.formats import load_session
from core.insights.breakdown import (
    CATEGORIES,
    CallBreakdown,
    _KeptLengths,
    breakdown,
    message_parts,
    messages_parts,
)
from core.insights.breakdown_columns import Stretch
from core.insights.breakdown_rows import fit
from core.insights.context_walk import CallStep, CompactionStep, RecordedWalk
from core.model.session import (
    Message,
    Role,
    Session,
    ToolCall,
    ToolResult,
    Usage,
    UsageConvention,
)
from core.model.tokens import DEFAULT_ESTIMATOR, TokenCounter, get_counter
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
    from core.insights.breakdown_rows import MAX_TOOLS_PER_CALL, OTHER_TOOLS

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
                add(stretch, parts)
        call(stretch, replied.get(position))
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


_KEYS = [
    "attachments",
    "measured:tool:web",
    "reasoning",
    "summaries",
    "tool:Bash",
    "tool:Read",
    "user",
    "x",
]


@given(
    st.lists(st.lists(st.integers(-1_000, 10_000), min_size=5, max_size=5), min_size=0, max_size=8),
    st.lists(st.one_of(st.none(), st.integers(-5_000, 60_000)), min_size=5, max_size=5),
)
def test_fitted_columns_are_each_calls_own_fit(
    columns: list[list[int]], targets: list[int | None]
) -> None:
    """Issue 24: the calls whose keys exceed their total are scaled down column by column, key
    by key over the calls (floors, then a unit to each key ranked below the call's ``short``),
    not call by call: every call's values are the ones ``fit`` gives it, the others as they
    are."""
    from core.insights.breakdown_columns import summed
    from core.insights.breakdown_rows import fit_columns

    wholes = summed(columns, 5)
    given_columns = [column.copy() for column in columns]
    fitted = fit_columns(columns, wholes, targets)
    assert columns == given_columns  # (fitted in new columns: the caller's are left as they are)
    for position, target in enumerate(targets):
        values = [column[position] for column in columns]
        expected = values if target is None else fit(values, target)
        assert [column[position] for column in fitted] == expected


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from([-0.75, -0.5, -0.25, 0.0, -0.5]), min_size=6, max_size=6),
            st.integers(-3, 7),
        ),
        max_size=6,
    )
)
def test_leftovers_go_to_a_stable_sorts_first_short(rows: list[tuple[list[float], int]]) -> None:
    """The units a fit gives, for each call: one to each key of a stable sort of ``floor -
    exact`` (least first, the first of equals first) cut at ``short`` — the first least when
    one is short, and the slice's own reading of a negative ``short`` (every key but the last
    ones) — each in the call's own position of the columns."""
    from core.insights.breakdown_rows import give_leftovers

    floors = [[0] * len(rows) for _ in range(6)]
    give_leftovers(floors, [(p, short, row) for p, (row, short) in enumerate(rows)])
    for position, (row, short) in enumerate(rows):
        keys = sorted(range(len(row)), key=row.__getitem__)[:short]
        assert [column[position] for column in floors] == [int(k in keys) for k in range(6)]
    bumped = [[0], [0], [0]]
    give_leftovers(bumped, [(0, 1, [-0.5, -0.75, -0.75])])
    assert bumped == [[0], [1], [0]]


def named_in(row: dict[str, object]) -> dict[str, int]:
    named = row["tool_outputs_by_tool"]
    assert isinstance(named, dict)
    return named


def _row_call_by_call(
    keys: list[str], values: list[int], total: int | None, overhead: int
) -> tuple[dict[str, object], float | None]:
    """One call's row as the breakdown made it call by call (its keys' values fitted on their
    own), and what it appended to ``over``."""
    from core.insights.breakdown_rows import _largest_tools, _split

    whole = sum(values)
    scale, unexplained, residual, system, over = 1.0, 0, 0, overhead, None
    if total is not None:
        system = min(overhead, total)
        room = total - overhead
        unexplained = room - whole
        room = max(room, 0)
        if whole > room:
            scale = room / whole
            values = fit(values, room)
            whole = sum(values)
        residual = max(0, total - overhead - whole)
    slots: dict[str, int] = {}
    named: dict[str, int] = {}
    for key, value in zip(keys, values, strict=True):
        head, detail = _split(key)
        slots[head] = slots.get(head, 0) + value
        if head == "tool":
            named[detail] = named.get(detail, 0) + value
    named = _largest_tools({name: tokens for name, tokens in named.items() if tokens})
    if scale != 1.0:
        scale = round(scale, 4)
        if scale < 1.0 and total:
            over = -unexplained / total
    row = {
        "total_tokens": whole + overhead if total is None else total,
        "system_and_tools": slots.get("system_and_tools", 0) + system,
        "user": slots.get("user", 0),
        "reasoning": slots.get("reasoning", 0),
        "summaries": slots.get("summaries", 0),
        "attachments": slots.get("attachments", 0),
        "tool_outputs": sum(named.values()),
        "tool_outputs_by_tool": named,
        "residual": residual,
        "unexplained": unexplained,
        "scale": scale,
    }
    return row, over


@given(
    st.lists(st.sampled_from(_KEYS), min_size=0, max_size=6, unique=True),
    st.lists(st.integers(0, 5_000), min_size=4 * 6, max_size=4 * 6),
    st.lists(st.one_of(st.none(), st.integers(0, 20_000)), min_size=4, max_size=4),
    st.integers(0, 3_000),
)
def test_a_stretchs_rows_read_from_its_fitted_columns_are_each_calls_own_row(
    keys: list[str], flat: list[int], totals: list[int | None], overhead: int
) -> None:
    """Issue 24: a stretch's rows are read from its columns fitted and added up by category
    and tool once for the stretch: each row (and what it adds to ``over``) is the one the
    breakdown made call by call, fitting the call's own values."""
    from core.insights.breakdown_rows import stretch_rows

    columns = {key: flat[4 * k : 4 * k + 4] for k, key in enumerate(keys)}
    calls = [(n, 10 + n) for n in range(6)]
    recorded: list[int | None] = [7, 8, *totals]
    over: list[float] = []
    rows = stretch_rows(2, 4, columns, calls, recorded, overhead, "calibrated", over)
    expected_over = []
    ordered = sorted(columns)
    for position, (row, total) in enumerate(zip(rows, totals, strict=True)):
        values = [columns[key][position] for key in ordered]
        expected, appended = _row_call_by_call(ordered, values, total, overhead)
        assert {key: row[key] for key in expected} == expected
        assert list(row["tool_outputs_by_tool"]) == list(named_in(expected))
        assert (row["call_index"], row["message_index"]) == calls[2 + position]
        if appended is not None:
            expected_over.append(appended)
    assert over == expected_over


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
                add(stretches[0], parts)
        call(stretches[0], None)
    for _ in range(2):
        call(stretches[1], None)
    columns = [stretch.columns() for stretch in stretches]
    sums_at = SumsAt(stretches, columns, [0, 0, 0, 0, 1, 1])
    for n in range(len(sums_at)):
        grouped = sums_at.grouped_at(n, _category)
        assert {k: v for k, v in grouped.items() if v} == {
            k: v for k, v in _by_category(sums_at[n]).items() if v
        }


def _stretches_step_by_step(
    session: Session, parts_of: Callable[[int], list[tuple[str, int]]], counter: TokenCounter
) -> tuple[list[Stretch], list[tuple[int, int]], list[int]]:
    """The stretches as the recorded walk's own steps make them, one step at a time."""
    from core.insights.breakdown import _reply

    walk = RecordedWalk(session)
    stretch = Stretch(0, [])
    stretches = [stretch]
    calls: list[tuple[int, int]] = []
    segments: list[int] = []
    for step in walk.steps():
        if isinstance(step, CompactionStep):
            wrote = [p for j in step.context for p in parts_of(j)]
            summary = step.compaction.summary_message
            if summary is not None:
                wrote.append(("summaries", counter.count(summary.text)))
            stretch = Stretch(len(calls), wrote)
            stretches.append(stretch)
        elif isinstance(step, CallStep):
            i = step.message_index
            after = walk.calls.kinds[step.call_index] == "after-reply" and walk.calls.main[i]
            call(stretch, _reply(session.messages[i], parts_of(i)) if after else None)
            calls.append((step.call_index, i))
            segments.append(len(stretches) - 1)
        else:
            add(stretch, parts_of(step.index))
    return stretches, calls, segments


def _walked_sessions() -> list[Session]:
    compacted = (
        SessionBuilder()
        .user("start")
        .call("bash", {"command": "ls"}, context=30_000)
        .result(tokens=2_000)
        .compaction(summary="what happened so far", first_kept=2)
        .call("bash", {"command": "make"}, context=12_000)
        .result(tokens=1_000)
        .reply("done", context=14_000)
        .session()
    )
    return [compacted, *(load_session(path) for path in SAMPLE_FILES)]


def test_the_stretches_taken_span_by_span_are_the_walks_step_by_step() -> None:
    """Issue 24: between two recorded compactions the walk takes the calls and the messages
    joining the context as one span (their positions a running count of the calls), not a step
    per message: every stretch (its start, base, calls, replies and the messages joining it,
    after how many calls), every call and its stretch are the ones the recorded walk's own steps
    make, on a built session with a compaction and on every sample session (when present)."""
    from core.insights.breakdown import walk_stretches

    counter = get_counter(DEFAULT_ESTIMATOR)
    for session in _walked_sessions():

        def parts_of(i: int, session: Session = session) -> list[tuple[str, int]]:
            return message_parts(session.messages[i], counter)

        got = walk_stretches(RecordedWalk(session), parts_of, counter)
        expected = _stretches_step_by_step(session, parts_of, counter)
        assert got[1:] == expected[1:]
        assert [vars_of(s) for s in got[0]] == [vars_of(s) for s in expected[0]]


def add(stretch: Stretch, parts: list[tuple[str, int]]) -> None:
    """A step of the reference walk: a message joins the context (before the next call)."""
    stretch.adds.append((stretch.calls, parts))


def call(stretch: Stretch, reply: dict[str, int] | None) -> None:
    """A step of the reference walk: a call is made; ``reply``: its own reply's tokens, for a
    total measured after it."""
    if reply is not None:
        stretch.replies.append((stretch.calls, reply))
    stretch.calls += 1


def vars_of(stretch: Stretch) -> tuple[object, ...]:
    return (stretch.first, stretch.base, stretch.calls, stretch.adds, stretch.replies)


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
            st.integers(-(10**6), 10**6).map(lambda n: n + 0.5),
        ),
        max_size=20,
    )
)
def test_a_columns_rounded_and_truncated_values_are_round_and_int_of_each(
    values: list[float],
) -> None:
    """Issue 24: a column scaled by its ratio is rounded, and a fitted column floored, through
    the float's own ``__round__`` and ``__trunc__`` (no look-up per value): the integers
    ``round`` and ``int`` give, halves to even included."""
    from core.insights.breakdown_columns import rounded, truncated

    assert rounded(values) == [round(v) for v in values]
    assert truncated(values) == [int(v) for v in values]


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(-3, 5)), st.integers(0, 2)),
        max_size=30,
    )
)
def test_each_stretchs_first_recorded_call_and_the_calls_fitted_are_the_loops(
    calls: list[tuple[int | None, int]],
) -> None:
    """Issue 24: each stretch's first call with a recorded total is found by bisecting to the
    next stretch once found, and the calls the ratios are fitted on (a total above 0, not the
    first of its stretch) are picked in C: the calls the loop over every call finds."""
    from core.insights.breakdown import _fitted_calls, _segment_starts

    recorded = [total for total, _step in calls]
    segments = list(accumulate(step for _total, step in calls))
    expected: dict[int, int] = {}
    for n, (total, segment) in enumerate(zip(recorded, segments, strict=True)):
        if total is not None and total > 0 and segment not in expected:
            expected[segment] = n
    starts = _segment_starts(recorded, segments)
    assert starts == expected
    assert list(starts) == list(expected)
    assert _fitted_calls(recorded, starts) == [
        n
        for n, (total, segment) in enumerate(zip(recorded, segments, strict=True))
        if total is not None and total > 0 and starts.get(segment, n) != n
    ]


def _parts_one_by_one(message: Message, counter: TokenCounter) -> list[tuple[str, int]]:
    """A message's parts by the counter's own methods, one text at a time (the rule
    ``messages_parts`` applies to every message in one loop)."""
    if message.summary:
        return [("summaries", _all_of(message, counter))]
    if message.role is Role.SYSTEM:
        return [("system_and_tools", _all_of(message, counter))]
    if message.role is Role.USER:
        category = "attachments" if message.meta or message.synthetic else "user"
        return [(category, _all_of(message, counter))]
    if message.role is Role.TOOL:
        result = message.tool_result
        name = (result.tool_name if result is not None else None) or "(unknown tool)"
        tokens = (
            counter.output_tokens(result) if result is not None else counter.count(message.text)
        )
        if message.agent_estimate_tokens is not None:
            tokens = min(tokens, message.agent_estimate_tokens)
        return [(f"tool:{name}", tokens)]
    parts = [
        ("assistant_text", counter.count(message.text)),
        ("reasoning", max(counter.count(message.reasoning), message.reasoning_estimate_tokens)),
    ]
    parts += [("tool_calls", counter.call_tokens(c.name, c.arguments)) for c in message.tool_calls]
    return parts


def _all_of(message: Message, counter: TokenCounter) -> int:
    result = message.tool_result
    return counter.count(message.text) + (counter.output_tokens(result) if result else 0)


_TEXTS = st.text(alphabet=st.sampled_from("ab c\n{é→😀"), max_size=30)


@st.composite
def _messages(draw: st.DrawFn) -> list[Message]:
    messages = []
    for i in range(draw(st.integers(0, 12))):
        role = draw(st.sampled_from(list(Role)))
        result = None
        if draw(st.booleans()):
            name = draw(st.sampled_from(["", "Bash", "Read→"]))
            result = ToolResult(call_id=f"c{i}", tool_name=name, output=draw(_TEXTS))
        calls = [
            ToolCall(id=f"t{i}.{k}", name=draw(st.sampled_from(["Bash", "Wé"])), arguments=arg)
            for k, arg in enumerate(
                draw(
                    st.lists(
                        st.one_of(st.none(), _TEXTS, st.dictionaries(_TEXTS, _TEXTS)), max_size=2
                    )
                )
            )
        ]
        messages.append(
            Message(
                index=i,
                id=f"m{i}",
                role=role,
                text=draw(_TEXTS),
                reasoning=draw(_TEXTS),
                tool_calls=calls,
                tool_result=result,
                summary=draw(st.booleans()),
                synthetic=draw(st.booleans()),
                meta=draw(st.booleans()),
                agent_estimate_tokens=draw(st.one_of(st.none(), st.integers(0, 5))),
                reasoning_estimate_tokens=draw(st.integers(0, 5)),
            )
        )
    return messages


@pytest.mark.parametrize("estimator", ["chars/4", "bytes/4", "ceil(chars/4)", "kept"])
@given(messages=_messages())
def test_messages_parts_is_each_message_counted_alone(
    estimator: str, messages: list[Message]
) -> None:
    """Every message's parts made in one loop (a text measured by its length where it is ASCII,
    the rule applied once per length) are those the counter's own methods give one message
    at a time, for every rule and the counter of lengths kept through redaction."""
    counter = _KeptLengths("chars/4") if estimator == "kept" else TokenCounter(estimator)
    expected = [_parts_one_by_one(message, counter) for message in messages]
    assert messages_parts(messages, counter) == expected
    assert [message_parts(message, counter) for message in messages] == expected


_ARGUMENTS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), _TEXTS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_TEXTS, inner, max_size=3)
    ),
    max_leaves=6,
)


@pytest.mark.parametrize("estimator", ["chars/4", "bytes/4", "ceil(chars/4)"])
@given(name=_TEXTS, arguments=_ARGUMENTS | st.builds(object))
def test_a_calls_tokens_measured_by_length_are_the_counters(
    estimator: str, name: str, arguments: object
) -> None:
    """Issue 24: a tool call whose name and arguments (a string, a dict's compact JSON) are
    ASCII is measured by their lengths in the parts' loop, with no call of the counter; any
    call, ASCII or not, of any arguments (a list, a number, what JSON cannot write), gets the
    counter's own figure."""
    from core.insights.breakdown import _measures

    counter = TokenCounter(estimator)
    call_tokens = _measures(counter)[1]
    assert call_tokens is counter.call_measure()  # (the counter's own rule: one place)
    expected = counter.call_tokens(name, arguments)
    assert call_tokens(name, arguments) == expected
    assert call_tokens(name, arguments) == expected  # (the second time from the memo)


_GROWN = st.lists(
    st.tuples(
        st.sampled_from(
            ["user", "assistant_text", "tool:Bash", "tool:Read", "system_and_tools", "measured:x"]
        ),
        st.integers(0, 900),
    ),
    max_size=4,
)


@given(
    st.lists(st.lists(_GROWN, min_size=1, max_size=9), min_size=1, max_size=4),
    st.data(),
    st.integers(1, 3),
)
def test_calibration_read_as_columns_is_the_call_by_call_fit(
    stretch_adds: list[list[list[tuple[str, int]]]], data: st.DataObject, stride: int
) -> None:
    """Issue 24: a session without hosted tools' markers is calibrated from each category's
    growth read as a column of its stretch's (``_growth_columns``, ``fit_ratio_columns``), not
    from a dict per call: the same ratios, bit for bit, and the same calls, as the call-by-call
    fit (``markers=True`` reads every call's sums as a dict), whatever the stretches, the
    calls without a total and the calls picked."""
    import core.insights.breakdown as module
    from core.insights.breakdown import _calibrate, _segment_starts
    from core.insights.breakdown_columns import SumsAt

    stretches: list[Stretch] = []
    segments: list[int] = []
    for segment, adds in enumerate(stretch_adds):
        stretch = Stretch(len(segments), [("summaries", 10 * segment)])
        for parts in adds:
            add(stretch, parts)
            call(stretch, None)
            segments.append(segment)
        stretches.append(stretch)
    columns = [stretch.columns() for stretch in stretches]
    recorded = data.draw(
        st.lists(
            st.one_of(st.none(), st.integers(1, 20_000)),
            min_size=len(segments),
            max_size=len(segments),
        )
    )
    starts = _segment_starts(recorded, segments)
    fit_calls = module.MAX_FIT_CALLS
    try:
        module.MAX_FIT_CALLS = max(1, len(segments) // stride)  # (every call, or a stride)
        by_columns = _calibrate(
            SumsAt(stretches, columns, segments), recorded, segments, starts, {}, markers=False
        )
        by_calls = _calibrate(
            SumsAt(stretches, columns, segments), recorded, segments, starts, {}, markers=True
        )
    finally:
        module.MAX_FIT_CALLS = fit_calls
    assert by_columns == by_calls
