"""Reading a run's threshold checks from their columns (:class:`core.replay.state.CheckColumns`)
without making a :class:`~core.replay.state.Check` per call: the point columns of the checks, the
first check that fires under a set of limits, the evidence's largest figure. Each gives what the
checks made one by one give; appended checks are written to the columns a batch at a time and
read back alike whenever they are read.
"""

from __future__ import annotations

import random
from itertools import count

import pytest

from core.policy import get_preset
from core.replay import evidence, state
from core.replay.checks import CheckRules, checked, measured
from core.replay.state import Check, CheckColumns, as_columns, check_column, has_figure

_ODD = [
    Check(None, None, False, False, None, None),
    Check(None, None, True, False, None, None, "recorded", 5),
    Check(100, 120, True, False, None, 120, "projected", 150),
    Check(100, None, True, True, "threshold", 90, "recorded", 100),
    Check(100, 140, True, True, "projection", 90, "projected", 100),
    Check(None, 140, True, True, "threshold", 90, "projected", 100),
    Check(-(2**31), 2**31 - 1, False, True, "overflow", -1, "estimated", 0),
    Check(2**31, -(2**31) - 1, True, False, None, 2**40, None, None),
    Check(2**63, -(2**63) - 1, False, False, "manual", 2**70, "", 7),
    Check(None, 5, True, True, "recorded", None, "projected", -(2**63)),
]


def _random_checks(n: int, seed: int) -> list[Check]:
    rng = random.Random(seed)

    def figure() -> int | None:
        return None if rng.random() < 0.2 else rng.randrange(0, 200)

    checks = []
    for _ in range(n):
        fired = rng.random() < 0.1
        trigger = rng.choice(("threshold", "projection")) if fired else None
        basis = rng.choice((None, "recorded", "projected", "estimated"))
        checks.append(
            Check(figure(), figure(), rng.random() < 0.6, fired, trigger, figure(), basis, figure())
        )
    return checks


def _columns(checks: list[Check]) -> CheckColumns:
    columns = CheckColumns()
    columns.extend(checks)
    return columns


def test_appended_checks_read_back_alike_before_and_after_a_batch_is_written() -> None:
    checks = _random_checks(2 * state._BATCH + 17, seed=1) + _ODD
    columns = CheckColumns()
    for n, check in enumerate(checks, 1):
        columns.append(check)
        if n in (1, 5, state._BATCH - 1, state._BATCH + 3):
            # (read while some are held as appended: they are written first)
            assert len(columns) == n and columns[n - 1] == check
            assert list(columns.figures(0, n))[-1][1] == (check.base or 0)
    assert len(columns) == len(checks) and list(columns) == checks
    part = columns[: len(checks) - 2]
    assert list(part) == checks[:-2]
    columns.flush()
    columns.flush()  # (nothing held: nothing written twice)
    assert list(columns) == checks and list(columns.between(3, 9)) == checks[3:9]


def test_a_batch_takes_any_flag_value_and_new_strings() -> None:
    columns = CheckColumns()
    odd = Check(1, 2, 1, 0, "new trigger", 3, "new basis", 4)  # type: ignore[arg-type]
    columns.extend([*_ODD, odd])
    got = columns[len(_ODD)]
    assert got == odd and got.checks_now is True and got.fired is False
    assert list(columns)[: len(_ODD)] == _ODD


@pytest.mark.parametrize("checks", [_ODD, _random_checks(3000, seed=2)])
def test_point_columns_are_the_checks_own_figures(checks: list[Check]) -> None:
    columns = _columns(checks)
    n = len(checks)
    reads = {
        "check_fired": [check.fired for check in checks],
        "checked": [checked(check) for check in checks],
        "check_tokens": [measured(check) if checked(check) else None for check in checks],
        "check_basis": [check.basis if checked(check) else None for check in checks],
    }
    for name, wanted in reads.items():
        got = columns.point_column(name, 0, n)
        assert got == wanted, name
        assert [type(value) for value in got] == [type(value) for value in wanted], name
        assert columns.point_column(name, 2, n - 1) == wanted[2 : n - 1]
    with pytest.raises(KeyError):
        columns.point_column("simulated_tokens", 0, n)


def test_a_traces_check_column_grows_from_its_prefix() -> None:
    checks = _random_checks(50, seed=3)
    trace = state.Trace(get_preset("seed"))
    trace.made = _columns(checks)
    first = check_column(trace, "check_tokens", 20)
    assert first == [measured(c) if checked(c) else None for c in checks[:20]]
    whole = check_column(trace, "check_tokens")
    assert whole is first and whole == [measured(c) if checked(c) else None for c in checks]


def _first_firing_one_by_one(
    rules: CheckRules, checks: list[Check | None], start: int, stop: int, limits: list[int | None]
) -> int | None:
    pending = False
    for c in range(start, stop):
        check = checks[c]
        if check is None or not has_figure(check):
            continue
        fired, pending = rules.decide(check, limits[c], pending)
        if fired:
            return c
    return None


