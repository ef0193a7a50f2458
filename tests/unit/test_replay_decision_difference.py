"""Where a threshold change resumes: the first check the new threshold decides otherwise.

:meth:`ResumePlanner.first_decision_difference` passes over the checks that cannot decide
otherwise (neither fired nor left a projection pending, figures under the threshold) without
deciding each; it must find the call the plain search, deciding every check, finds — for
thresholds just under, at and just over the checks' own figures, on both sides of a
projection left pending mid-turn, and with either comparison (``>=``, pi's ``>``).
"""

from __future__ import annotations

from core.policy import Policy, get_preset
from core.replay import Replayer
from core.replay.checks import CheckRules
from core.replay.incremental import ResumePlanner, policy_key
from core.replay.state import Trace, has_figure
from tests.unit.test_replay_shifted import _long_tail, _set


def _plainly(planner: ResumePlanner, trace: Trace, policy: Policy, new: Trace) -> int:
    """The first call whose check ``new``'s thresholds decide otherwise, each check decided."""
    rules = CheckRules(policy)
    pending = False
    for c, check in enumerate(trace.made):
        if has_figure(check):
            decided = planner._decides_otherwise(
                check, c, (policy, rules), new.thresholds[c], trace, pending
            )
            if decided is None:
                return c
            pending = decided
    return len(trace.made)


def test_a_threshold_change_resumes_where_deciding_every_check_does() -> None:
    session = _long_tail(80)
    # Checked at turn starts only: a projection that crosses mid-turn stays pending until then.
    base = _set(get_preset("seed"), "compaction.check_before_each_call", False)
    found: set[int] = set()
    pending_left = False
    for rule in ("opencode", "claude-code", "pi"):
        policy = _set(base, "compaction.threshold_rule", rule)
        replayer = Replayer(session)
        replayer.run(policy)
        trace = replayer._traces[policy_key(policy)]
        pending_left |= any(trace.pending)
        figures = sorted(
            {value for check in trace.made for value in check[:2] if value is not None}
        )
        limits = {figure + step for figure in figures[-8:] for step in (-1, 0, 1)}
        limits |= {figures[len(figures) // 2], 10**9, 0}
        for limit in sorted(limits):
            new = Trace(policy)
            new.windows, new.thresholds = trace.windows, [limit] * len(trace.made)
            got = replayer._planner.first_decision_difference(trace, policy, len(trace.made), new)
            assert got == _plainly(replayer._planner, trace, policy, new), (rule, limit)
            found.add(got)
    assert pending_left
    assert len(found) > 3  # (thresholds that change different checks, and some that change none)
