"""Presets built without validation, and the replay's cache keys built without a serialiser.

The built-in policies are made from our own values with ``model_construct`` (no validation), and
the replay keys its caches on :meth:`core.policy._Section.key` rather than on
``model_dump_json``: an ``analyze`` that only runs a preset never builds the policy's pydantic
schema. These tests hold the three promises that makes: every preset, at every version of its
agent, equals its validated copy field for field and type for type; two policies have the same
key exactly when their JSON is the same; a value the user gives is still validated.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from core.agents.constants import CONSTANTS
from core.policy import (
    PRESETS,
    Policy,
    PolicyError,
    ToolLimits,
    _Section,
    get_preset,
    policy_from_dict,
    preset_for,
)
from tests.support.policy_fields import flatten

ROOT = Path(__file__).resolve().parents[2]


def _versions(agent: str) -> list[str | None]:
    """Every version bound the constants table names for ``agent`` (and no version at all)."""
    bounds = {
        bound
        for row in CONSTANTS
        if row.agent == agent
        for bound in (row.since, row.until)
        if bound is not None
    }
    return [None, "0.0.1", *sorted(bounds)]


def _leaves(value: Any, path: str = "") -> list[tuple[str, type, Any]]:
    """Every value under ``value`` with its type, by path (a model's fields, dicts, lists)."""
    if isinstance(value, _Section):
        return [
            leaf
            for name in type(value).model_fields
            for leaf in _leaves(getattr(value, name), f"{path}.{name}")
        ]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}[{k!r}]")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, type(value), value)]


PRESET_CASES = [
    (name, version)
    for name in PRESETS
    for version in _versions("claude-code" if name == "seed" else name)
]


@pytest.mark.parametrize(("name", "version"), PRESET_CASES)
def test_each_preset_equals_its_validated_copy(name: str, version: str | None) -> None:
    built = preset_for(name, version)
    validated = Policy.model_validate(built.model_dump())
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert _leaves(built) == _leaves(validated)  # the same values of the same types


def test_presets_are_fresh_and_still_validate_what_the_user_sets() -> None:
    first, second = get_preset("claude-code"), get_preset("claude-code")
    assert first == second and first is not second
    assert first.compaction is not second.compaction
    first.compaction.reserve_tokens = 1234  # an edit of one copy (the TUI's settings)
    assert second.compaction.reserve_tokens != 1234
    assert first.compaction.reserve_tokens == 1234
    with pytest.raises(ValidationError, match="reserve_tokens"):
        first.compaction.reserve_tokens = -1
    with pytest.raises(ValidationError, match="threshold_rule"):
        first.compaction.threshold_rule = "sometimes"  # type: ignore[assignment]
    with pytest.raises(ValidationError, match="estimator"):
        first.estimator = "words/3"
    with pytest.raises(PolicyError, match=r"pruning\.protect_turns"):
        policy_from_dict({"pruning": {"protect_turns": -2}}, "flags")


def _other_value(section: _Section, name: str) -> Any:
    """A valid value of field ``name`` of ``section`` other than its current one."""
    value = getattr(section, name)
    annotation = type(section).model_fields[name].annotation
    choices = [c for c in get_args(annotation) if isinstance(c, str)]
    if not choices:  # (a Literal inside ``X | None``)
        choices = [c for arg in get_args(annotation) for c in get_args(arg) if isinstance(c, str)]
    if name == "estimator":
        return "bytes/4" if value != "bytes/4" else "chars/4"
    if isinstance(value, bool):
        return not value
    if isinstance(value, str) and choices:
        return next(c for c in choices if c != value)
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 if value else 0.5
    if isinstance(value, str):
        return value + " (edited)"
    if isinstance(value, list):
        return [*value, "edited"]
    if isinstance(value, dict):
        return {**value, "edited": ToolLimits(max_lines=3)}
    if value is None:
        kinds = get_args(annotation)
        return choices[0] if choices else "edited" if str in kinds else 0.5 if float in kinds else 5
    raise AssertionError(f"no other value for {name}: {value!r}")


def _mutations() -> list[tuple[str, Policy]]:
    """Each preset, and each preset with one field changed (by validated assignment), each
    with the preset's name."""
    policies = []
    for name in PRESETS:
        policies.append((name, get_preset(name)))
        base = get_preset(name)
        for section in [base, *(getattr(base, s) for s in ("truncation", "pruning", "split"))]:
            for field in type(section).model_fields:
                if isinstance(getattr(section, field), _Section):
                    continue
                policy = get_preset(name)
                target = (
                    policy if section is base else getattr(policy, _section_name(base, section))
                )
                setattr(target, field, _other_value(target, field))
                policies.append((name, policy))
        for section_name in ("compaction", "llm"):
            for field in type(getattr(base, section_name)).model_fields:
                policy = get_preset(name)
                target = getattr(policy, section_name)
                setattr(target, field, _other_value(target, field))
                policies.append((name, policy))
    return policies


