"""Costs (core.insights.cost, core.insights.prices): each usage convention priced as a hand calculation from the
price table says, on the real sessions of ../shared/samples (Claude cache writes and reads, OpenAI
cached input and reasoning, opencode's reasoning billed apart); unknown models are unknown, never
0; a compaction's summary call and the cache it invalidated; the dollar formatter."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices.types import TieredPrices
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import load_session
from core.insights.cost import (
    CallCost,
    SessionCost,
    compaction_cost_label,
    cost_label,
    format_usd,
    price_message,
    session_cost,
)
from core.insights.prices import list_price
from core.model.session import Message, Session, Usage, UsageConvention
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO

SAMPLES = REPO.parent / "shared" / "samples"
CLAUDE = SAMPLES / "claude-code" / "claude-2.1.226_auto-2x_flutter-docker-image_K1.jsonl"
CODEX = SAMPLES / "codex" / "codex-desktop-0.142.5_gpt-5.5_auto-midturn-2x_mise_4812ee462d.jsonl"
OPENCODE = SAMPLES / "opencode" / "opencode-1.18.9_openai-gpt-5.6-luna_auto-overflow_shui_12.json"
BIG_PICKLE = SAMPLES / "opencode" / "opencode-1.18.10_big-pickle_auto+manual_learn-p5_WB.json"
MTOK = Decimal(1_000_000)


def _sample(path: Path) -> Session:
    if not path.exists():
        pytest.skip("shared samples are not available")
    return load_session(path)


def _base(price: Decimal | TieredPrices | None) -> Decimal:
    """A per-MTok price below the first tier (the calls here stay under it)."""
    assert price is not None
    return price.base if isinstance(price, TieredPrices) else price


def _hand(model: str, provider: str, uncached: int, read: int, write: int, out: int) -> float:
    price = list_price(model, provider)
    total = (
        uncached * _base(price.input_mtok)
        + read * _base(price.cache_read_mtok or price.input_mtok)
        + write * _base(price.cache_write_mtok or price.input_mtok)
        + out * _base(price.output_mtok)
    )
    return float(total / MTOK)


def _calls(session: Session) -> list[tuple[CallCost, Usage]]:
    cost = session_cost(session)
    return [
        (c, usage)
        for c in cost.per_call
        if (usage := session.messages[c.message_index].usage) is not None
    ]


def test_claude_cache_writes_and_reads_match_a_hand_calculation() -> None:
    session = _sample(CLAUDE)
    chosen = [(c, u) for c, u in _calls(session) if u.cache_write and u.cache_read]
    assert chosen
    for cost, usage in chosen:
        hand = _hand(
            "claude-opus-5",
            "anthropic",
            usage.input,
            usage.cache_read,
            usage.cache_write,
            usage.output,
        )
        assert cost.total_usd == pytest.approx(hand, rel=1e-9)
        assert cost.cache_write_tokens == usage.cache_write
        assert cost.cache_read_tokens == usage.cache_read


def test_openai_cached_input_and_reasoning_match_a_hand_calculation() -> None:
    session = _sample(CODEX)
    chosen = [(c, u) for c, u in _calls(session) if u.cache_read and u.reasoning]
    assert chosen
    for cost, usage in chosen:
        assert usage.convention is UsageConvention.OPENAI
        # Reasoning is part of OpenAI's output tokens: billed once, as output.
        assert cost.output_tokens == usage.output
        hand = _hand("gpt-5.5", "openai", usage.input, usage.cache_read, 0, usage.output)
        assert cost.total_usd == pytest.approx(hand, rel=1e-9)


def test_opencode_reasoning_is_billed_as_output_on_top_of_it() -> None:
    session = _sample(OPENCODE)
    chosen = [(c, u) for c, u in _calls(session) if u.reasoning]
    assert chosen
    for cost, usage in chosen:
        assert cost.output_tokens == usage.output + usage.reasoning
        hand = _hand(
            "gpt-5.6-luna",
            "openai",
            usage.input,
            usage.cache_read,
            usage.cache_write,
            usage.output + usage.reasoning,
        )
        assert cost.total_usd == pytest.approx(hand, rel=1e-9)


def test_the_session_total_is_the_sum_of_its_calls() -> None:
    session = _sample(CLAUDE)
    cost = session_cost(session)
    assert cost.unpriced_calls == 0
    assert cost.total_usd == pytest.approx(
        sum(c.total_usd or 0 for c in cost.per_call + cost.other_calls)
    )
    assert cost.total_usd == pytest.approx(
        cost.input_usd + cost.cache_read_usd + cost.cache_write_usd + cost.output_usd
    )
    assert cost.cache_saved_usd > 0


def test_a_model_the_table_does_not_know_is_priced_as_unknown() -> None:
    session = _sample(BIG_PICKLE)
    cost = session_cost(session)
    assert cost.total_usd is None and cost.priced_calls == 0
    assert cost.unknown_models == ["big-pickle"]
    assert all(c.total_usd is None and c.unknown_reason for c in cost.per_call)
    assert cost_label(cost) == "?"


def test_unknown_models_are_never_zero_on_built_sessions() -> None:
    session = (
        SessionBuilder(model="no-such-model-9")
        .user("hi")
        .reply("a", context=1_000)
        .session(model="no-such-model-9", provider="anthropic")
    )
    cost = session_cost(session)
    (call,) = cost.per_call
    assert call.total_usd is None and "no-such-model-9" in (call.unknown_reason or "")
    assert cost.total_usd is None
    known = (
        SessionBuilder(model="claude-opus-4-5")
        .user("hi")
        .reply("a", context=1_000)
        .reply("b", context=1_000, model="mystery")
        .session(model="claude-opus-4-5", provider="anthropic")
    )
    partial = session_cost(known)
    assert partial.unpriced_calls == 1 and partial.total_usd is not None
    assert cost_label(partial).startswith("≥$")


def test_a_compaction_costs_its_summary_call_and_the_cache_it_invalidated() -> None:
    session = _sample(OPENCODE)
    (compaction,) = session_cost(session).compactions
    assert compaction.summary_call_usd is not None and compaction.summary_call_usd > 0
    assert compaction.cache_read_before and compaction.cache_read_after is not None
    assert compaction.cache_invalidated_tokens == (
        compaction.cache_read_before - compaction.cache_read_after
    )
    assert compaction.cache_rebuild_usd is not None
    assert "summary call $" in compaction_cost_label(compaction)
    assert "cache lost" in compaction_cost_label(compaction)


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "?"), (0.0, "$0"), (0.00421, "$0.0042"), (3.174, "$3.17"), (1204.4, "$1,204")],
)
def test_dollar_figures_fit_a_status_bar(value: float | None, text: str) -> None:
    assert format_usd(value) == text


_MODELS = ("claude-sonnet-4-5", "gpt-5", "claude-opus-4-1", "no-such-model-xyz", None)
_COUNTS = st.integers(min_value=0, max_value=400_000) | st.integers(min_value=0, max_value=10**24)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_MODELS), _COUNTS, _COUNTS, _COUNTS, _COUNTS, st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_priced_as_columns_each_call_is_the_price_of_its_own(
    calls: list[tuple[str | None, int, int, int, int, bool]],
) -> None:
    """Stretches of one model (tiers crossed inside them, unknown models, counts beyond the
    decimal context's 28 digits) cost call by call exactly what :func:`price_message` says,
    and the session's figures are those calls added up in order."""
    builder = SessionBuilder().user("go")
    for model, uncached, read, write, out, recorded in calls:
        usage = Usage(input=uncached, cache_read=read, cache_write=write, output=out)
        builder.model = model
        builder.reply("ok", usage=usage if recorded else None)
    session = builder.session(model=None)
    cost = session_cost(session)
    expected = [price_message(m, c.call_index, session)[0] for m, c in _assistant(session, cost)]
    assert cost.per_call == expected
    priced = [c for c in expected if c.total_usd is not None]
    assert cost.total_usd == (sum(c.total_usd or 0.0 for c in priced) if priced else None)
    assert cost.input_usd == sum(c.input_usd or 0.0 for c in priced)
    assert cost.output_usd == sum(c.output_usd or 0.0 for c in priced)
    assert cost.priced_calls == len(priced)
    lean = session_cost(session, each_call=False)  # (the totals alone: analyze, the TUI)
    assert lean == cost.model_copy(update={"per_call": [], "other_calls": []})


_CONVENTIONS = st.sampled_from(list(UsageConvention))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(_COUNTS, _COUNTS, _COUNTS, _COUNTS, _COUNTS, _CONVENTIONS),
        min_size=1,
        max_size=8,
    )
)
def test_one_rate_run_is_priced_as_each_call_alone_in_any_convention(
    calls: list[tuple[int, int, int, int, int, UsageConvention]],
) -> None:
    """A run of one model and rate (every usage convention, reasoning billed as output where
    the convention says so, a call beyond 28 digits anywhere in the run) costs call by call
    what :func:`price_message` says, its cache reads counted once each."""
    builder = SessionBuilder().user("go")
    builder.model = "claude-sonnet-4-5"
    for uncached, read, write, out, reasoning, convention in calls:
        usage = Usage(
            input=uncached,
            cache_read=read,
            cache_write=write,
            output=out,
            reasoning=reasoning,
            convention=convention,
        )
        builder.reply("ok", usage=usage)
    session = builder.session(model=None)
    cost = session_cost(session)
    expected = [price_message(m, c.call_index, session)[0] for m, c in _assistant(session, cost)]
    assert cost.per_call == expected
    assert cost.total_usd == sum(c.total_usd or 0.0 for c in expected)


def _assistant(session: Session, cost: SessionCost) -> list[tuple[Message, CallCost]]:
    return [(session.messages[c.message_index], c) for c in cost.per_call]
