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
        ("2.1.39", 20_000),
        ("2.1.226", 20_000),
        (None, 20_000),
    ],
)
def test_claude_code_output_reserve_follows_the_version(version: str | None, reserve: int) -> None:
    assert value("claude-code", "output_reserve_tokens", version) == reserve


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
