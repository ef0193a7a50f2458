"""The model table: spelling variants resolve to the right row, unknown models stay unknown."""

from __future__ import annotations

import pytest

from core.agents.windows import (
    MODEL_TABLE,
    ONE_MILLION,
    lookup_limits,
    lookup_max_output,
    lookup_window,
    normalize_model_id,
)


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-opus-4-5", 200_000),
        ("claude-opus-4-5-20251101", 200_000),
        ("claude-3-opus-20240229", 200_000),
        ("claude-3-5-sonnet-latest", 200_000),
        ("anthropic/claude-3.7-sonnet", 200_000),
        ("claude-sonnet-4.5", 200_000),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000),
        ("claude-sonnet-4-5@20250929", 200_000),
        ("claude-sonnet-4-5[1m]", ONE_MILLION),
        ("claude-sonnet-4-20250514[1m]", ONE_MILLION),
        ("gpt-4o", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("openai/gpt-4.1", 1_047_576),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-5", 272_000),
        ("gpt-5.3-codex", 272_000),
        ("gpt-5-codex", 272_000),
        ("o3", 200_000),
        ("o3-mini", 200_000),
        ("o4-mini-2025-04-16", 200_000),
        ("o1-mini", 128_000),
        ("gemini-2.5-pro", 1_048_576),
        ("google/gemini-2.5-flash-preview-05-20", 1_048_576),
    ],
)
def test_known_models(model: str, window: int) -> None:
    size, source = lookup_window(model)
    assert size == window
    assert source != "unknown" and source


@pytest.mark.parametrize("model", [None, "", "my-local-llama", "gpt-40", "o30", "claude"])
def test_unknown_models(model: str | None) -> None:
    assert lookup_window(model) == (None, "unknown")
    assert lookup_max_output(model) is None


def test_1m_only_for_models_that_offer_it() -> None:
    # A [1m] marker on a model without a 1M variant keeps the model's own window.
    assert lookup_window("claude-3-5-haiku[1m]")[0] == 200_000
    assert "1M" in lookup_window("claude-opus-4-6[1m]")[1]


def test_longest_prefix_wins() -> None:
    row, _ = lookup_limits("claude-opus-4-1-20250805")
    assert row is not None and row.prefix == "claude-opus-4-1"
    row, _ = lookup_limits("gpt-4-turbo-2024-04-09")
    assert row is not None and row.prefix == "gpt-4-turbo"
    assert lookup_window("gpt-4-0613")[0] == 8_192


def test_max_output() -> None:
    assert lookup_max_output("claude-sonnet-4-5-20250929") == 64_000
    assert lookup_max_output("gpt-4o") == 16_384


def test_table_rows_are_sane() -> None:
    keys = [(row.prefix, row.provider, row.agent, row.since, row.until) for row in MODEL_TABLE]
    assert len(keys) == len(set(keys))
    for row in MODEL_TABLE:
        assert row.context_window > 0 and row.source
        assert normalize_model_id(row.prefix)[0] == row.prefix
        if row.max_output_tokens is not None:
            assert 0 < row.max_output_tokens <= row.context_window
        if row.input_limit is not None:
            assert 0 < row.input_limit <= row.context_window
        if row.larger_window is not None:
            assert row.larger_window > row.context_window


@pytest.mark.parametrize(
    ("model", "provider", "agent", "window"),
    [
        ("gpt-5.5", "openai", "codex", 272_000),  # Codex's catalog
        ("gpt-5.5", "openai", "opencode", 1_050_000),  # models.dev, as opencode reads it
        ("gpt-5.5", "openai-codex", "pi", 272_000),  # a ChatGPT subscription in pi
        ("gpt-5.5", "github-copilot", "opencode", 400_000),
        ("claude-opus-5", "anthropic", "claude-code", 200_000),  # Claude Code's default
        ("claude-opus-5", "anthropic", "opencode", 1_000_000),
        ("claude-opus-5", "github-copilot", "opencode", 264_000),
        ("claude-opus-4-6", "Copilot", None, 1_000_000),  # provider aliases resolve
        ("big-pickle", "opencode", "opencode", 200_000),  # the snapshot opencode ships
        ("big-pickle", "anthropic", "opencode", None),  # only OpenCode Zen serves it
    ],
)
def test_the_window_depends_on_provider_and_agent(
    model: str, provider: str, agent: str | None, window: int | None
) -> None:
    assert lookup_window(model, provider, agent)[0] == window


def test_a_provider_row_brings_its_input_limit() -> None:
    row, _ = lookup_limits("gpt-5.6-luna", "openai", "opencode")
    assert row is not None and row.input_limit == 922_000
    row, _ = lookup_limits("claude-opus-4-6", "github-copilot", "opencode")
    assert row is not None and row.input_limit == 128_000


@pytest.mark.parametrize(
    ("version", "input_limit", "max_output"),
    [
        ("1.15.4", None, 128_000),  # its shipped models.dev snapshot lists no input limit
        ("1.15.13", 160_000, 32_000),  # the first release on npm whose snapshot does
        ("1.18.10", 160_000, 32_000),
        (None, 160_000, 32_000),  # no version: the current catalogue
        ("not a version", 160_000, 32_000),
    ],
)
def test_a_catalogue_row_holds_for_the_agent_versions_that_shipped_it(
    version: str | None, input_limit: int | None, max_output: int
) -> None:
    row, _ = lookup_limits("big-pickle", "opencode", "opencode", version)
    assert row is not None
    assert (row.input_limit, row.max_output_tokens) == (input_limit, max_output)
