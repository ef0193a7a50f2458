"""The price table's answers are kept on disk, so a later run prices without importing it."""

from __future__ import annotations

import json
import os
import re
import stat
from decimal import Decimal
from pathlib import Path

import pytest
from genai_prices.types import Tier, TieredPrices, calc_unit_price
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights import prices
from tests.support.paths import REPO
from tests.support.processes import run_python

PRICE_THREE = """
import sys
from datetime import datetime, timezone
from core.insights.prices import UnknownPrice, rates
at = datetime(2026, 3, 1, tzinfo=timezone.utc)
out = []
for model, provider, prompt in [
    ("claude-sonnet-4-5-20250929", "anthropic", 1_000),
    ("claude-sonnet-4-5-20250929", "anthropic", 250_000),
    ("gpt-5-codex", "openai-codex", 1_000),
    ("no-such-model-anywhere", None, 1_000),
]:
    try:
        r = rates(model, provider, at, prompt)
        out.append([str(r.input), str(r.cache_read), str(r.cache_write), str(r.output),
                    r.model_id, r.provider_id, r.note])
    except UnknownPrice as exc:
        out.append(str(exc))
print(repr(out))
print("genai_prices" in sys.modules)
"""

ROOT = REPO


def _run(cache: Path) -> tuple[str, bool]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    answers, imported = run_python(PRICE_THREE, env=env, cwd=ROOT).strip().splitlines()
    return answers, imported == "True"


def test_a_second_run_prices_from_the_memo_without_the_table(tmp_path: Path) -> None:
    first, first_imported = _run(tmp_path)
    memo = tmp_path / "ctxscope" / "prices.json"
    assert first_imported and memo.is_file()
    assert stat.S_IMODE(memo.stat().st_mode) == 0o600
    second, second_imported = _run(tmp_path)
    assert not second_imported
    assert second == first
    assert "no-such-model-anywhere is not in the price table" in second  # reasons kept too


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"table": 1}', b""])
def test_a_damaged_memo_is_started_afresh(tmp_path: Path, content: bytes) -> None:
    clean, _ = _run(tmp_path / "clean")
    memo = tmp_path / "bad" / "ctxscope" / "prices.json"
    memo.parent.mkdir(parents=True)
    memo.write_bytes(content)
    answers, imported = _run(tmp_path / "bad")
    assert imported and answers == clean
    assert json.loads(memo.read_text())["entries"]  # rewritten


def test_a_memo_of_another_table_is_not_used(tmp_path: Path) -> None:
    clean, _ = _run(tmp_path)
    memo = tmp_path / "ctxscope" / "prices.json"
    data = json.loads(memo.read_text())
    data["table"] = "an older genai-prices"
    for key in data["entries"]:
        if isinstance(data["entries"][key], dict):
            data["entries"][key]["input"] = ["999", []]
    memo.write_text(json.dumps(data))
    answers, imported = _run(tmp_path)
    assert imported and answers == clean


def test_two_runs_saving_at_once_keep_each_others_entries() -> None:
    """Two runs read the memo before either saved (two fleet workers): the second to save keeps
    what the first wrote, so the next run prices both models without the table."""
    first, second = prices._Memo(), prices._Memo()
    first._load(), second._load()  # both read the memo while it is empty
    first.entry("claude-sonnet-4-5", None, None)
    second.entry("gpt-5-codex", "openai", None)
    saved = json.loads(prices._memo_path().read_text())["entries"]
    assert {key.split("\x1f")[0] for key in saved} == {"claude-sonnet-4-5", "gpt-5-codex"}
    assert set(prices._Memo()._load()) == set(saved)


