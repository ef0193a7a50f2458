"""A walk keeps each call's figures as columns; its rows and checks are made from them when read.

The rows and checks a trace gives are compared with the ones the walk made at each step,
captured as it made them (the check it returned, the message of the call, the events attached
to it), and with a replay from scratch, for a walk with compactions, pruning, truncations and
overflows, and for the runs of limit changes resuming from it (whose first calls are copied
from the run they resume).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.model.session import Session
from core.policy import Policy, get_preset
from core.replay import Replayer, replay
from core.replay.calls import Calls
from core.replay.incremental import policy_key, restore
from core.replay.simulate import Run
from core.replay.state import Check, State, Trace
from tests.support.builders import SessionBuilder
from tests.unit.test_replay_incremental_fields import changed

Step = tuple[int, tuple[int, ...], Check]
"""What a walk made at one call: its message, the events attached to it and its check."""


class _Capture:
    """The steps each trace's walks made, the prefix a resumed trace copied included."""

    def __init__(self) -> None:
        self.steps: dict[int, list[Step]] = {}
        self.traces: dict[int, Trace] = {}

    def restore(self, real: Callable[..., tuple[State, int, int]]) -> Callable[..., Any]:
        def restore(
            trace: Trace, old: Trace | None, resume: int, calls: Calls
        ) -> tuple[State, int, int]:
            state, pos, resumed = real(trace, old, resume, calls)
            copied = self.steps.get(id(old), []) if old is not None else []
            self.steps[id(trace)] = list(copied[:resumed])
            self.traces[id(trace)] = trace
            return state, pos, resumed

        return restore

    def call_step(self, real: Callable[[Run], Callable[[int, int], None]]) -> Callable[..., Any]:
        def call_step(run: Run) -> Callable[[int, int], None]:
            made: list[Check] = []
            real_check = run.check_step

            def check_step() -> Callable[[int, int, bool, int], Check]:
                check = real_check()

                def captured(*args: Any) -> Check:
                    result = check(*args)
                    made.append(result)
                    return result

                return captured

            run.check_step = check_step  # type: ignore[method-assign]
            step = real(run)
            steps = self.steps.setdefault(id(run.trace), [])
            self.traces[id(run.trace)] = run.trace

            def wrapped(c: int, i: int) -> None:
                pending, before = run.state.pending_events, len(run.events)
                step(c, i)
                assert len(steps) == c  # the calls come in order, from the prefix on
                ids = (*pending, *range(before, len(run.events)))
                steps.append((i, ids, made[-1]))

            return wrapped

        return call_step


def _session(count: int = 40) -> Session:
    """``count`` turns of a read output (one line) and a bash output of 100 lines (truncated
    from the first call on), growing towards a 60k window."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(count):
        script.user(f"turn {turn}")
        script.call("read", context=context)
        script.result("r" * 10_000)
        script.call("bash", context=context + 2_500)
        script.result("\n".join(["b" * 99] * 100))
        context += 5_000
        script.reply("ok", context=context)
    return script.session(window=60_000)


def _varied() -> Policy:
    policy = get_preset("seed")
    policy.pruning.protect_turns = 2
    policy.truncation.max_lines = 40
    return policy


def _changes(base: Policy) -> list[Policy]:
    """Limit changes from ``base``, then a run of a policy whose first check has nothing to
    measure (opencode does not project: its first check is None)."""
    out: list[Policy] = [base]
    for key, value in (
        ("pruning.protect_turns", 4),
        ("truncation.max_lines", 400),
        ("compaction.reserve_tokens", 10_000),
        ("compaction.overflow_recovery", False),
        ("pruning.protect_turns", 2),
    ):
        policy = changed(out[-1], key, value)
        assert policy is not None
        out.append(policy)
    return [*out, get_preset("opencode")]


@pytest.fixture
def capture(monkeypatch: pytest.MonkeyPatch) -> _Capture:
    capture = _Capture()
    monkeypatch.setattr("core.replay.engine.restore", capture.restore(restore))
    monkeypatch.setattr(Run, "call_step", capture.call_step(Run.call_step))
    # Every call stepped, none followed from an earlier run's trace (those are compared with a
    # full walk in test_replay_shifted).
    monkeypatch.setattr("core.replay.engine.can_follow", lambda _before, _after: False)
    return capture


def test_the_rows_and_checks_are_the_ones_the_walk_made(capture: _Capture) -> None:
    session = _session()
    replayer = Replayer(session)
    seen_events = seen_fired = seen_none = seen_copied = False
    for policy in _changes(_varied()):
        result = replayer.run(policy)
        trace = replayer._traces[policy_key(policy)]
        steps = capture.steps[id(trace)]
        rows, checks = trace.rows, trace.checks
        assert len(rows) == len(checks) == len(steps) == result.call_count
        fresh = replay(session, policy).points
        for c, (i, ids, made) in enumerate(steps):
            row = rows[c]
            assert (row.call_index, row.message_index, row.event_ids) == (c, i, ids)
            assert row.check == made  # (made again from the trace's columns)
            assert (row.figure, row.overflow, row.provenance) == (
                fresh[c].simulated_tokens,
                fresh[c].overflow_simulated,
                fresh[c].simulated_provenance,
            )
            measured = made.base is not None or made.proj is not None
            assert checks[c] == (made if measured else None)
            seen_events = seen_events or bool(ids)
            seen_fired = seen_fired or made.fired
            seen_none = seen_none or not measured
        assert list(rows) == rows[:] == [rows[c] for c in range(len(rows))]
        assert list(checks) == checks[:] and (not rows or rows[-1] == rows[len(rows) - 1])
        assert [p.event_ids for p in result.points] == [list(ids) for _i, ids, _m in steps]
        resumed = result.resumed_from_call or 0
        seen_copied = seen_copied or (
            resumed < len(steps) and any(ids for _i, ids, _m in steps[:resumed])
        )
    # a varied walk, and a walk resumed after calls with events (copied from the run it resumed)
    assert seen_events and seen_fired and seen_none and seen_copied


def test_a_row_out_of_range_is_an_index_error() -> None:
    trace = Trace(get_preset("seed"))
    with pytest.raises(IndexError):
        trace.rows[0]
    assert len(trace.rows) == len(trace.checks) == 0 and list(trace.rows) == []
