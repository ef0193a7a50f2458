"""Incremental re-simulation after a change of any one policy field equals a fresh replay.

:class:`core.replay.Replayer` resumes a run from the first call a change can affect
(:mod:`core.replay.incremental`); whatever that point is, the result must be the one a replay from
scratch gives. The property test changes one field of a preset — every field of the policy but the
LLM's (the offline mock writes the summaries here) — to a value some preset uses or to a nearby
one, on random built sessions, with pruning on or off.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core.model.session import Session
from core.policy import PRESETS, Policy, get_preset
from core.replay import Replayer, replay
from tests.support.policy_fields import flatten
from tests.support.sessions import read_bash_turns
from tests.unit.test_replay import _random_session

SKIPPED = ("llm.", "truncation.spill_dir")
"""The LLM's settings (a live one would be asked) and the folder full outputs are written to."""


def _preset_values() -> dict[str, list[Any]]:
    values: dict[str, list[Any]] = {}
    for name in PRESETS:
        for key, value in flatten(get_preset(name).model_dump(mode="json")).items():
            if not key.startswith(SKIPPED) and value not in values.setdefault(key, []):
                values[key].append(value)
    return values


PRESET_VALUES = _preset_values()
FIELDS = sorted(PRESET_VALUES)


def candidates(key: str, value: Any) -> list[Any]:
    """Values to try for field ``key`` whose value is ``value``: those the presets use, and a
    few nearby ones of the same kind."""
    out = list(PRESET_VALUES[key])
    if isinstance(value, bool):
        out.append(not value)
    elif isinstance(value, int):
        out += [0, 1, 3, value // 2, value + 1, value * 2 + 1, 3_000, 45_000]
    elif isinstance(value, float):
        out += [0.3, 0.5, 0.75, 0.95, 1.0, value / 2]
    elif value is None:
        out += [0, 2, 3_000, 20_000, 45_000]
    elif isinstance(value, list):
        out += [[], ["skill", "read"], ["bash"], ["read"]]
    elif isinstance(value, str) and key in ("name", "description", "pruning.placeholder"):
        out.append(value + " (changed)")
    return [v for v in out if v != value]


def changed(base: Policy, key: str, value: Any) -> Policy | None:
    """``base`` with field ``key`` set to ``value`` (None: not a valid policy)."""
    data = base.model_dump(mode="json")
    *path, last = key.split(".")
    node = data
    for part in path:
        node = node[part]
    node[last] = value
    try:
        return Policy.model_validate(data)
    except ValidationError:
        return None


def _same(replayer: Replayer, session: Session, policy: Policy) -> None:
    incremental = replayer.run(policy)
    fresh = replay(session, policy)
    assert incremental.model_dump(mode="json") == fresh.model_dump(mode="json")


def _session(seed: int) -> Session:
    """A random short session (recorded compactions of every kind), or, for odd seeds, a long
    one of many turns that the policy compacts several times (pruning has old turns to prune)."""
    if seed % 2 == 0:
        return _random_session(seed)
    return read_bash_turns(10 + seed % 31, (700, 1_500, 2_500, 4_000)[seed // 2 % 4])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    preset=st.sampled_from(list(PRESETS)),
    pruning=st.sampled_from([None, True, False]),
    key=st.sampled_from(FIELDS),
    data=st.data(),
)
def test_a_change_of_any_field_resumes_to_the_fresh_result(
    seed: int, preset: str, pruning: bool | None, key: str, data: st.DataObject
) -> None:
    session = _session(seed)
    base = get_preset(preset)
    base.estimator = "chars/4"
    if pruning is not None:
        base.pruning.enabled = pruning
    current = flatten(base.model_dump(mode="json"))[key]
    options = candidates(key, current)
    assume(options)
    policy = changed(base, key, data.draw(st.sampled_from(options), label="value"))
    assume(policy is not None)
    assert policy is not None
    replayer = Replayer(session)
    replayer.run(base)
    _same(replayer, session, policy)
    _same(replayer, session, base)  # and back: resumed from the changed run


@pytest.mark.parametrize("key", ["pruning.protect_turns", "pruning.protect_tokens"])
def test_a_pruning_change_off_on_both_sides_reuses_the_whole_run(key: str) -> None:
    session = read_bash_turns(30, 3_000)
    base = get_preset("claude-code")
    assert not base.pruning.enabled
    policy = changed(base, key, 5)
    assert policy is not None
    replayer = Replayer(session)
    first = replayer.run(base)
    again = replayer.run(policy)
    assert again.resumed_from_call == first.call_count  # nothing walked again
    assert again.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")


def test_a_pruning_change_resumes_at_the_first_pruning_it_decides_otherwise() -> None:
    """Protecting the read tool changes nothing while no read output is old enough to prune:
    the run resumes after the compactions before that, not at the first one."""
    session = read_bash_turns(40, 2_500)
    base = get_preset("seed")
    base.pruning.protect_turns = 12
    replayer = Replayer(session)
    first = replayer.run(base)
    compactions = [e.call_index for e in first.events if e.kind == "compact"]
    assert len(compactions) >= 2 and compactions[0] is not None
    policy = changed(base, "pruning.protected_tools", ["skill", "read"])
    assert policy is not None
    again = replayer.run(policy)
    assert again.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")
    assert again.resumed_from_call is not None and again.resumed_from_call > compactions[0]


def test_a_reused_compaction_keeps_an_earlier_summary_as_kept() -> None:
    """A compaction outcome cached by an earlier run under another truncation setting holds that
    run's copy of an earlier summary (equal, another object): the rebuilt context keeps it, it
    is not counted again as this compaction's summary (the property test above found it:
    summary tokens 284 against a fresh replay's 239)."""
    session = _session(72586)
    base = get_preset("opencode")
    base.estimator = "chars/4"
    policy = changed(base, "truncation.use_subagent_hint", True)
    assert policy is not None
    replayer = Replayer(session)
    replayer.run(base)
    _same(replayer, session, policy)
