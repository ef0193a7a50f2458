"""The run's threshold checks held as columns (:class:`core.replay.state.CheckColumns`).

A walk keeps one check per call: as columns (a flags byte, four int arrays, two string codes),
each check made again when read. What is read back equals what was appended, whatever its
figures (None, negative, past 2**31 or 2**63) and strings; a slice is a copy that grows on its
own; a run's checks are the ones a replay from scratch makes, resumed or not.
"""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy import Policy, get_preset
from core.replay import Replayer, replay, state
from core.replay.incremental import policy_key
from core.replay.policies import native_policy
from core.replay.recorded import placed
from core.replay.state import Check, CheckColumns, CheckRows, Checks, Trace
from tests.support.sessions import read_bash_turns
from tests.unit.test_replay_incremental_fields import changed

_CHECKS = [
    Check(None, None, False, False, None, None),
    Check(100, 120, True, False, None, 120, "projected", 150),
    Check(100, None, True, True, "threshold", 90, "recorded", 100),
    Check(-(2**31), 2**31 - 1, False, True, "overflow", -1, "estimated", 0),
    Check(2**31, -(2**31) - 1, True, False, None, 2**40, None, None),
    Check(2**63, -(2**63) - 1, False, False, "manual", 2**70, "", 7),
    Check(None, 5, True, True, "recorded", None, "projected", -(2**63)),
]


def _columns(checks: list[Check]) -> CheckColumns:
    columns = CheckColumns()
    for check in checks:
        columns.append(check)
    return columns


def test_columns_give_back_the_checks_appended() -> None:
    columns = _columns(_CHECKS)
    assert len(columns) == len(_CHECKS)
    assert list(columns) == _CHECKS
    assert [columns[c] for c in range(len(_CHECKS))] == _CHECKS
    assert columns[-1] == _CHECKS[-1] and columns[-len(_CHECKS)] == _CHECKS[0]
    for got, check in zip(columns, _CHECKS, strict=True):
        assert type(got) is Check
        assert type(got.checks_now) is bool and type(got.fired) is bool
        assert [value is None for value in got] == [value is None for value in check]
    assert columns == _CHECKS and columns != _CHECKS[:-1]


def test_columns_made_one_check_at_a_time() -> None:
    # A check is not kept as the object appended: it is made again when read.
    columns = CheckColumns()
    check = Check(10, 20, True, False, None, 20, "projected", 30)
    columns.append(check)
    assert columns[0] == check and columns[0] is not check


def test_a_slice_is_a_copy_that_grows_on_its_own() -> None:
    columns = _columns(_CHECKS[:3])
    part = columns[:2]
    assert isinstance(part, CheckColumns) and list(part) == _CHECKS[:2]
    assert list(columns[1:]) == _CHECKS[1:3] and list(columns[::2]) == _CHECKS[0:3:2]
    # (a figure past 2**63 and new strings widen the slice's columns, not the original's)
    part.extend(_CHECKS[5:])
    assert list(part) == [*_CHECKS[:2], *_CHECKS[5:]]
    assert list(columns) == _CHECKS[:3]
    columns.append(_CHECKS[4])
    assert list(columns) == [*_CHECKS[:3], _CHECKS[4]]
    assert list(part) == [*_CHECKS[:2], *_CHECKS[5:]]


def test_out_of_range_index() -> None:
    columns = _columns(_CHECKS[:2])
    for index in (2, -3):
        try:
            columns[index]
        except IndexError:
            continue
        raise AssertionError(index)


def _trace(replayer: Replayer, policy: Policy) -> Trace:
    trace = replayer._traces[policy_key(policy)]
    return trace


def test_a_resumed_run_keeps_the_checks_of_a_full_one() -> None:
    session = read_bash_turns(30, 2_500)
    base = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(base)
    moved = changed(base, "compaction.reserve_tokens", 45_000)
    assert moved is not None
    resumed = replayer.run(moved)
    assert resumed.resumed_from_call is not None
    alone = Replayer(session)
    alone.run(moved)
    got, full = _trace(replayer, moved), _trace(alone, moved)
    assert isinstance(got.made, CheckColumns)
    assert list(got.made) == list(full.made) and len(got.made) == resumed.call_count
    assert list(got.checks) == list(full.checks)
    assert resumed.model_dump(mode="json") == replay(session, moved).model_dump(mode="json")


def test_the_checks_of_the_walk_following_the_recording_keep_only_the_checks() -> None:
    # The evidence reads them after the walk: its states and columns are not kept for it.
    session = read_bash_turns(30, 2_500)
    replayer = Replayer(session)
    native = native_policy(session)
    checks = replayer.recorded_checks(replayer._setting(native))
    assert isinstance(checks, Checks)
    trace = checks._trace
    assert len(checks) == len(placed(session)[0].calls) > 0
    assert trace.checkpoints == [] and trace.deltas == [] and trace.events == []
    assert isinstance(trace.made, CheckColumns)