def test_memo_entries_are_decoded_as_they_are_asked_for() -> None:
    """The memo holds an entry per model, provider and day priced on this machine; a run
    decodes only those it prices. One it never asks for is neither decoded nor dropped (even one
    it could not decode), and a save writes it back as the file held it."""
    priced = prices._Memo().entry("claude-sonnet-4-5", None, None)
    path = prices._memo_path()
    data = json.loads(path.read_text())
    other = {"not": "an entry"}
    data["entries"]["other-model\x1f\x1f"] = other
    path.write_text(json.dumps(data))
    memo = prices._Memo()
    assert memo.entry("claude-sonnet-4-5", None, None) == priced
    assert memo._load()["other-model\x1f\x1f"] == other  # never decoded
    memo.entry("gpt-5-codex", "openai", None)  # a new entry: the memo is saved
    saved = json.loads(path.read_text())["entries"]
    assert saved["other-model\x1f\x1f"] == other
    assert prices._Memo().entry("claude-sonnet-4-5", None, None) == priced


def test_a_memo_entry_it_cannot_decode_is_asked_of_the_table_again() -> None:
    priced = prices._Memo().entry("claude-sonnet-4-5", None, None)
    path = prices._memo_path()
    data = json.loads(path.read_text())
    [key] = data["entries"]
    data["entries"][key] = {"input": "not a price"}
    path.write_text(json.dumps(data))
    assert prices._Memo().entry("claude-sonnet-4-5", None, None) == priced
    assert json.loads(path.read_text())["entries"][key] != {"input": "not a price"}  # replaced


@pytest.mark.parametrize("prompt", [0, 199_999, 200_000, 200_001, 1_500_000])
def test_tiers_apply_as_the_table_applies_them(prompt: int) -> None:
    table = TieredPrices(
        base=Decimal("3"),
        tiers=[Tier(start=200_000, price=Decimal("6")), Tier(1_000_000, Decimal("9"))],
    )
    ours = prices._per_token(prices._from_table(table), prompt)
    assert ours == calc_unit_price(table, 1, prompt, 1_000_000)


_PROMPTS = st.lists(
    st.sampled_from((0, 1, 199_999, 200_000, 200_001, 400_000))
    | st.integers(min_value=0, max_value=1_200_000),
    max_size=30,
)


@settings(max_examples=120, deadline=None)
@given(
    _PROMPTS,
    st.sampled_from(("claude-sonnet-4-5", "gpt-5", "claude-opus-4-1", "no-such-model-xyz", "")),
    st.sampled_from(("2026-03-01", "2025-01-01", None)),
)
def test_rate_runs_are_the_runs_of_each_prompts_rates(
    prompts: list[int], model: str, day: str | None
) -> None:
    """rate_runs cuts a stretch where the rates of rates_on change object (a tier crossed),
    and each run carries that very object. stretch_rates of the largest prompt is that object
    where no tier starts below it (the stretch is one run, its prompts not read), else None;
    both raise rates_on's UnknownPrice."""
    largest = max(prompts, default=0)  # (no prompt: no lookup, nor a stretch to price)
    try:
        each = [prices.rates_on(model, "anthropic", day, prompt) for prompt in prompts]
    except prices.UnknownPrice as exc:
        with pytest.raises(prices.UnknownPrice, match=re.escape(str(exc))):
            prices.rate_runs(model, "anthropic", day, prompts)
        with pytest.raises(prices.UnknownPrice, match=re.escape(str(exc))):
            prices.stretch_rates(model, "anthropic", day, largest)
        return
    if prompts:
        one = prices.stretch_rates(model, "anthropic", day, largest)
        entry = prices._ENTRIES[(model, "anthropic", day)]
        assert not isinstance(entry, str)
        assert (one is None) == any(start < largest for start in entry.starts)
        assert one is None or all(found is one for found in each)
    runs = prices.rate_runs(model, "anthropic", day, prompts)
    expected: list[tuple[int, int, prices.Rates]] = []
    for n, found in enumerate(each):
        if expected and expected[-1][2] is found:
            expected[-1] = (expected[-1][0], n + 1, found)
        else:
            expected.append((n, n + 1, found))
    assert len(runs) == len(expected)
    for (lo, hi, found), (want_lo, want_hi, want) in zip(runs, expected, strict=True):
        assert (lo, hi) == (want_lo, want_hi)
        assert found is want
