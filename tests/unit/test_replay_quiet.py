"""Quiet stretches walked in one pass leave the trace the step-by-step walk leaves.

:mod:`core.replay.quiet` walks the calls between which nothing happens from running sums; every
checkpoint, projection flag, check, overflow prompt and row it writes must be the walk's own, and
the walk must go on from where it stopped (a check that fires, a call that overflows, a recorded
compaction or a truncated output). Each run here is made twice, with and without stretches, on
random sessions, under policies that take each branch (projection off, checks at turn starts
only, pi's strict rule, overflow without recovery, the recording agent's own preset), with a
checkpoint kept every few calls as in a long session, and then resumed after a limit change.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.model.session import Session
from core.policy import Policy
from core.replay import Replayer, quiet, simulate
from core.replay import state as state_module
from core.replay.state import State, Trace
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.unit.test_replay_incremental_fields import _random_session, _turns, changed
from tests.unit.test_replay_walk_step import _policy

POLICIES: list[tuple[str, dict[str, object]]] = [
    ("seed", {}),
    ("seed", {"pruning.protect_turns": 1}),
    ("seed", {"compaction.project_after_tool_results": False}),
    ("seed", {"compaction.check_before_each_call": False}),
    ("seed", {"compaction.turn_start_check_sees_prompt": False}),
    ("seed", {"compaction.threshold_rule": "pi", "compaction.reserve_tokens": 30_000}),
    ("seed", {"compaction.overflow_recovery": False, "compaction.auto": False}),
    ("seed", {"compaction.recount_reply_blocks": "all", "truncation.max_lines": 20}),
    ("claude-code", {}),
    ("codex", {}),
    ("pi", {}),
]


def _state(state: State | None) -> tuple[Any, ...] | None:
    if state is None:
        return None
    values: list[Any] = []
    for name in State.__slots__:
        value = getattr(state, name)
        if name == "base":
            value = tuple((item.index, item.tokens, item.message.id) for item in value)
        elif name == "stuck" and value is not None:
            value = (value.at, value.failed, value.too_large, value.why)
        values.append(value)
    return tuple(values)


def _trace(trace: Trace) -> tuple[Any, ...]:
    return (
        [_state(state) for state in trace.checkpoints],
        trace.pending,
        trace.checks,
        trace.overflow_prompt,
        trace.rows,
        _state(trace.final),
        [event.model_dump(mode="json") for event in trace.events],
        trace.run_notes,
        trace.noops,
        trace.first_compaction_call,
        trace.first_overflow_call,
        trace.first_divergence,
    )


def _runs(session: Session, policies: list[Policy], on: bool, mp: pytest.MonkeyPatch) -> list[Any]:
    """The traces and results of ``policies`` run one after the other on one replayer."""
    mp.setattr(simulate, "QUIET_STRETCHES", on)
    replayer = Replayer(session)
    out = []
    for policy in policies:
        result = replayer.run(policy)
        trace = next(reversed(replayer._traces.values()))
        out.append((_trace(trace), result.model_dump(mode="json")))
    return out


def _talking(count: int) -> Session:
    """Turns whose calls say something before their tool call (a reply of two blocks: what
    ``recount_reply_blocks`` counts again)."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(count):
        script.user(f"turn {turn}")
        for tool in ("read", "bash"):
            script.call(tool, text=f"looking at {tool} {turn} " * 40, context=context)
            script.result(text_of_tokens(2_000, tool[0]))
            context += 2_100
        script.reply("ok", context=context)
    return script.session(window=60_000)


def _sessions() -> list[Session]:
    return [_random_session(seed) for seed in (0, 2, 4)] + [
        _turns(30, 2_500),
        _turns(18, 4_000),
        _talking(30),
    ]


@pytest.mark.parametrize(("name", "fields"), POLICIES)
@pytest.mark.parametrize("kept", [4096, 3])
def test_stretches_leave_the_walks_own_trace(
    name: str, fields: dict[str, object], kept: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "CHECKPOINTS_KEPT", kept)
    monkeypatch.setattr(
        quiet, "FIRST_CHUNK", 2
    )  # (short sessions: stretches end at chunk ends too)
    base = _policy(name, fields)
    later = changed(base, "pruning.protect_turns", base.pruning.protect_turns + 2)
    assert later is not None
    for session in _sessions():
        policies = [base, later, base]
        stepped = _runs(session, policies, False, monkeypatch)
        stretched = _runs(session, policies, True, monkeypatch)
        for one, other in zip(stepped, stretched, strict=True):
            assert one == other


def test_stretches_walk_the_quiet_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above compares something: most calls of a long session are walked in
    stretches, and the walk steps only where something happens."""
    walked: list[int] = []
    made = quiet.quiet_stretch

    def counted(run: simulate.Run) -> quiet.StretchFn:
        stretch = made(run)

        def count(c: int, i: int, limit: int) -> int:
            before = len(run.trace.rows)
            after = stretch(c, i, limit)
            walked.append(len(run.trace.rows) - before)
            return after

        return count

    monkeypatch.setattr(simulate, "quiet_stretch", counted)
    session = _turns(30, 2_500)
    replayer = Replayer(session)
    result = replayer.run(_policy("seed", {}))
    compactions = [e for e in result.events if e.kind == "compact"]
    assert compactions
    assert sum(walked) >= result.call_count - 3 * len(compactions) - 2
