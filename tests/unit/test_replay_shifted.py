"""A run that follows an earlier one (:mod:`core.replay.shifted`) leaves the trace a full walk
leaves.

After a limit change the walk takes the stretches where its context is the earlier run's plus a
constant from that run's trace. Everything a walk writes — every checkpoint's state, check,
overflow figure, delta, column, event, note — is compared with a walk from the start under the
same policy, on a generated session and on every real sample (skipped when absent), after each
of a series of changes (each resumed from the runs before it, as in the TUI).
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Provenance, Session
from core.policy import Policy, get_preset
from core.replay import Replayer, shifted
from core.replay.incremental import can_follow, policy_key
from core.replay.recorded import RecordedSide
from core.replay.state import CHECKS_NOW, CheckColumns, CheckRows, State, Trace, new_check
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO
from tests.support.policy_fields import flatten

SHARED = REPO.parent / "shared"
SAMPLE_FILES = sorted(
    [
        *(
            p
            for folder in (SHARED / "samples", SHARED / "new-formats", REPO / "sample_sessions")
            if folder.is_dir()
            for p in folder.rglob("*")
            if p.is_file()
            and p.name.endswith((".jsonl", ".json", ".jsonl.zst"))
            and not p.name.endswith(".meta.json")  # (a Claude Code sub-agent's metadata)
            and "storage" not in p.parts
        ),
        *(
            folder / "opencode" / "storage"
            for folder in (SHARED / "samples", REPO / "sample_sessions")
            if (folder / "opencode" / "storage").is_dir()
        ),
    ]
)

CHANGES: list[tuple[str, Any]] = [
    ("pruning.protect_turns", 4),
    ("pruning.protect_turns", 1),
    ("split.tail_max_tokens", 20_000),
    ("compaction.reserve_tokens", 40_000),
    ("pruning.protect_turns", 0),
    ("compaction.threshold_rule", "pi"),
    ("pruning.enabled", False),
    ("compaction.reserve_tokens", 10_000),
    ("context_window", 120_000),
    ("compaction.overflow_recovery", False),
]
"""One field at a time, each kept for the next."""


def _set(policy: Policy, path: str, value: Any) -> Policy:
    policy = policy.model_copy(deep=True)
    *parents, last = path.split(".")
    node: Any = policy
    for part in parents:
        node = getattr(node, part)
    setattr(node, last, value)
    return policy


def _state(state: State | None) -> Any:
    if state is None:
        return None
    values = []
    for name in State.__slots__:
        value = getattr(state, name)
        if name == "base":
            value = tuple((item.index, item.tokens, item.message) for item in value)
        elif name == "stuck" and value is not None:
            value = (value.at, value.failed, value.too_large, value.why)
        values.append(value)
    return tuple(values)


def walked(trace: Trace) -> dict[str, Any]:
    """Everything a walk writes into ``trace``. (A check's ``limit`` is left out: a resumed
    run keeps the checks of the prefix it reuses as the earlier run made them, threshold and
    all; the decisions are the same.)"""
    return {
        "checkpoints": [_state(state) for state in trace.checkpoints],
        "pending": list(trace.pending),
        "checks": [check._replace(limit=None) for check in trace.made],
        "deltas": list(trace.deltas),
        "columns": {
            name: list(trace.columns[name])
            for name in ("simulated_tokens", "overflow_simulated", "simulated_provenance")
        },
        "event_ids": dict(trace.event_ids),
        "events": [event.model_dump(mode="json") for event in trace.events],
        "meta": dict(trace.compaction_meta),
        "final": _state(trace.final),
        "notes": list(trace.run_notes),
        "noops": list(trace.noops),
        "firsts": (
            trace.first_compaction_call,
            trace.first_overflow_call,
            trace.first_prune_call,
            trace.first_divergence,
        ),
        "prune_inputs": [
            (a.call, a.base_pos, a.at, a.now_ms, tuple(item.index for item in a.base))
            for a in trace.prune_inputs
        ],
    }


def _trace(replayer: Replayer, policy: Policy) -> Trace:
    return replayer._traces[policy_key(policy)]


def _full_walk(session: Session, policy: Policy) -> Trace:
    replayer = Replayer(session)
    replayer.run(policy)
    return _trace(replayer, policy)


def _stretches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The stretches taken from now on: (first call, the call it ended before)."""
    taken: list[tuple[int, int]] = []
    stretch = shifted.Follower.stretch

    def watched(self: shifted.Follower, c0: int, state: State) -> int:
        jumped = stretch(self, c0, state)
        if jumped >= 0:
            taken.append((c0, self.next_try - 1))
        return jumped

    monkeypatch.setattr(shifted.Follower, "stretch", watched)
    return taken


