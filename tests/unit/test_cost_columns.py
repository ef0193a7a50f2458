"""The session's cost priced as columns (core.insights.cost) is, to the last digit, the cost
priced call by call with :func:`core.insights.cost.price`: every call's figures, the totals
added up in the same order, the calls counted, the models unknown, the rates used and the cache
savings — over every usage convention, tiers, unknown models, calls without usage, days in other
offsets or unreadable, sub-agent calls, negative counts and counts beyond 28 digits."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.context_walk import RecordedWalk
from core.insights.cost import (
    CompactionCost,
    Priced,
    SessionCost,
    _changes,
    _slots,
    price,
    session_cost,
    session_cost_rows,
)
from core.insights.prices import SUBSCRIPTIONS, Rates, day_of, days_of
from core.model.session import Role, Session, Usage, UsageConvention
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files


def _reference(session: Session) -> SessionCost:
    """The cost call by call: each picked call priced alone, the figures added up main calls
    first, the cache savings per run of calls priced at one rates object."""
    call_of = RecordedWalk(session).calls.call_of
    main: list[Priced] = []
    other: list[Priced] = []
    runs: list[tuple[Rates, int]] = []
    for m in session.messages:
        if m.role is not Role.ASSISTANT or (call_of[m.index] < 0 and m.usage is None):
            continue
        call = call_of[m.index]
        priced, found = price(m, call if call >= 0 else None, session)
        (main if call >= 0 else other).append(priced)
        if m.usage is None:
            continue
        if found is None:
            runs.append((Rates.__new__(Rates), 0))  # (an unpriced call ends a run)
        elif runs and runs[-1][0] is found:
            runs[-1] = (found, runs[-1][1] + priced.cache_read_tokens)
        else:
            runs.append((found, priced.cache_read_tokens))
    recorded = [p for p in main + other if p.unknown_reason != "no usage recorded"]
    ok = [p for p in recorded if p.total_usd is not None]

    def column(name: str) -> float:
        added: float = sum(getattr(p, name) for p in ok)
        return added

    real = [(r, n) for r, n in runs if hasattr(r, "input")]
    saved = sum((Decimal(n) * (r.input - r.cache_read) for r, n in real), Decimal(0))
    how = sorted(
        {f"{r.model_id} @ {r.provider_id}" + (f" ({r.note})" if r.note else "") for r, _ in real}
    )
    if session.provider in SUBSCRIPTIONS and not how:
        how = [f"{session.provider} bills by subscription"]
    return SessionCost(
        total_usd=column("total_usd") if ok else None,
        calls=len(recorded),
        priced_calls=len(ok),
        unpriced_calls=len(recorded) - len(ok),
        unknown_models=sorted({p.model or "(no model)" for p in recorded if p.total_usd is None}),
        input_usd=column("input_usd"),
        cache_read_usd=column("cache_read_usd"),
        cache_write_usd=column("cache_write_usd"),
        output_usd=column("output_usd"),
        cache_saved_usd=float(saved),
        priced_as=how,
        per_call=[p.call_cost() for p in main],
        other_calls=[p.call_cost() for p in other],
    )


def _reference_compactions(session: Session) -> list[CompactionCost]:
    """Each compaction's cost the way a scan finds it: its summary calls, the last call before
    it and the first after it that sent tokens, the cache the first paid to rebuild."""
    walk = RecordedWalk(session)
    call_of = walk.calls.call_of
    summaries: dict[int, Priced] = {}
    sent: list[tuple[int, Priced, Rates | None]] = []
    for m in session.messages:
        if m.role is not Role.ASSISTANT:
            continue
        call = call_of[m.index]
        if call < 0 and m.usage is not None:
            summaries[m.index] = price(m, None, session)[0]
        elif call >= 0:
            priced, found = price(m, call, session)
            if priced.input_tokens + priced.cache_read_tokens + priced.cache_write_tokens:
                sent.append((m.index, priced, found))
    out: list[CompactionCost] = []
    for rc in walk.recorded.all:
        if rc.rewound:
            continue
        cost = CompactionCost(recorded_index=rc.index)
        own = [summaries[j] for j in range(rc.m_c, rc.owned_end) if j in summaries]
        own += [summaries[j] for j in rc.owned if j in summaries and j >= rc.owned_end]
        usd = [p.total_usd for p in own if p.total_usd is not None]
        cost.summary_call_usd = sum(usd) if usd else None
        before = [s for s in sent if s[0] < rc.m_c]
        after = next((s for s in sent if s[0] >= rc.owned_end), None)
        if before and after is not None:
            last, first = before[-1][1], after[1]
            cost.cache_read_before = last.cache_read_tokens
            cost.cache_read_after = first.cache_read_tokens
            cost.cache_invalidated_tokens = max(0, last.cache_read_tokens - first.cache_read_tokens)
            cost.next_call_index = first.call_index
            if after[2] is not None:
                cost.cache_rebuild_usd = float(
                    Decimal(first.input_tokens) * after[2].input
                    + Decimal(first.cache_write_tokens) * after[2].cache_write
                )
        out.append(cost)
    return out


def _same(session: Session) -> None:
    cost = session_cost(session)
    expected = _reference(session)
    assert cost.model_dump(exclude={"compactions", "compactions_usd"}) == expected.model_dump(
        exclude={"compactions", "compactions_usd"}
    )
    # the very floats, not equal-looking ones
    got_calls = cost.per_call + cost.other_calls
    for got, want in zip(got_calls, expected.per_call + expected.other_calls, strict=True):
        assert repr(got) == repr(want)
    assert repr(cost.total_usd) == repr(expected.total_usd)
    # each call's fields as a writer reads them (every column as it is where every call
    # recorded usage, else through the slots): the reference's, types included
    _total, per_call, other_calls = session_cost_rows(session)
    for rows, reference in ((per_call, expected.per_call), (other_calls, expected.other_calls)):
        assert repr(rows) == repr([dict(want) for want in reference])
    assert cost.compactions == _reference_compactions(session)
    assert cost.compactions_usd == sum(
        (c.summary_call_usd or 0.0) + (c.cache_rebuild_usd or 0.0) for c in cost.compactions
    )
    # built from typed values without validation: the model validation makes of the same fields
    # (every field, in the model's order, each dollar figure a float, zeros included)
    for built in (cost, *cost.compactions):
        validated = type(built).model_validate(built.__dict__)
        assert repr(built) == repr(validated)
        assert list(built.__dict__) == list(type(built).model_fields)
        assert built.model_dump_json() == validated.model_dump_json()
    lean = session_cost(session, each_call=False)
    assert lean == cost.model_copy(update={"per_call": [], "other_calls": []})
    # the totals added up run by run (no column kept) are the very floats, zeros' types included
    for name in ("total_usd", "input_usd", "cache_read_usd", "cache_write_usd", "output_usd"):
        assert repr(getattr(lean, name)) == repr(getattr(cost, name)), name


_MODELS = ("claude-sonnet-4-5", "gpt-5", "claude-opus-4-1", "no-such-model-xyz", None)
_COUNTS = (
    st.integers(min_value=0, max_value=400_000)
    | st.integers(min_value=-3, max_value=3)
    | st.integers(min_value=0, max_value=10**24)
)
_STAMPS = st.sampled_from(
    (
        "2026-03-01T10:00:00.000Z",
        "2026-03-02T10:00:00+00:00",
        "2026-03-01T23:30:00-05:00",
        "2025-01-01T00:00:00Z",
        "not a time",
        "",
        None,
    )
)
_ANY_STAMP = (
    _STAMPS
    | st.sampled_from(
        (
            "2026-Z",
            "2026-03-1Z",
            "2026-03-01Z",
            "20260-03-01T00:00:00Z",
            "2026/03/01T00:00:00Z",
            "2026-02-30T10:00:00Z",
            "2026-03-01T10:00:00+00:00",
            "2026-03-01T10:00:00+01:00",
        )
    )
    | st.text(alphabet="0123456789-TZ:+", max_size=26)
)
_CALL = st.tuples(
    st.sampled_from(_MODELS),
    st.tuples(_COUNTS, _COUNTS, _COUNTS, _COUNTS, _COUNTS),
    st.sampled_from(list(UsageConvention)),
    st.booleans(),  # usage recorded
    st.booleans(),  # a sub-agent's call (outside the numbering)
    _ANY_STAMP,
    st.booleans(),  # a compaction recorded after it
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_CALL, min_size=0, max_size=14),
    st.sampled_from(("anthropic", "openai", None)),
    st.sampled_from((None, "claude-sonnet-4-5")),
)
def test_columns_price_every_call_as_call_by_call(
    calls: list[
        tuple[
            str | None,
            tuple[int, int, int, int, int],
            UsageConvention,
            bool,
            bool,
            str | None,
            bool,
        ]
    ],
    provider: str | None,
    default: str | None,
) -> None:
    builder = SessionBuilder().user("go")
    for model, counts, convention, recorded, side, stamp, compact in calls:
        uncached, read, write, out, reasoning = counts
        usage = Usage(
            input=uncached,
            cache_read=read,
            cache_write=write,
            output=out,
            reasoning=reasoning,
            convention=convention,
        )
        builder.model = model
        builder.reply("ok", usage=usage if recorded else None, sidechain=side, timestamp=stamp)
        if compact:
            builder.compaction()
    _same(builder.session(model=default, provider=provider))


def test_a_long_run_of_one_rate_with_one_odd_call_is_priced_call_by_call() -> None:
    """A run of one rate where one call is beyond 28 digits (or negative) is priced the decimal
    way, every call of it still its own price."""
    for odd in (10**27, -1):
        builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
        for n in range(40):
            uncached = odd if n == 17 else 1_000 + n
            builder.reply("ok", usage=Usage(input=uncached, cache_read=n * 997, output=n))
        _same(builder.session(model=None, provider="anthropic"))


@pytest.mark.parametrize(
    "path", small_shared_files() or [None], ids=lambda p: p.name if p else "none"
)
def test_columns_price_every_sample_as_call_by_call(path: Path | None) -> None:
    session = load_shared_or_skip(path)
    _same(session)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=30))
def test_slots_number_the_flagged_entries(flags: list[bool]) -> None:
    """Each flagged entry's slot is its number among the flagged ones, the others -1."""
    expected: list[int] = []
    count = 0
    for flag in flags:
        expected.append(count if flag else -1)
        count += flag
    assert list(_slots(flags)) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from(["d1", "d2"])), max_size=20
    )
)
def test_stretches_start_where_the_model_or_the_day_changes(
    keys: list[tuple[str | None, str]],
) -> None:
    """The stretches of one model and day start at 0 and wherever either differs from the call
    before, and end at the last call: the same starts whether a column holds one value (counted,
    not compared) or several."""
    models = [model for model, _day in keys]
    days = [day for _model, day in keys]
    expected = [0, *(n for n in range(1, len(keys)) if keys[n] != keys[n - 1]), len(keys)]
    assert _changes((models, days), len(keys)) == expected
    assert _changes((models,), len(keys)) == [
        0,
        *(n for n in range(1, len(keys)) if models[n] != models[n - 1]),
        len(keys),
    ]


