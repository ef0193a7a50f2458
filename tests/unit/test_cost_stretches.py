"""Issue 24: a session's cost priced stretch by stretch does no per-call work it can leave out,
to the same figures — a stretch whose prompts all sit below its model's first tier start is one
run, its prompts never made (:func:`core.insights.prices.stretch_rates`, tested with
:func:`~core.insights.prices.rate_runs` in test_prices.py); each call's products
are made once, for its figure and its whole, a few hundred calls at a time
(:mod:`core.insights.cost_arithmetic`); the days of stamps of one day or in order are cut once a
day (:func:`core.insights.prices.days_of`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights import cost, prices
from core.insights.cost_arithmetic import CHUNK, chunks, products_of, whole_products, wholes
from core.model.session import Session, Usage
from tests.support.builders import SessionBuilder, timestamp
from tests.unit.test_cost_columns import _ANY_STAMP, _same


def _session(reads: list[int], model: str = "claude-sonnet-4-5") -> Session:
    builder = SessionBuilder(model=model).user("go")
    for n, read in enumerate(reads):
        usage = Usage(input=100 + n, cache_read=read, cache_write=7 * n, output=30 + n)
        builder.reply("ok", usage=usage, timestamp=timestamp(n * 600))
    return builder.session(provider="anthropic")


def test_prompts_below_the_first_tier_are_not_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiered model's stretch whose prompts stay below its first tier start (Claude's 200k)
    is priced without its prompts (rate_runs is not called), to the figures of call by call;
    one that crosses it is cut by rate_runs."""
    below = _session([1_000 * n for n in range(40)])
    crossing = _session([150_000 + 5_000 * n for n in range(40)])
    _same(below)
    _same(crossing)
    made: list[int] = []

    def spy(
        model: str | None, provider: str | None, day: str | None, prompts: Sequence[int]
    ) -> list[tuple[int, int, prices.Rates]]:
        made.append(len(prompts))
        return prices.rate_runs(model, provider, day, prompts)

    monkeypatch.setattr(cost, "rate_runs", spy)
    cost.session_cost(below, each_call=False)
    assert made == []
    cost.session_cost(crossing, each_call=False)
    assert made == [40]


def test_more_calls_than_a_chunk_are_priced_as_call_by_call() -> None:
    """A run of more calls than :data:`CHUNK` (its products made a chunk at a time, the sums
    carried from one to the next) prices every call, and adds up the totals, as call by call;
    so does a run where one kind of token is never billed."""
    count = 2 * CHUNK + 37
    _same(_session([3_000 + 11 * n for n in range(count)]))
    builder = SessionBuilder(model="gpt-5").user("go")
    for n in range(count):
        builder.reply("ok", usage=Usage(input=500 + n, cache_read=9 * n, output=40 + n % 7))
    _same(builder.session(provider="openai"))


@pytest.mark.parametrize("count", [0, 1, 5, 8, 9, 16, 17, 40])
def test_chunks_cover_every_call_once_in_order(count: int) -> None:
    parts = list(chunks(count, 8))
    assert [n for part in parts for n in range(count)[part]] == list(range(count))
    assert all(0 < part.stop - part.start <= 8 for part in parts)


@given(st.lists(st.tuples(*[st.integers(min_value=0, max_value=10**12)] * 4), max_size=20))
def test_wholes_are_each_calls_products_added_up(counts: list[tuple[int, int, int, int]]) -> None:
    """The whole of each call from its products made once (a factor left out as None) is
    :func:`whole_products`' whole, each call's products added up."""
    rates = (3, 0, 375, 15)
    columns = [[row[kind] for row in counts] for kind in range(4)]
    factors = [
        (rate, column) if rate and any(column) else None
        for rate, column in zip(rates, columns, strict=True)
    ]
    made: list[tuple[int, Sequence[int]]] = [factor for factor in factors if factor is not None]
    if not made:
        return
    products = products_of(factors, slice(0, len(counts)))
    assert products[1] is None
    expected = [sum(map(int.__mul__, rates, row)) for row in counts]
    assert list(wholes(products)) == expected == list(whole_products(made))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ANY_STAMP, max_size=12), st.booleans())
def test_days_of_stamps_in_order_or_of_one_day(stamps: list[str | None], one_day: bool) -> None:
    """Stamps in order (as a session records them), or all of one day, are cut once a day: each
    the day :func:`day_of` gives it, one string object per day."""
    if one_day:
        stamps = [f"2026-03-01T{n % 24:02}:00:00Z" for n in reversed(range(len(stamps)))]
    else:
        stamps.sort(key=lambda stamp: (stamp is None, stamp or ""))
    days = prices.days_of(stamps)
    assert days == [prices.day_of(stamp) for stamp in stamps]
    assert len({id(day) for day in days if day is not None}) == len(set(days) - {None})
