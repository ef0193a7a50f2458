"""What :func:`core.insights.cost.session_cost` holds while it prices a session: its token
columns are arrays of 64-bit integers and each run's products are made as they are read, so a
session's totals take a few dozen bytes a call above the session itself (a 100 MB session:
~5 MB, where per-call lists of new integers took ~20 MB at ``analyze --json``'s peak)."""

from __future__ import annotations

import tracemalloc
from array import array

from core.insights.context_walk import RecordedWalk
from core.insights.cost import _PricedCalls, session_cost
from core.insights.prices import rate_runs
from core.model.session import Session, Usage, UsageConvention
from tests.support.builders import SessionBuilder, timestamp

CALLS = 3_000


def _session() -> Session:
    """A session of CALLS priced calls, every count its own integer (none of Python's cached
    small ones), over two days."""
    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for n in range(CALLS):
        usage = Usage(
            input=1_000 + n, cache_read=50_000 + 7 * n, cache_write=2_000 + 3 * n, output=500 + n
        )
        builder.reply("ok", usage=usage, timestamp=timestamp(n * 60))
    return builder.session(provider="anthropic")


def _peak_above(session: Session) -> int:
    """The most ``session_cost(session, each_call=False)`` holds at once, in bytes."""
    session_cost(session, each_call=False)  # (price table and placement looked up once)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        session_cost(session, each_call=False)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_the_totals_hold_a_few_dozen_bytes_a_call() -> None:
    """Per-call lists of new integers (the four token columns, each figure's products, their
    sum, the prompts) took ~280 bytes a call here; arrays and products made as read take ~120."""
    peak = _peak_above(_session())
    assert peak < 150 * CALLS, f"{peak / CALLS:.0f} bytes a call"


def test_token_columns_hold_the_usages_own_integers() -> None:
    """Issue 24: the token columns point at each usage's own integers (a pointer a call, as an
    array's 8 bytes, with no integer converted at each write and made again at each read); a
    count beyond 64 bits is held as it is, and opencode's output (its reasoning added) is a
    column of its own sums."""
    session = _session()
    calls = _PricedCalls(session, RecordedWalk(session).calls.call_of)
    usages = [m.usage for m in calls.picked]
    for column, name in zip(
        calls.counts, ("input", "cache_read", "cache_write", "output"), strict=True
    ):
        assert all(held is getattr(u, name) for held, u in zip(column, usages, strict=True))
    big = SessionBuilder(model="claude-sonnet-4-5").user("go")
    big.reply("ok", usage=Usage(input=10**20, output=1))
    huge = big.session(provider="anthropic")
    counts = _PricedCalls(huge, RecordedWalk(huge).calls.call_of).counts
    assert counts[0] == [10**20]
    summed = SessionBuilder(model="claude-sonnet-4-5", convention=UsageConvention.OPENCODE).user(
        "go"
    )
    summed.reply("ok", usage=Usage(output=500, reasoning=70, convention=UsageConvention.OPENCODE))
    opencode = summed.session(provider="anthropic")
    assert list(_PricedCalls(opencode, RecordedWalk(opencode).calls.call_of).counts[3]) == [570]


def test_rate_runs_hold_a_few_bytes_a_prompt() -> None:
    """The tiers of a tiered model's prompts are an array compared with its own neighbours:
    8 bytes a prompt (a list and its two shifted copies took 24)."""
    prompts = array("q", [150_000 + 1_000 * (n % 100) for n in range(20_000)])  # (crossing 200k)
    runs = rate_runs("claude-sonnet-4-5", "anthropic", "2026-03-01", prompts)
    assert len(runs) > 1  # (a tiered model: its tiers were compared)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        rate_runs("claude-sonnet-4-5", "anthropic", "2026-03-01", prompts)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 12 * len(prompts), f"{peak / len(prompts):.1f} bytes a prompt"
