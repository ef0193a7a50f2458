"""Policies: presets, TOML round trip, field-named validation errors."""

from pathlib import Path

import pytest
from pydantic import BaseModel

from core.model.fastmodel import documented
from core.policy import (
    PRESETS,
    Policy,
    PolicyError,
    SplitPolicy,
    get_preset,
    load_policy,
    resolve_policy,
    save_policy,
)


def test_the_presets() -> None:
    assert set(PRESETS) == {
        "seed",
        "opencode",
        "codex",
        "pi",
        "claude-code",
        "gemini-cli",
        "qwen-code",
        "copilot-cli",
    }


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_round_trips_through_toml(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.toml"
    save_policy(PRESETS[name], path)
    assert load_policy(path) == PRESETS[name]


def test_preset_numbers_from_the_anchors() -> None:
    assert PRESETS["pi"].compaction.reserve_tokens == 16384
    assert PRESETS["pi"].compaction.threshold_rule == "pi"
    assert PRESETS["codex"].compaction.codex_ratio == 0.9
    assert PRESETS["opencode"].pruning.protect_tokens == 40000
    assert PRESETS["opencode"].pruning.minimum_tokens == 20000
    assert PRESETS["opencode"].truncation.max_bytes == 51200
    assert PRESETS["seed"].truncation.max_bytes == 50000
    assert PRESETS["seed"].pruning.placeholder == "<tool-output-compacted />"


def test_get_preset_returns_a_copy() -> None:
    policy = get_preset("pi")
    policy.truncation.max_lines = 10
    assert PRESETS["pi"].truncation.max_lines == 2000


def test_tail_budget_clamp() -> None:
    split = SplitPolicy()
    assert split.tail_budget(4000) == 2000  # 1000 clamped up
    assert split.tail_budget(20000) == 5000
    assert split.tail_budget(180000) == 8000  # 45000 clamped down
    assert SplitPolicy(tail_budget_tokens=20000).tail_budget(180000) == 20000


def test_tail_tools_keep_the_tail() -> None:
    truncation = PRESETS["opencode"].truncation
    assert truncation.limits_for("bash")[3] == "tail"
    assert truncation.limits_for("read")[3] == "head"


def test_wrong_type_names_field_and_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('[truncation]\nmax_bytes = "lots"\n')
    with pytest.raises(PolicyError) as excinfo:
        load_policy(path)
    assert "mine.toml" in str(excinfo.value)
    assert "truncation.max_bytes" in str(excinfo.value)


def test_unknown_key_names_field_and_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text("[pruning]\nprotect_turn = 3\n")
    with pytest.raises(PolicyError, match=r"mine\.toml: pruning\.protect_turn: unknown field"):
        load_policy(path)


def test_invalid_toml_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("[truncation\n")
    with pytest.raises(PolicyError, match="not valid TOML"):
        load_policy(path)


def test_base_preset_with_overrides(tmp_path: Path) -> None:
    path = tmp_path / "tight.toml"
    path.write_text('base = "pi"\n[truncation]\nmax_lines = 100\n')
    policy = load_policy(path)
    assert policy.name == "tight"
    assert policy.truncation.max_lines == 100
    assert policy.compaction.reserve_tokens == 16384


def test_resolve_policy_by_name_or_path(tmp_path: Path) -> None:
    assert resolve_policy("codex").name == "codex"
    with pytest.raises(PolicyError, match=r"not a preset"):
        resolve_policy("nonesuch")


def test_field_help_text_comes_from_docstrings() -> None:
    section = Policy.model_fields["truncation"].annotation
    assert isinstance(section, type) and issubclass(section, BaseModel)
    assert "UTF-8 bytes" in (documented(section)["max_bytes"].description or "")


def test_api_key_is_never_a_policy_field() -> None:
    dumped = PRESETS["seed"].to_toml()
    assert "api_key_env" in dumped
    assert "api_key =" not in dumped


def test_toml_strings_with_quotes_and_newlines_round_trip(tmp_path: Path) -> None:
    policy = get_preset("seed")
    policy.compaction.continuation_text = 'Line one\nsays "go on"\tand \\ stop'
    path = tmp_path / "p.toml"
    save_policy(policy, path)
    assert load_policy(path).compaction.continuation_text == policy.compaction.continuation_text