def _followers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[shifted.Follower, int, int]]:
    """The stretches taken from now on, with their followers: (follower, first call, the call
    it ended before)."""
    followers: list[tuple[shifted.Follower, int, int]] = []
    stretch = shifted.Follower.stretch

    def watched(self: shifted.Follower, c0: int, state: State) -> int:
        jumped = stretch(self, c0, state)
        if jumped >= 0:
            followers.append((self, c0, self.next_try - 1))
        return jumped

    monkeypatch.setattr(shifted.Follower, "stretch", watched)
    return followers


def _each_change(
    session: Session, base: Policy, check: Callable[[Policy, Trace], None]
) -> Replayer:
    replayer = Replayer(session)
    replayer.run(base)
    policy = base
    for path, value in CHANGES:
        policy = _set(policy, path, value)
        replayer.run(policy)
        check(policy, _trace(replayer, policy))
    return replayer


def _long_tail(turns: int) -> Session:
    """Turns of a long request and two tool outputs each, growing to a compaction in a 60k
    window by turn 9, then short turns after it (the stretch a protected-turns change
    follows: the compaction's pruning decides which outputs its kept tail holds)."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(turns):
        big = turn < 9
        script.user(text_of_tokens(1_200 if big else 40, "u"))
        context += 1_200 if big else 40
        for tool in ("read", "bash"):
            script.call(tool, context=context)
            size = 900 if big else 60
            script.result(text_of_tokens(size, tool[0]))
            context += size
        script.reply("ok", context=context)
    return script.session(window=60_000)


def test_a_protected_turns_change_follows_the_earlier_run_after_the_compaction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = _long_tail(80)
    base = get_preset("seed")
    replayer = Replayer(session)
    first = replayer.run(base)
    compactions = [e.call_index for e in first.events if e.kind == "compact"]
    assert len(compactions) == 1 and compactions[0] is not None
    taken = _stretches(monkeypatch)
    policy = _set(base, "pruning.protect_turns", 4)
    result = replayer.run(policy)
    assert result.resumed_from_call is not None
    assert result.resumed_from_call <= compactions[0]
    trace = _trace(replayer, policy)
    # The compaction kept another tail: every later figure differs, and is followed, not walked.
    before = _trace(replayer, base).final
    assert trace.final is not None and before is not None
    assert trace.final.base_tokens != before.base_tokens
    assert taken and taken[-1][1] == first.call_count
    followed = sum(end - start for start, end in taken)
    assert followed >= first.call_count - compactions[0] - 2
    assert walked(trace) == walked(_full_walk(session, policy))


def _reference_calls(
    follower: shifted.Follower, first: int, stop: int, shift: int, prev: tuple[int, Provenance]
) -> tuple[list[list[Any]], tuple[int, Provenance]]:
    """The calls a stretch makes, by the module's formulas written plainly (one call at a time,
    every figure worked out at each): the columns and the last call's figure and provenance."""
    walk, earlier = follower.walk, follower.earlier
    setting = walk.setting
    rec = setting.rec
    columns: list[list[Any]] = [[], [], [], []]
    after, provenance = prev
    for c in range(first, stop):
        before = earlier.made[c]
        delta = earlier.deltas[c] + shift
        scaled = round(delta * rec.ratio)
        prompt = max(rec.baseline_prompt[c] + scaled, 0)
        window, limit = setting.windows[c], setting.limits[c]
        if before.fired or (
            window and (prompt > window or (delta >= 0 and walk.reasons[c] is not None))
        ):
            break
        base = after
        proj = None if before.proj is None else before.proj + base - (before.base or 0)
        check = new_check((base, proj, before.checks_now, False, None, before[5], "", limit))
        if walk.rules.auto and limit is not None:
            fired, pending = walk.rules.decide(check, limit, False)
            if fired or pending:
                break  # (it fires, or leaves a projection pending)
        if provenance is not Provenance.RECORDED:
            basis = "estimated"
        else:
            basis = "projected" if proj is not None and proj != base else "recorded"
        columns[0].append(check._replace(basis=basis))
        columns[1].append(delta)
        columns[2].append(max(rec.baseline[c] + scaled, 0))
        after = max(rec.baseline_after[c] + scaled, 0)
        provenance = rec.baseline_prov[c] if delta == 0 else setting.counter.provenance
        columns[3].append(provenance)
    return columns, (after, provenance)