@pytest.mark.parametrize("lone", [None, 0, 29])
@pytest.mark.parametrize("zero", range(4))
@pytest.mark.parametrize("model", ["gpt-5", "claude-sonnet-4-5"])
def test_a_run_without_one_kind_of_token_is_priced_call_by_call(
    lone: int | None, zero: int, model: str
) -> None:
    """A run where one kind of token is never billed (Codex's cache writes), or only by its
    first or last call, prices that figure 0.0 per call where it is 0 and leaves it out of the
    whole, to the same floats as call by call."""
    builder = SessionBuilder(model=model).user("go")
    for n in range(30):
        counts = [1_000 + 7 * n, 997 * n + 3, 13 * n + 1, 50 + n]
        counts[zero] = 5 if n == lone else 0
        uncached, read, write, out = counts
        builder.reply(
            "ok", usage=Usage(input=uncached, cache_read=read, cache_write=write, output=out)
        )
    _same(builder.session(model=None, provider="openai" if model == "gpt-5" else "anthropic"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ANY_STAMP, max_size=12), st.booleans())
def test_days_are_each_stamps_day_of(stamps: list[str | None], all_utc: bool) -> None:
    """Every timestamp's day cut in C where each one is a plain UTC stamp, else stamp by stamp:
    each the day :func:`day_of` gives it, one string object per day."""
    if all_utc:
        stamps = [f"2026-03-0{1 + len(stamp or '') % 3}T10:00:00Z" for stamp in stamps]
    days = days_of(stamps)
    assert days == [day_of(stamp) for stamp in stamps]
    assert len({id(day) for day in days if day is not None}) == len(set(days) - {None})


