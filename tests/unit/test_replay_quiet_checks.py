"""The checks a threshold change need not look at one by one (``_quiet_checks``): worked out
column by column when one limit holds over every call, the same verdicts as call by call."""

from __future__ import annotations

import pytest

from core.policy import get_preset
from core.replay import Replayer
from core.replay.checks import CheckRules
from core.replay.incremental import _quiet_checks, _quiet_checks_by_call, policy_key
from core.replay.state import Trace
from tests.support.sessions import claude_like_session, growing_session


def _traces() -> list[tuple[Trace, str]]:
    traces = []
    for session in (
        claude_like_session(12, window=60_000),
        growing_session(20, window=60_000),
        claude_like_session(10, with_compaction=True),
    ):
        for preset in ("seed", "pi", "claude-code"):
            policy = get_preset(preset)
            replayer = Replayer(session)
            replayer.run(policy)
            traces.append((replayer._traces[policy_key(policy)], preset))
    return traces


@pytest.mark.parametrize("limit", [None, 0, 1, 20_000, 30_000, 45_000, 10**9])
def test_one_limit_gives_the_verdicts_of_each_call(limit: int | None) -> None:
    for trace, preset in _traces():
        end = len(trace.made)
        assert end > 0
        limits = [limit] * end
        for threshold_rule in ("pi", "claude-code"):
            policy = get_preset(preset)
            policy.compaction.threshold_rule = threshold_rule
            rules = CheckRules(policy)
            for stop in (end, end // 2, 1):
                quiet = _quiet_checks(trace, rules, limits, stop)
                left = trace.pending[1 : stop + 1]
                if len(left) < stop:
                    left.append(trace.final is not None and trace.final.pending)
                assert type(quiet) is bytes
                assert quiet == _quiet_checks_by_call(trace, rules, limits, stop, left)


def test_limits_that_change_are_looked_at_call_by_call() -> None:
    trace, preset = _traces()[0]
    end = len(trace.made)
    limits: list[int | None] = [30_000 + 1_000 * (c % 3) for c in range(end)]
    quiet = _quiet_checks(trace, CheckRules(get_preset(preset)), limits, end)
    assert len(quiet) == end and set(quiet) <= {0, 1}
