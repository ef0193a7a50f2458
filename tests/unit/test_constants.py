"""The table of agent facts: versions compare as releases, and each lookup finds its row."""

from __future__ import annotations

import pytest

from core.agents.constants import CONSTANTS, UnknownConstant, constant, value
from core.agents.versions import Version, in_range, parse_version


def _v(text: str) -> Version:
    parsed = parse_version(text)
    assert parsed is not None, text
    return parsed


def test_versions_compare_as_releases() -> None:
    assert _v("2.1.9") < _v("2.1.20") < _v("2.1.226")
    assert _v("0.144.0-alpha.4") < _v("0.144.0")
    assert parse_version("1.2+build.5") == parse_version("1.2.0")
    assert parse_version("v0.6.3-nightly") == (0, 6, 3, -1)
    assert parse_version(None) is None
    assert parse_version("next") is None


def test_ranges_are_half_open() -> None:
    assert in_range("2.1.19", None, "2.1.20")
    assert not in_range("2.1.20", None, "2.1.20")
    assert in_range("2.1.20", "2.1.20", None)
    assert in_range(None, None, "2.1.20")  # unknown version: only open lower bounds
    assert not in_range(None, "2.1.20", None)


@pytest.mark.parametrize(
    ("version", "reserve"),
    [
        ("2.0.76", 32_000),
        ("2.1.4", 32_000),
        ("2.1.20", 32_000),  # the cap of 20,000 first ships in 2.1.21 (cli.js of both)
        ("2.1.21", 20_000),
        ("2.1.39", 20_000),
        ("2.1.226", 20_000),
        (None, 20_000),
    ],
)
def test_claude_code_output_reserve_follows_the_version(version: str | None, reserve: int) -> None:
    assert value("claude-code", "output_reserve_tokens", version) == reserve


@pytest.mark.parametrize(
    ("version", "projects"),
    [("2.0.76", False), ("2.1.1", False), ("2.1.2", True), ("2.1.39", True)],
)
def test_claude_code_counts_the_messages_since_the_last_response_from_2_1_2(
    version: str, projects: bool
) -> None:
    from core.policy import preset_for

    rules = preset_for("claude-code", version).compaction
    assert rules.project_after_tool_results is projects


def test_every_fact_names_its_source_and_ranges_do_not_overlap() -> None:
    for row in CONSTANTS:
        assert row.source.strip(), row
    by_name: dict[tuple[str, str], list[tuple[str | None, str | None]]] = {}
    for row in CONSTANTS:
        by_name.setdefault((row.agent, row.name), []).append((row.since, row.until))
    for (agent, name), ranges in by_name.items():
        for probe in ("0.0.1", "1.0.0", "2.1.19", "2.1.20", "9.9.9"):
            hits = [r for r in ranges if in_range(probe, *r)]
            assert len(hits) <= 1, (agent, name, probe, hits)


def test_an_unknown_fact_says_so() -> None:
    with pytest.raises(UnknownConstant):
        constant("codex", "no-such-thing")


AGENT_PRESETS = ("_opencode", "_codex", "_pi", "_claude_code")


def _numbers_in(function: str) -> list[tuple[int, object]]:
    import ast
    import inspect

    import core.policy

    tree = ast.parse(inspect.getsource(core.policy))
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    return [
        (n.lineno, n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, int | float)
        and not isinstance(n.value, bool)
        and n.value != 0  # 0 is "none" (no line limit, no reserve): not a constant of the agent
    ]


@pytest.mark.parametrize("function", AGENT_PRESETS)
def test_an_agent_preset_holds_no_number_of_its_own(function: str) -> None:
    # every constant an agent's preset uses is a row of core/agents/constants.py, with its source
    assert _numbers_in(function) == []


def test_the_presets_read_the_table() -> None:
    from core.policy import get_preset

    assert get_preset("pi").compaction.summary_max_tokens == value("pi", "summary_max_tokens")
    assert get_preset("opencode").pruning.protect_tokens == value(
        "opencode", "prune_protect_tokens"
    )
    assert get_preset("codex").truncation.max_bytes == value("codex", "tool_output_max_bytes")
    claude = get_preset("claude-code")
    assert claude.truncation.max_bytes == value("claude-code", "bash_output_max_chars")


def test_codex_size_estimates_hold_no_constant_of_their_own() -> None:
    import ast
    import inspect

    import core.formats.codex_sizes as sizes

    tree = ast.parse(inspect.getsource(sizes))
    literals = [
        (node.lineno, sub.value)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for sub in ast.walk(node)
        if isinstance(sub, ast.Constant)
        and isinstance(sub.value, int | float)
        and not isinstance(sub.value, bool)
    ]
    assert literals == []
    assert value("codex", "reasoning_overhead_bytes") == sizes.REASONING_OVERHEAD_BYTES
