"""A limit change walks only from the first call it can affect.

Whatever the field, the resumed result is the one a replay from scratch gives (the property tests
of ``test_replay_incremental_fields`` say so for every field); here the walk itself is watched: a
change walks no message before the call it resumed from (a hook on :meth:`Run.walk`, not a
clock), and a change of the protected turns resumes at the first pruning it decides otherwise,
not at the start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from core.model.session import Session
from core.policy import Policy, get_preset
from core.replay import Replayer, replay, simulate
from core.replay import state as state_module
from core.replay.incremental import ResumePlanner, policy_key
from core.replay.recorded import placed
from tests.support.sessions import read_bash_turns
from tests.unit.test_replay_incremental_fields import changed


def _walk_starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The message each walk of a run starts from, from now on."""
    starts: list[int] = []
    walk = simulate.Run.walk

    def watched(self: simulate.Run, pos: int, *args: object, **kwargs: object) -> None:
        starts.append(pos)
        walk(self, pos, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(simulate.Run, "walk", watched)
    return starts


def _start(
    resumed: int | None, call_count: int, messages: int, call_messages: Sequence[int]
) -> int:
    """The message a run resumed from call ``resumed`` walks from (None: the start)."""
    if not resumed:
        return 0
    return messages if resumed == call_count else call_messages[resumed]


def _base() -> Policy:
    policy = get_preset("seed")
    policy.pruning.protect_turns = 2
    return policy


CHANGES: list[tuple[str, object]] = [
    ("pruning.protect_turns", 4),
    ("pruning.protect_turns", 1),
    ("pruning.protect_tokens", 5_000),
    ("pruning.minimum_tokens", 1_000),
    ("truncation.max_lines", 40),
    ("truncation.max_bytes", 3_000),
    ("compaction.reserve_tokens", 10_000),
    ("compaction.threshold_rule", "pi"),
    ("compaction.overflow_recovery", False),
    ("split.tail_max_tokens", 12_000),
    ("compaction.summary_max_tokens", 1_000),
]


def _session() -> Session:
    return read_bash_turns(40, 2_500)


@pytest.mark.parametrize(("key", "value"), CHANGES)
def test_a_change_walks_nothing_before_the_call_it_resumes_from(
    key: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _session()
    calls, _recorded = placed(session)
    base = _base()
    replayer = Replayer(session)
    first = replayer.run(base)
    policy = changed(base, key, value)
    assert policy is not None
    starts = _walk_starts(monkeypatch)
    again = replayer.run(policy)
    monkeypatch.undo()
    assert again.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")
    assert starts == [_start(again.resumed_from_call, first.call_count, calls.n, calls.calls)]


def test_a_change_of_the_protected_turns_resumes_at_the_first_pruning_it_decides_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = _session()
    calls, _recorded = placed(session)
    base = _base()
    replayer = Replayer(session)
    first = replayer.run(base)
    compactions = [e.call_index for e in first.events if e.kind == "compact"]
    assert compactions and compactions[0]
    starts = _walk_starts(monkeypatch)
    for turns in (3, 4, 6, 5):
        policy = changed(base, "pruning.protect_turns", turns)
        assert policy is not None
        again = replayer.run(policy)
        walked_from = starts[-1]
        base = policy
        assert again.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")
        resumed = again.resumed_from_call
        # From the first pruning attempt (a compaction's first step) that decides otherwise:
        # never from the start, and nothing before it walked again.
        assert resumed is not None and 0 < resumed <= compactions[0]
        assert walked_from == calls.calls[resumed]


def _by(changes: list[tuple[str, object]]) -> list[Callable[[Policy], Policy | None]]:
    def one(key: str, value: object) -> Callable[[Policy], Policy | None]:
        return lambda policy: changed(policy, key, value)

    return [one(key, value) for key, value in changes]


def test_changes_one_after_the_other_each_walk_from_their_own_first_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As in the TUI: each change resumes from the runs before it."""
    session = _session()
    calls, _recorded = placed(session)
    policy = _base()
    replayer = Replayer(session)
    replayer.run(policy)
    starts = _walk_starts(monkeypatch)
    for change in _by(CHANGES):
        new = change(policy)
        assert new is not None
        result = replayer.run(new)
        walked_from = starts[-1]
        assert result.model_dump(mode="json") == replay(session, new).model_dump(mode="json")
        expected = _start(result.resumed_from_call, result.call_count, calls.n, calls.calls)
        assert walked_from == expected
        policy = new


def test_every_point_column_is_the_points_field_before_and_after_a_change() -> None:
    """A result's columns (read without building its points, some from the rows of the run it
    resumed from) are its points' fields."""
    from core.replay.results import CallPoint

    session = _session()
    replayer = Replayer(session)
    base = _base()
    results = [replayer.run(base)]
    for key, value in CHANGES[:6]:
        new = changed(base, key, value)
        assert new is not None
        results.append(replayer.run(new))
    for result in results:
        columns = {name: list(result.point_column(name)) for name in CallPoint.model_fields}
        for name, column in columns.items():
            assert column == [getattr(point, name) for point in result.points], name


def _sparse(monkeypatch: pytest.MonkeyPatch, kept: int) -> None:
    """Walks keep about ``kept`` checkpoints (as on a session of 10^5 calls)."""
    monkeypatch.setattr(state_module, "CHECKPOINTS_KEPT", kept)


@pytest.mark.parametrize(("key", "value"), CHANGES)
def test_with_sparse_checkpoints_a_change_resumes_from_the_last_one_kept_before_its_call(
    key: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long session's walk keeps the state before every k-th call only: a change resumes from
    the last kept before the first call it can affect, walks the calls in between again, and
    gives the result of a replay from scratch."""
    _sparse(monkeypatch, 8)
    session = _session()
    calls, _recorded = placed(session)
    spacing = state_module.checkpoint_spacing(len(calls))
    assert spacing > 1
    base = _base()
    replayer = Replayer(session)
    first = replayer.run(base)
    trace = replayer._traces[policy_key(base)]
    kept = [c for c, state in enumerate(trace.checkpoints) if state is not None]
    assert kept == list(range(0, len(calls), spacing))
    assert len(trace.pending) == len(trace.checkpoints) == first.call_count
    policy = changed(base, key, value)
    assert policy is not None
    starts = _walk_starts(monkeypatch)
    again = replayer.run(policy)
    walked = list(starts)
    assert again.model_dump(mode="json") == replay(session, policy).model_dump(mode="json")
    resumed = again.resumed_from_call
    assert resumed is None or resumed == first.call_count or resumed % spacing == 0
    assert walked == [_start(resumed, first.call_count, calls.n, calls.calls)]


def test_with_sparse_checkpoints_changes_one_after_the_other_give_fresh_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As in the TUI, on a long session: each change resumes from the runs before it."""
    _sparse(monkeypatch, 8)
    session = _session()
    policy = _base()
    replayer = Replayer(session)
    replayer.run(policy)
    for change in _by([*CHANGES, ("pruning.protect_turns", 2), ("truncation.max_lines", 2000)]):
        new = change(policy)
        assert new is not None
        result = replayer.run(new)
        assert result.model_dump(mode="json") == replay(session, new).model_dump(mode="json")
        policy = new


def test_with_sparse_checkpoints_the_context_at_any_message_is_the_one_walked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:meth:`Replayer.context_at` walks from the last checkpoint kept before the message: the
    same context as with a checkpoint before every call."""
    session = _session()
    policy = _base()
    dense = Replayer(session)
    dense.run(policy)
    _sparse(monkeypatch, 8)
    sparse = Replayer(session)
    sparse.run(policy)
    for index in range(0, len(session.messages), 7):
        a, b = dense.context_at(policy, index), sparse.context_at(policy, index)
        assert (a.indices, a.tokens, a.figure, a.basis, a.call_index) == (
            b.indices,
            b.tokens,
            b.figure,
            b.basis,
            b.call_index,
        )


def _two_limit_changes(replayer: Replayer) -> Policy:
    """Run two more limit changes after :func:`_base`'s run (the traces a change compares);
    the last policy run."""
    policy = _base()
    for key, value in (("truncation.max_lines", 40), ("compaction.reserve_tokens", 10_000)):
        new = changed(policy, key, value)
        assert new is not None
        replayer.run(new)
        policy = new
    return policy


def test_each_pruning_attempt_is_planned_once_per_pruning_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change of the protected tools compares the pruning attempts of every earlier run with
    the new setting; runs resumed from one another share their attempts, planned once each."""
    session = _session()
    replayer = Replayer(session)
    replayer.run(_base())
    policy = _two_limit_changes(replayer)
    planned: list[int] = []
    from core.algorithms import prune as pruning  # (the planner imports it where it plans)

    plan = pruning.plan_prune

    def counted(*args: object, **kwargs: object) -> object:
        planned.append(1)
        return plan(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pruning, "plan_prune", counted)
    attempts = {
        id(attempt) for trace in replayer._traces.values() for attempt in trace.prune_inputs
    }
    assert attempts
    new = changed(policy, "pruning.protected_tools", ["skill", "read"])
    assert new is not None
    result = replayer.run(new)
    assert result.model_dump(mode="json") == replay(session, new).model_dump(mode="json")
    # at most the old and the new setting for each attempt, whatever the number of traces
    assert (
        0
        < len(planned)
        <= 2 * len(attempts)
        < 2
        * sum(len(trace.prune_inputs) for trace in replayer._traces.values() if trace.policy != new)
    )


@pytest.mark.parametrize("turns", [1, 4, 40])
def test_a_change_of_the_protected_turns_plans_no_pruning_to_find_where_to_resume(
    turns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other protected turns move the skip boundary, or name another number of turns: the first
    pruning attempt decides otherwise, known without planning it under both settings (the
    run's own pruning plans it once)."""
    session = _session()
    replayer = Replayer(session)
    first = replayer.run(_base())
    assert [e.call_index for e in first.events if e.kind == "compact"]
    policy = _two_limit_changes(replayer)
    compared: list[int] = []
    decided = ResumePlanner.decided

    def counted(self: ResumePlanner, *args: object) -> object:
        compared.append(1)
        return decided(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(ResumePlanner, "decided", counted)
    new = changed(policy, "pruning.protect_turns", turns)
    assert new is not None
    result = replayer.run(new)
    assert result.model_dump(mode="json") == replay(session, new).model_dump(mode="json")
    assert compared == []
    assert result.resumed_from_call  # (not from the start)


def test_the_recorded_peak_is_worked_out_once_and_is_the_largest_recorded_figure() -> None:
    session = _session()
    calls, _recorded = placed(session)
    known = [figure for figure in calls.usage_context if figure is not None]
    assert known and calls.peak_usage() == max(known)
    calls.usage_context.append(max(known) + 1)  # (read once: a later change is not seen)
    assert calls.peak_usage() == max(known)
    replayer = Replayer(session)
    base = replayer.run(_base())
    again = replayer.run(changed(_base(), "pruning.protect_turns", 4) or _base())
    assert base.summary.peak_recorded == again.summary.peak_recorded == max(known)


def test_a_session_without_recorded_figures_has_no_recorded_peak() -> None:
    session = _session()
    for message in session.messages:
        message.usage = None
    calls, _recorded = placed(session)
    assert calls.peak_usage() is None
    assert calls.peak_usage() is None  # (the answer None is kept too)
    assert replay(session, _base()).summary.peak_recorded is None


def test_the_message_index_column_is_each_rows_own_after_a_resumed_run() -> None:
    session = _session()
    replayer = Replayer(session)
    replayer.run(_base())
    policy = changed(_base(), "pruning.protect_turns", 4)
    assert policy is not None
    result = replayer.run(policy)
    assert result.resumed_from_call  # (a resumed run: its rows are an earlier run's, then its own)
    trace = replayer._traces[policy_key(policy)]
    assert list(result.point_column("message_index")) == [row.message_index for row in trace.rows]
    assert [point.message_index for point in result.points] == [
        row.message_index for row in trace.rows
    ]


def test_earlier_reasoning_counts_in_the_check_when_the_session_has_some() -> None:
    assert placed(_session())[0].reasoning is None  # (none recorded: the walk adds nothing up)
    thinking = _session()
    for message in thinking.messages:
        if message.is_model_call:
            message.reasoning_estimate_tokens = 300
    assert placed(thinking)[0].reasoning is not None
    counted = _base()
    counted.compaction.count_earlier_reasoning = True
    first = replay(thinking, counted)
    before = min(e.call_index for e in first.events if e.call_index is not None)
    checks = first.point_column("check_tokens")[:before]
    uncounted = replay(thinking, _base()).point_column("check_tokens")[:before]
    # before anything is rebuilt, the check adds the earlier turns' reasoning (300 a call)
    extra = [
        a - b for a, b in zip(checks, uncounted, strict=True) if a is not None and b is not None
    ]
    assert extra[0] == 0 and extra[-1] > 0 and extra[-1] % 300 == 0