def test_a_stretchs_calls_follow_the_formulas_whatever_the_deltas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deltas hold over a stretch in every session seen (both runs walk alike there); the calls
    are made as the formulas give them where they change too (each call's own delta)."""
    session = _long_tail(80)
    base = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(base)
    followers = _followers(monkeypatch)
    replayer.run(_set(base, "pruning.protect_turns", 4))
    follower, first, stop = max(followers, key=lambda taken: taken[2] - taken[1])
    assert stop - first > 100
    deltas = follower.earlier.deltas
    made_calls: list[int] = []
    for step in (0, 1, 7):
        follower.earlier.deltas = [d + (c % 5) * step for c, d in enumerate(deltas)]
        for shift in (-300, 0, 41, -deltas[first]):  # (the last: deltas of 0)
            for prev in ((5_000, Provenance.RECORDED), (0, Provenance.ESTIMATED)):
                columns: tuple[Any, ...] = (CheckRows(), [], [], [])
                made = follower._calls_from(first, stop, shift, prev, columns)
                expected, last = _reference_calls(follower, first, stop, shift, prev)
                # (the checks written as their columns: read back as checks)
                checks = CheckColumns()
                checks.extend_rows(columns[0])
                assert [list(checks), *(list(column) for column in columns[1:])] == expected
                assert made == last
                made_calls.append(len(columns[0]))
    # (some cases follow most of the stretch, some end early: a check fires or a call overflows)
    assert max(made_calls) > 50 and min(made_calls) < stop - first


def test_a_window_change_resumes_no_later_than_the_first_overflow_it_changes() -> None:
    """With automatic compaction off no check fires: a smaller window changes the calls'
    overflow verdicts alone. Each output is truncated (3,000 lines to 2,000), so the calls'
    contexts are smaller than the recording's and their verdicts rest on their own prompts
    (each worked out from the call's delta, as the walk made it)."""
    script = SessionBuilder()
    context = 2_000
    for _turn in range(70):
        script.user(text_of_tokens(500, "u"))
        script.call("bash", context=context + 500)
        script.result("ok\n" * 3_000)
        context += 2_750
        script.reply("ok", context=context)
    session = script.session(window=200_000)
    base = _set(get_preset("seed"), "compaction.auto", False)
    base = _set(base, "compaction.overflow_recovery", False)
    replayer = Replayer(session)
    first = replayer.run(base)
    assert not any(event.kind == "overflow" for event in first.events)
    policy = _set(base, "context_window", 120_000)
    result = replayer.run(policy)
    overflows = [event.call_index for event in result.events if event.kind == "overflow"]
    assert overflows and overflows[0] is not None
    assert _trace(replayer, policy).deltas[overflows[0]] < 0  # (the policy removed something)
    assert result.resumed_from_call is None or result.resumed_from_call <= overflows[0]
    assert walked(_trace(replayer, policy)) == walked(_full_walk(session, policy))


def test_every_change_of_a_generated_session_leaves_a_full_walks_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = _long_tail(90)
    taken = _stretches(monkeypatch)

    def same(policy: Policy, trace: Trace) -> None:
        assert walked(trace) == walked(_full_walk(session, policy)), policy

    _each_change(session, get_preset("seed"), same)
    assert taken  # (some change followed the run before it)


@pytest.mark.skipif(not SAMPLE_FILES, reason="the shared samples are absent")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.name))
def test_every_change_of_a_sample_leaves_a_full_walks_trace(path: Path) -> None:
    session = load_session(path)
    for base in (get_preset("seed"), None):
        start = base
        if start is None:
            from core.replay.policies import native_policy

            start = native_policy(session)

        def same(policy: Policy, trace: Trace) -> None:
            assert walked(trace) == walked(_full_walk(session, policy)), policy

        _each_change(session, start, same)


def _fields(policy: Policy) -> dict[str, Any]:
    return flatten(policy.model_dump(mode="json"))


