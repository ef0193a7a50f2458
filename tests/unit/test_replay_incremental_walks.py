"""A limit change walks only from the first call it can affect.

Whatever the field, the resumed result is the one a replay from scratch gives (the property tests
of ``test_replay_incremental_fields`` say so for every field); here the walk itself is watched: a
change walks no message before the call it resumed from (a hook on :meth:`Run.walk`, not a
clock), and a change of the protected turns resumes at the first pruning it decides otherwise,
not at the start.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.model.session import Session
from core.policy import Policy, get_preset
from core.replay import Replayer, replay, simulate
from core.replay.recorded import placed
from tests.unit.test_replay_incremental_fields import _turns, changed


def _walk_starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The message each walk of a run starts from, from now on."""
    starts: list[int] = []
    walk = simulate.Run.walk

    def watched(self: simulate.Run, pos: int, *args: object, **kwargs: object) -> None:
        starts.append(pos)
        walk(self, pos, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(simulate.Run, "walk", watched)
    return starts


def _start(resumed: int | None, call_count: int, messages: int, call_messages: list[int]) -> int:
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
    return _turns(40, 2_500)


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
