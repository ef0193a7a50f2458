"""The walk's call step writes the threshold check out in one frame: it measures and decides as
:meth:`CheckRules.measure` and :meth:`CheckRules.decide` do.

Every call's check of a run is compared with the one the two rules give from the state before
that call (a short session keeps a checkpoint before every call), under policies that take each
branch of the check: projection on and off, the check before each call or at turn starts only,
pi's strict comparison, the reasoning of earlier turns counted, a limit the context crosses.
"""

from __future__ import annotations

import pytest

from core.model.session import Provenance
from core.policy import Policy, get_preset
from core.replay import Replayer
from core.replay.checks import CheckRules
from core.replay.state import Check
from tests.support.sessions import read_bash_turns
from tests.unit.test_replay_incremental_fields import (  # type: ignore[attr-defined]
    _random_session,
    changed,
)

POLICIES: list[tuple[str, dict[str, object]]] = [
    ("seed", {}),
    ("seed", {"compaction.project_after_tool_results": False}),
    ("seed", {"compaction.check_before_each_call": False}),
    ("seed", {"compaction.threshold_rule": "pi", "compaction.reserve_tokens": 30_000}),
    ("seed", {"compaction.turn_start_check_sees_prompt": False}),
    ("seed", {"compaction.count_earlier_reasoning": True}),
    ("seed", {"compaction.auto": False}),
    ("seed", {"pruning.budget_rule": False, "compaction.reserve_tokens": 45_000}),
    ("pi", {}),
    ("codex", {}),
    ("claude-code", {}),
]


def _policy(name: str, fields: dict[str, object]) -> Policy:
    policy = get_preset(name)
    for key, value in fields.items():
        new = changed(policy, key, value)
        assert new is not None, key
        policy = new
    return policy


def _fields(check: Check | None) -> tuple[object, ...] | None:
    if check is None:
        return None
    return (
        check.base,
        check.proj,
        check.checks_now,
        check.baseline_measure,
        check.basis,
        check.limit,
    )


@pytest.mark.parametrize(("name", "fields"), POLICIES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5])
def test_each_check_of_a_walk_is_the_rules_own(
    name: str, fields: dict[str, object], seed: int
) -> None:
    session = _random_session(seed) if seed % 2 == 0 else read_bash_turns(12 + seed, 3_000)
    policy = _policy(name, fields)
    replayer = Replayer(session)
    result = replayer.run(policy)
    trace = next(iter(replayer._traces.values()))
    setting = replayer._setting(policy)
    calls = replayer._calls
    rules = CheckRules(policy)
    compared = 0
    for c, state in enumerate(trace.checkpoints):
        assert state is not None  # a short session keeps the state before every call
        i = calls.calls[c]
        if c in {e.call_index for e in result.events if e.kind in ("prune",)} or any(
            recorded for recorded in replayer._recorded.at.get(i, ())
        ):
            continue  # the state changed between the checkpoint and the check
        if calls.first_of_turn[c] and policy.pruning.enabled and policy.pruning.budget_rule:
            continue
        reply = setting.tokens[i] if calls.main[i] else 0
        checks_now = policy.compaction.check_before_each_call or calls.first_of_turn[c] == 1
        if not checks_now and (setting.native or setting.follow_recording):
            made_before = trace.checks[c]
            checks_now = made_before is not None and made_before.checks_now
        prev = state.prev_call
        recorded = prev >= 0 and trace.rows[prev].provenance is Provenance.RECORDED
        limit = setting.limits[c]
        expected = rules.measure(
            state, setting.rec, c, reply, checks_now, calls.first_of_turn[c] == 1, limit, recorded
        )
        made = trace.checks[c]
        if expected.base is None and expected.proj is None:
            assert made is None
            continue
        assert _fields(made) == _fields(expected)
        if not setting.follow_recording:
            fired, _pending = rules.decide(expected, limit, state.pending)
            assert made is not None and made.fired == fired
        compared += 1
    assert compared > 0
