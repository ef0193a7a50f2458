"""What a walk adds at each call, without a frame of its own: the checks go to the pending list
of the trace's columns (:meth:`CheckColumns.adder`), written to the columns as the walk goes on;
the notes of the attempts that changed nothing keep the text of the first of each key alone,
made for it alone; a fired check is the check with its two fields changed."""

from __future__ import annotations

from typing import Any

from core.policy import get_preset
from core.replay import Replayer, replay, simulate
from core.replay.incremental import policy_key
from core.replay.state import Check, CheckColumns, State, Trace
from core.replay.stuck import FIRED_NOTE
from tests.unit.test_replay_check_columns import _CHECKS, _columns
from tests.unit.test_replay_lazy_rows import _session
from tests.unit.test_replay_noop import CountingReplayer, _policy, _stuck_session


def test_the_adder_adds_as_append_does() -> None:
    columns = CheckColumns()
    add = columns.adder()
    for check in _CHECKS[:3]:
        add(check)
    columns.flush()
    for check in _CHECKS[3:]:
        add(check)
    assert len(columns) == len(_CHECKS)
    assert list(columns) == _CHECKS == list(_columns(_CHECKS))
    add(_CHECKS[0])  # (the same list after a flush: what the adder adds is still read)
    assert list(columns) == [*_CHECKS, _CHECKS[0]]


def test_a_walk_holds_as_tuples_no_more_checks_than_it_walked_calls_since_a_report(
    monkeypatch: Any,
) -> None:
    """The checks are written to the columns at every progress report of the walk (every
    :data:`simulate._PROGRESS_EVERY` messages): no more are held as named tuples; the result is
    the one of a replay made at once."""
    monkeypatch.setattr(simulate, "_PROGRESS_EVERY", 7)
    session = _session(60)
    policy = get_preset("seed")
    replayer = Replayer(session)
    held: list[int] = []
    traces = replayer._traces

    def progress(_done: int, _total: int) -> None:
        trace = traces.get(policy_key(policy))
        if trace is None:  # (the run's trace is kept once it is done: read through the walk)
            return
        held.append(len(trace.made._pending))

    run_walk = simulate.Run.walk

    def walk(run: simulate.Run, *args: Any, **kwargs: Any) -> None:
        traces[policy_key(policy)] = run.trace
        run_walk(run, *args, **kwargs)

    monkeypatch.setattr(simulate.Run, "walk", walk)
    result = replayer.run(policy, progress=progress)
    assert held and max(held) <= 7
    assert result.points == replay(session, policy).points


def test_a_fired_check_is_the_check_fired() -> None:
    check = Check(100, 120, True, False, None, 120, "projected", 150)
    fired = check.fired_as("projection")
    assert type(fired) is Check
    assert fired == check._replace(fired=True, trigger="projection")


class _CountedNote(str):
    """A note's template that counts the notes made with it."""

    made = 0

    def format(self, *args: Any, **kwargs: Any) -> str:
        _CountedNote.made += 1
        return super().format(*args, **kwargs)


def test_the_text_of_a_note_is_made_for_the_first_of_its_key_alone(monkeypatch: Any) -> None:
    """Every failed attempt is noted, the text of the first alone kept
    (``tests/unit/test_replay_noop.py``): only that text is made."""
    notes = {key: _CountedNote(text) for key, text in FIRED_NOTE.items()}
    monkeypatch.setattr(simulate, "FIRED_NOTE", notes)
    _CountedNote.made = 0
    session = _stuck_session(calls_over=16, late_output=60_000)
    engine = CountingReplayer(session, limit=3_000)
    result = engine.run(_policy())
    (trace,) = engine._traces.values()
    failed = [text for _when, key, text in trace.run_notes if key == "failed"]
    assert len(failed) == result.summary.noop_compactions > 2
    assert failed[0] and not any(failed[1:])
    assert _CountedNote.made == len({key for _when, key, _text in trace.run_notes})


def test_a_fire_asks_for_a_recorded_compaction_to_adopt_only_where_one_is() -> None:
    """The recording agent's policy adopts the recorded compaction where the recording compacted
    by itself (``Run._auto_calls``, the calls ``RecordedCompactions.here`` finds one before):
    a check firing at another call compacts without asking (a session stuck over its threshold
    fires at every call)."""
    from types import SimpleNamespace

    asked: list[int] = []
    compacted: list[int] = []

    def adopt(c: int, *_args: Any) -> bool:
        asked.append(c)
        return True

    run = SimpleNamespace(
        policy=get_preset("claude-code"),
        setting=SimpleNamespace(native=True),
        _auto_calls={7},
        adopt_recorded=adopt,
        compact=lambda _at, call, *_args: compacted.append(call),
        diverged=lambda: None,
    )
    check = Check(150_000, 160_000, True, False, None, 150_000, "projected", 140_000)
    for c in (5, 7):
        fired = simulate.Run.fire(run, check, c, 2 * c, 140_000)  # type: ignore[arg-type]
        assert fired == check.fired_as("threshold")
    assert asked == [7] and compacted == [5]


def test_the_calls_with_a_compaction_to_adopt_are_the_ones_here_finds() -> None:
    from core.formats import load_session
    from core.replay.policies import native_policy
    from tests.support.paths import REPO

    for path in sorted((REPO / "sample_sessions").glob("*/*.jsonl")):
        session = load_session(path)
        replayer = Replayer(session)
        recorded = replayer._recorded
        run = simulate.Run(
            replayer._calls,
            recorded,
            replayer._setting(native_policy(session)),
            Trace(native_policy(session)),
            State(),
            compact=replayer._compact,
            futile=replayer._futile,
        )
        found = {c for c in range(len(replayer._calls)) if recorded.here(c) is not None}
        assert found == run._auto_calls - {None}, path.name