def _section_name(policy: Policy, section: _Section) -> str:
    return next(name for name in type(policy).model_fields if getattr(policy, name) is section)


CASES = _mutations()
MUTATIONS = [policy for _name, policy in CASES]


def test_mutations_cover_every_field() -> None:
    changed = set()
    for name in PRESETS:
        base = get_preset(name).by_name()
        for preset, policy in CASES:
            if preset == name:
                changed |= {k for k, v in policy.by_name().items() if v != base[k]}
    assert changed == set(flatten(get_preset("seed").model_dump(mode="json")))


def _one_to_one(pairs: list[tuple[Any, str]]) -> None:
    """Each key goes with one JSON text and each JSON text with one key: two items have the
    same key exactly when they have the same JSON."""
    texts: dict[Any, set[str]] = {}
    keys: dict[str, set[Any]] = {}
    for key, text in pairs:
        texts.setdefault(key, set()).add(text)
        keys.setdefault(text, set()).add(key)
    assert all(len(found) == 1 for found in texts.values())
    assert all(len(found) == 1 for found in keys.values())


def test_keys_are_equal_exactly_when_the_json_is() -> None:
    _one_to_one([(p.key(), p.model_dump_json()) for p in MUTATIONS])
    for section in ("truncation", "pruning", "split", "compaction", "llm"):
        parts = [getattr(p, section) for p in MUTATIONS]
        _one_to_one([(part.key(), part.model_dump_json()) for part in parts])
        assert len({part.key() for part in parts}) > 1


def test_an_included_key_follows_the_included_json() -> None:
    include = {"estimator", "pruning", "split", "compaction", "llm"}
    _one_to_one([(p.key(include=include), p.model_dump_json(include=include)) for p in MUTATIONS])
    assert len({p.key(include=include) for p in MUTATIONS}) < len({p.key() for p in MUTATIONS})


def test_key_tells_a_float_from_an_int_and_minus_zero_from_zero() -> None:
    a, b = get_preset("seed"), get_preset("seed")
    b.split.tail_ratio = -0.0
    a.split.tail_ratio = 0.0
    assert a.key() != b.key()
    assert a.model_dump_json() != b.model_dump_json()
    # model_construct keeps what it is given: an int where a float belongs differs too
    c = get_preset("seed")
    c.split = c.split.model_copy(update={"tail_ratio": 0})
    assert c.key() != a.key()


def test_by_name_gives_the_dotted_names_and_values_of_model_dump() -> None:
    for policy in MUTATIONS:
        by_name = policy.by_name()
        dumped = flatten(policy.model_dump(mode="json"))
        assert by_name.keys() == dumped.keys()
    by_field: dict[str, list[tuple[Any, str]]] = {}
    for policy in MUTATIONS:
        dumped = flatten(policy.model_dump(mode="json"))
        for name, value in policy.by_name().items():
            by_field.setdefault(name, []).append((value, repr(dumped[name])))
    for pairs in by_field.values():
        _one_to_one(pairs)


def test_by_name_is_not_changed_by_a_later_edit() -> None:
    policy = get_preset("opencode")
    before = policy.by_name()
    policy.truncation.tail_tools.append("zsh")
    assert before != policy.by_name()
    assert before["truncation.tail_tools"] == ("bash",)


def test_a_preset_run_builds_no_policy_schema() -> None:
    """What an ``analyze`` of a recording does with its agent's preset (the preset, its cache
    keys, its fields by name) leaves the policy's pydantic schema unbuilt."""
    code = (
        "from core.policy import Policy, CompactionPolicy, preset_for\n"
        "p = preset_for('claude-code', '2.1.226')\n"
        "p.key(); p.by_name(); p.truncation.key(); p.llm.key()\n"
        "p.key(include={'estimator', 'pruning'})\n"
        "from core.policy import PRESETS\n"
        "assert 'pi' in PRESETS and 'nobody' not in PRESETS and len(list(PRESETS)) == 8\n"
        "print(Policy.__pydantic_complete__, CompactionPolicy.__pydantic_complete__)\n"
        "print(len(PRESETS._made))  # (no preset made for a name test or a listing)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False", "0"]


def test_presets_are_made_once_on_first_use() -> None:
    for name in PRESETS:
        assert PRESETS[name] is PRESETS[name]
        assert PRESETS[name] == get_preset(name)
    assert [name for name, _ in PRESETS.items()] == list(PRESETS)
    with pytest.raises(KeyError):
        PRESETS["nobody"]