@pytest.mark.parametrize(
    ("path", "value", "follows"),
    [
        ("pruning.protect_turns", 4, True),
        ("split.tail_max_tokens", 20_000, True),
        ("compaction.reserve_tokens", 40_000, True),
        ("compaction.threshold_rule", "pi", True),
        ("context_window", 120_000, True),
        ("llm.model", "other", True),
        ("truncation.max_lines", 40, False),
        ("estimator", "bytes/4", False),
        ("compaction.project_after_tool_results", False, False),
        ("compaction.check_before_each_call", False, False),
        ("compaction.recount_reply_blocks", "all", False),
        ("pruning.budget_rule", True, False),
    ],
)
def test_a_run_follows_only_a_policy_that_walks_alike(path: str, value: Any, follows: bool) -> None:
    base = get_preset("seed")
    other = _set(base, path, value)
    assert can_follow(_fields(base), _fields(other)) is follows
    assert can_follow(_fields(other), _fields(base)) is follows


def test_a_protected_turns_change_makes_its_stretch_a_column_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stretch after the compaction is made with whole columns added to at once
    (:mod:`core.replay.lanes`), never value by value, and leaves a full walk's trace."""
    session = _long_tail(80)
    base = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(base)
    followers = _followers(monkeypatch)

    def by_value(*_args: Any) -> Any:
        raise AssertionError("made value by value")

    monkeypatch.setattr(shifted.Follower, "_columns_by_value", by_value)
    policy = _set(base, "pruning.protect_turns", 4)
    replayer.run(policy)
    assert max(stop - first for _follower, first, stop in followers) > 100
    monkeypatch.undo()
    assert walked(_trace(replayer, policy)) == walked(_full_walk(session, policy))


def test_the_lane_columns_are_made_while_the_tui_waits_and_then_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``count_output_lines`` (what the TUI runs once a result is shown) makes the recorded
    side's lane columns too (not cancelled): the protected-turns change that follows reads those
    arrays, makes none, and leaves a full walk's trace; cancelled, it makes none."""
    session = _long_tail(80)
    base = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(base)
    [side] = replayer._sides.values()
    assert side._lane_columns is None  # (the first run, following nothing, needs none)
    cancel = threading.Event()
    cancel.set()
    replayer.count_output_lines(cancel)
    assert side._lane_columns is None
    replayer.count_output_lines()
    made = side._lane_columns
    assert made and list(made[0]) == side.baseline and list(made[1]) == side.baseline_after
    read: list[object] = []
    columns = RecordedSide.lane_columns

    def counted(self: RecordedSide) -> Any:
        answer = columns(self)
        read.append(answer)
        return answer

    monkeypatch.setattr(RecordedSide, "lane_columns", counted)
    policy = _set(base, "pruning.protect_turns", 4)
    replayer.run(policy)
    assert read and all(answer is None or answer == made for answer in read)
    assert side._lane_columns is made  # (not made again)
    monkeypatch.undo()
    assert walked(_trace(replayer, policy)) == walked(_full_walk(session, policy))