@pytest.mark.parametrize("side", [False, True])
def test_entries_when_every_assistant_message_is_a_call(side: bool) -> None:
    """The picked calls, their numbering and the main and other entries are those of the
    message-by-message rule (an assistant message that is a call or records usage), whether
    every assistant message is a call (read in C) or a side chain's is not."""
    from core.insights.cost import _PricedCalls

    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for n in range(6):
        builder.reply("ok", usage=Usage(input=100 + n, output=5), sidechain=side and n == 2)
    session = builder.session(provider="anthropic")
    call_of = RecordedWalk(session).calls.call_of
    calls = _PricedCalls(session, call_of)
    picked = [
        m
        for m in session.messages
        if m.role is Role.ASSISTANT and (call_of[m.index] >= 0 or m.usage is not None)
    ]
    assert calls.picked == picked
    numbering = [call_of[m.index] for m in picked]
    assert list(calls.main) == [k for k, call in enumerate(numbering) if call >= 0]
    assert list(calls.other) == [k for k, call in enumerate(numbering) if call < 0]
    assert [calls.call_index(k) for k in range(len(picked))] == [
        call if call >= 0 else None for call in numbering
    ]
    assert len(calls.other) == side


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), max_size=12))
def test_call_count_is_the_calls_call_of_numbers(shape: list[tuple[bool, bool, bool]]) -> None:
    """``_call_count`` (read from the last call back) is the number of calls ``call_of``
    numbers, whatever messages follow the last call (side chains, results, summaries)."""
    from core.insights.cost import _call_count

    builder = SessionBuilder().user("go")
    for reply, side, result in shape:
        if reply:
            builder.reply("ok", sidechain=side)
        else:
            builder.call(sidechain=side)
        if result:
            builder.user("more")
    call_of = RecordedWalk(builder.session()).calls.call_of
    assert _call_count(call_of) == len(call_of) - call_of.count(-1)