def test_rows_added_at_once_and_figures_read_as_held() -> None:
    # A stretch's checks written as columns (CheckRows) read back as the checks they stand for,
    # past 2**31 too; figures() gives the flags byte and the figures as held (None: 0, flagged).
    columns = _columns(_CHECKS[:2])
    rows = CheckRows()
    wanted = [
        Check(7, None, True, False, None, None, "recorded", None),
        Check(2**40, 3, False, False, None, -(2**35), "new basis", 9),
    ]
    for check in wanted:
        base, proj, checks_now, _fired, _trigger, measure, basis, limit = check
        rows.flags.append(
            (state.CHECKS_NOW if checks_now else 0)
            | (state.NO_PROJ if proj is None else 0)
            | (state.NO_MEASURE if measure is None else 0)
            | (state.NO_LIMIT if limit is None else 0)
        )
        rows.add("base", [base or 0])
        rows.add("proj", [proj or 0])
        rows.add("measure", [measure or 0])
        rows.add("limit", [limit or 0])
        rows.basis.append(basis)
    del rows[2:]
    columns.extend_rows(rows)
    assert list(columns) == [*_CHECKS[:2], *wanted]
    ((flags, base, proj, measure),) = columns.figures(2, 3)
    assert (base, proj, measure) == (7, 0, 0) and flags & state.NO_PROJ and flags & state.NO_MEASURE
    assert not flags & (state.FIRED | state.NO_BASE) and flags & state.CHECKS_NOW
    assert [figures[1] for figures in columns.figures(0, 4)] == [0, 100, 7, 2**40]


def test_all_same_is_every_value_equal_to_the_first() -> None:
    """The one test of "every value equals the first" (windows, thresholds, deltas): equal
    values that are not one object count, None and 0 differ, none is all the same."""
    big = 10**6
    assert state.all_same([]) and state.all_same([None, None])
    assert state.all_same([big, int(str(big)), big])
    assert not state.all_same([None, 0]) and not state.all_same([3, 3, 4])
    assert state.all_same(array("q", [7, 7])) and not state.all_same(array("q", [7, 8]))


@given(
    st.lists(st.sampled_from([None, "recorded", "projected", "estimated", ""]), max_size=12),
    st.integers(0, 2),
)
def test_a_stretch_of_bases_reads_back_as_written(bases: list[str | None], before: int) -> None:
    """``CheckColumns._codes_of``: a stretch of one basis (every value the last, found by
    :func:`~core.replay.state.all_same`), a mixed one and an empty one each read back as
    written, after checks appended one at a time."""
    columns = _columns(_CHECKS[:before])
    rows = CheckRows()
    for basis in bases:
        rows.flags.append(state.CHECKS_NOW)
        rows.add("base", [1])
        rows.add("proj", [0])
        rows.add("measure", [0])
        rows.add("limit", [0])
        rows.basis.append(basis)
    columns.extend_rows(rows)
    assert [check.basis for check in columns] == [c.basis for c in _CHECKS[:before]] + bases


_FIGURE = st.one_of(st.none(), st.integers(-(2**40), 2**40))
_NAME = st.sampled_from([None, "threshold", "projection", "recorded", "projected", "estimated"])
_ANY_CHECK = st.builds(
    Check, _FIGURE, _FIGURE, st.booleans(), st.booleans(), _NAME, _FIGURE, _NAME, _FIGURE
)
_LIKE_A_WALK = st.builds(
    Check,
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.just(True),
    st.just(False),
    st.just(None),
    st.integers(-5, 10**6),
    st.just("projected"),
    st.just(150_000),
)
"""Checks as a walk makes most of them: every figure there, one basis, nothing fired."""


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_ANY_CHECK, _LIKE_A_WALK), max_size=40), st.integers(1, 9))
def test_checks_written_a_batch_at_a_time_are_the_flags_of_each(
    checks: list[Check], batch: int
) -> None:
    """The flags bytes a flush writes (each bit a column read as one int; a column of one
    value not read) are :data:`state._FLAGS_OF` of each check, and every check reads back,
    whatever the batches the walk flushed them in."""
    columns = CheckColumns()
    for k, check in enumerate(checks):
        columns.adder()(check)
        if k % batch == 0:
            columns.flush()
    assert list(columns) == checks
    want = bytes(
        state._FLAGS_OF[
            (
                bool(c.checks_now),
                bool(c.fired),
                c.base is None,
                c.proj is None,
                c.baseline_measure is None,
                c.limit is None,
            )
        ]
        for c in checks
    )
    assert columns.flags_of(0, len(checks)) == want