@pytest.mark.parametrize("preset", ["seed", "pi", "codex"])
def test_the_first_firing_check_is_the_one_decide_finds(preset: str) -> None:
    policy = get_preset(preset)
    rules = CheckRules(policy)
    rng = random.Random(preset)
    for trial in range(200):
        n = rng.randrange(1, 60)
        checks = _random_checks(n, seed=trial)
        columns = _columns(checks)
        if trial % 3 == 0:
            limits: list[int | None] = [rng.randrange(50, 250)] * n
        elif trial % 3 == 1:
            limits = [rng.randrange(1, 250) for _ in range(n)]
        else:  # (None and 0 among them: read check by check)
            limits = [rng.choice((None, 0, -5, rng.randrange(1, 250))) for _ in range(n)]
        start = rng.randrange(0, n)
        stop = rng.randrange(start, n + 1)
        wanted = _first_firing_one_by_one(rules, list(checks), start, stop, limits)
        assert rules.first_firing(columns, start, stop, limits) == wanted, trial


def test_no_check_fires_without_automatic_compaction() -> None:
    policy = get_preset("seed")
    policy.compaction.auto = False
    columns = _columns(_random_checks(40, seed=4))
    assert CheckRules(policy).first_firing(columns, 0, 40, [1] * 40) is None


def _largest_one_by_one(checks: list[Check | None], start: int, stop: int) -> int | None:
    figures = [
        figure
        for check in checks[start:stop]
        if check is not None
        for figure in (check.proj, check.base if check.checks_now else None)
        if figure is not None
    ]
    return max(figures, default=None)


def test_the_largest_figure_read_from_the_columns() -> None:
    for seed in range(40):
        checks: list[Check | None] = list(_random_checks(30, seed=seed))
        checks[seed % 30] = None
        columns = as_columns(checks)
        for start, stop in ((0, 30), (5, 6), (7, 7), (seed % 30, 30)):
            assert evidence._largest(columns, start, stop) == _largest_one_by_one(
                checks, start, stop
            )
    nothing = as_columns([None, Check(None, None, True, False, None, None)])
    assert evidence._largest(nothing, 0, 2) is None


def test_checks_given_as_a_list_read_as_columns() -> None:
    checks: list[Check | None] = [None, *_ODD[2:5]]
    columns = as_columns(checks)
    assert [c if has_figure(c) else None for c in columns] == checks
    assert as_columns(columns) is columns
    for c, _check in zip(count(), checks, strict=False):
        wanted = checks[c]
        figure = (
            None if wanted is None else (wanted.proj if wanted.proj is not None else wanted.base)
        )
        assert evidence._figure(columns, c) == figure


def test_rule_spans_one_per_run_of_one_threshold() -> None:
    same = [200_000] * 5
    (span,) = evidence.rule_spans(same)
    assert (span.first_call, span.last_call, span.threshold) == (0, 4, 200_000)
    (span,) = evidence.rule_spans([int(str(10**6))] * 3)  # (equal values, not one object)
    assert (span.first_call, span.last_call) == (0, 2)
    (span,) = evidence.rule_spans([None, None])
    assert span.threshold is None and span.last_call == 1
    spans = evidence.rule_spans([1, 1, None, None, 2, 1])
    assert [(s.first_call, s.last_call, s.threshold) for s in spans] == [
        (0, 1, 1),
        (2, 3, None),
        (4, 4, 2),
        (5, 5, 1),
    ]
    assert evidence.rule_spans([]) == []


def test_rows_with_many_strings_add_their_codes() -> None:
    # (codes past 255: the basis column widens, and the rows' codes follow it)
    columns = CheckColumns()
    wanted = []
    for batch in range(3):
        rows = state.CheckRows()
        for k in range(200):
            basis = f"basis {batch} {k}"
            rows.flags.append(state.CHECKS_NOW)
            rows.add("base", [k])
            rows.add("proj", [k + 1])
            rows.add("measure", [k + 2])
            rows.add("limit", [k + 3])
            rows.basis.append(basis)
            wanted.append(Check(k, k + 1, True, False, None, k + 2, basis, k + 3))
        columns.extend_rows(rows)
    assert list(columns) == wanted


def test_rows_of_mostly_one_basis_read_back_alike() -> None:
    columns = CheckColumns()
    columns.append(Check(1, 2, True, False, None, 3, "recorded", 4))
    wanted = [Check(1, 2, True, False, None, 3, "recorded", 4)]
    for bases in (
        ["projected", *["estimated"] * 99],
        ["a new one", *["estimated"] * 50, "recorded", *["estimated"] * 49],
        ["estimated"] * 10,
        [None, "x", None, None, "y", None, None, None],
    ):
        rows = state.CheckRows()
        for k, basis in enumerate(bases):
            rows.flags.append(state.CHECKS_NOW | state.NO_LIMIT)
            rows.add("base", [k])
            rows.add("proj", [k])
            rows.add("measure", [k])
            rows.add("limit", [0])
            rows.basis.append(basis)
            wanted.append(Check(k, k, True, False, None, k, basis, None))
        columns.extend_rows(rows)
    assert list(columns) == wanted
