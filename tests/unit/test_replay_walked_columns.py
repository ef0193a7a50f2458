"""What a limit change shares with the run it resumes, and the columns the walk keeps.

A run with nothing to walk (the change affects no call) shares its trace's lists with the run it
resumed instead of copying them; the walk appends the two point columns every summary reads as
it adds rows. Either way every run's columns are its rows' own figures, and every result is the
one a replay from scratch gives, whatever order the changes come in.
"""

from __future__ import annotations

from core.policy import Policy, get_preset
from core.replay import Replayer, replay
from core.replay.incremental import policy_key
from core.replay.state import Trace
from tests.support.sessions import read_bash_turns
from tests.unit.test_replay_incremental_fields import changed


def _policy(base: Policy, key: str, value: object) -> Policy:
    policy = changed(base, key, value)
    assert policy is not None
    return policy


def _trace(replayer: Replayer, policy: Policy) -> Trace:
    trace = replayer._traces[policy_key(policy)]
    return trace


def _columns_are_the_rows(trace: Trace) -> None:
    figures = [row.figure for row in trace.rows]
    overflows = [row.overflow for row in trace.rows]
    assert list(trace.columns["simulated_tokens"]) == figures
    assert trace.columns["overflow_simulated"] == overflows
    assert trace.columns["simulated_provenance"] == [row.provenance for row in trace.rows]


def test_a_change_that_affects_no_call_shares_the_trace_it_resumes() -> None:
    session = read_bash_turns(30, 2_500)
    base = get_preset("seed")
    base.pruning.enabled = False
    replayer = Replayer(session)
    first = replayer.run(base)
    # Pruning is off on both sides: nothing of the run can change.
    same = _policy(base, "pruning.protect_turns", base.pruning.protect_turns + 3)
    again = replayer.run(same)
    assert again.resumed_from_call == first.call_count
    old, new = _trace(replayer, base), _trace(replayer, same)
    # (the rows and checks are views of these, made when read)
    assert new.made is old.made and new.columns is old.columns and new.event_ids is old.event_ids
    assert again.model_dump(mode="json") == replay(session, same).model_dump(mode="json")
    # A change that walks again, resumed from the shared trace, leaves the first one whole.
    rows_before = list(old.rows)
    moved = _policy(same, "compaction.reserve_tokens", 45_000)
    later = replayer.run(moved)
    assert later.resumed_from_call is not None and later.resumed_from_call < first.call_count
    assert old.rows == rows_before and len(old.checkpoints) == first.call_count
    assert later.model_dump(mode="json") == replay(session, moved).model_dump(mode="json")
    for policy in (base, same, moved):
        _columns_are_the_rows(_trace(replayer, policy))


def test_the_walked_columns_are_the_rows_figures_after_any_change() -> None:
    session = read_bash_turns(40, 2_500)
    base = get_preset("seed")
    base.pruning.protect_turns = 2
    replayer = Replayer(session)
    policies = [
        base,
        _policy(base, "pruning.protect_turns", 4),
        _policy(base, "truncation.max_lines", 40),
        _policy(base, "compaction.reserve_tokens", 10_000),
        _policy(base, "compaction.overflow_recovery", False),
        base,
    ]
    for policy in policies:
        result = replayer.run(policy)
        trace = _trace(replayer, policy)
        _columns_are_the_rows(trace)
        points = result.points
        assert list(result.point_column("simulated_tokens")) == [p.simulated_tokens for p in points]
        assert list(result.point_column("overflow_simulated")) == [
            p.overflow_simulated for p in points
        ]
        assert result.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")