@pytest.mark.parametrize("at_once", [True, False])
def test_a_stretch_is_made_column_by_column_as_call_by_call(
    monkeypatch: pytest.MonkeyPatch, at_once: bool
) -> None:
    """A run of one delta is made over the columns at once (sums and comparisons over slices,
    or whole columns added to at once, :mod:`core.replay.lanes`), walking call by call only
    the call it stops at: the same columns as a walk call by call, floored at 0 (a delta far
    below the recording's) and stopped where a check fires or a call overflows."""
    if not at_once:
        monkeypatch.setattr(shifted.Follower, "_columns_at_once", lambda *_args: None)
    session = _long_tail(80)
    base = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(base)
    followers = _followers(monkeypatch)
    walked_calls: list[int] = []
    walk_calls = shifted.Follower._walk

    def counted(self: shifted.Follower, first: int, stop: int, *rest: Any) -> Any:
        walked_calls.append(stop - first)
        return walk_calls(self, first, stop, *rest)

    monkeypatch.setattr(shifted.Follower, "_walk", counted)
    replayer.run(_set(base, "pruning.protect_turns", 4))
    follower, first, stop = max(followers, key=lambda taken: taken[2] - taken[1])
    assert stop - first > 100 and max(walked_calls, default=0) <= 1  # (none walked)
    deltas = follower.earlier.deltas
    made_calls: list[int] = []
    for shift in (-(10**6), -2_000, -300, 41, 5_000, 60_000):
        for prev in ((5_000, Provenance.RECORDED), (0, Provenance.ESTIMATED)):
            columns: tuple[Any, ...] = (CheckRows(), [], [], [])
            made = follower._calls_from(first, stop, shift, prev, columns)
            walked_columns: tuple[Any, ...] = (CheckRows(), [], [], [])
            walked_made = walk_calls(
                follower, first, stop, deltas[first] + shift, prev, walked_columns
            )
            follower._deltas_and_provenances(
                first, [(deltas[first] + shift, len(walked_columns[0]))], walked_columns
            )
            assert made == walked_made
            for name in CheckRows.__slots__:
                made_column, walked_column = (
                    list(getattr(rows, name)) for rows in (columns[0], walked_columns[0])
                )
                assert made_column == walked_column, name
            assert [list(column) for column in columns[1:]] == [
                list(column) for column in walked_columns[1:]
            ]
            made_calls.append(len(columns[0]))
    # (some follow the whole stretch, some end early: a check fires, or a call overflows)
    assert max(made_calls) == stop - first and min(made_calls) < stop - first
    assert 0 in made_calls or min(made_calls) < (stop - first) // 2


def test_the_first_crossing_of_a_threshold() -> None:
    # A projection at the threshold or above stops the run there; a figure only where the
    # check checks now.
    flags = bytes([0, CHECKS_NOW, 0, CHECKS_NOW, 0])
    assert shifted._crossing(10, [1, 2, 3, 4, 5], [1, 2, 30, 4, 5], flags, 5) == 5
    assert shifted._crossing(10, [1, 2, 3, 4, 5], [1, 2, 30, 40, 5], flags, 5) == 3
    assert shifted._crossing(10, [1, 2, 10, 4, 5], [1, 2, 30, 40, 5], flags, 5) == 2
    assert shifted._crossing(10, [1, 2, 3, 4, 5], [1, 20, 3, 40, 5], flags, 5) == 1
    assert shifted._crossing(10, [], [], b"", 0) == 0
    assert shifted._plus([3, 1, 0, 9], -2) == [1, 0, 0, 7]
    assert shifted._plus([3, 1], 2) == [5, 3]


@pytest.mark.parametrize(
    "windows",
    [
        [200_000] * 5,
        [int("200000") for _ in range(5)],  # (equal, not the same objects)
        [None] * 5,
        [0] * 5,
        [-1] * 3,
        [200_000, 150_000, 200_000],
        [200_000, None, 200_000],
        [200_000, 0, 200_000],
        [None, 200_000],
    ],
)
def test_windows_fit_a_prompt_as_every_window_compared(windows: list[int | None]) -> None:
    """``_fits``: one pass for one window over every call, the same verdict as looking for an
    unknown window and comparing the smallest."""
    for prompt in (0, 149_999, 150_000, 150_001, 200_000, 200_001):
        known = None not in windows and 0 not in windows
        expected = known and prompt <= min(w for w in windows if w is not None)
        assert shifted._fits(windows, prompt) is expected


@pytest.mark.parametrize("scaled", [-500, -1, 0, 1, 700])
@pytest.mark.parametrize(
    "windows",
    [[1_000] * 6, [int("1000") for _ in range(6)], [1_000, 900, 1_000, 1_000, 1_000, 1_000]],
)
def test_the_first_prompt_over_one_window_is_found_a_column_at_once(
    windows: list[int], scaled: int
) -> None:
    """``_over_one_window``: the first call whose prompt plus ``scaled`` is over the window, as
    each call compared; None (each compared by the caller) where the window changes, or the
    prompts are not an array of figures that fit a lane."""
    prompts = [0, 300, 999, 1_000, 1_001, 1_700]
    found = shifted._over_one_window(windows, array("i", prompts), scaled)
    if len(set(windows)) > 1:
        assert found is None
        return
    expected = next(
        (i for i, prompt in enumerate(prompts) if prompt + scaled > windows[0]), len(prompts)
    )
    assert found == expected
    assert shifted._over_one_window(windows, prompts, scaled) is None  # (a list)
    assert shifted._over_one_window(windows, array("i", [-1, *prompts[1:]]), scaled) is None
