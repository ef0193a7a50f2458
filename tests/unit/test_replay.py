"""The replay engine: recorded + delta, truncation, checks, projection, recovery, bad input,
incremental re-simulation and compare."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.model.session import CompactionTrigger, Provenance, Session, SourceFormat, UsageConvention
from core.model.tokens import get_counter
from core.policy import PRESETS, Policy, get_preset
from core.replay import (
    CompareResult,
    ReplayCancelled,
    Replayer,
    ReplayResult,
    compare,
    replay,
)
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.sessions import replay_and_plain_truncation


def _quiet(base: str = "pi") -> Policy:
    """A policy that changes nothing: no truncation, no pruning, no automatic compaction."""
    policy = get_preset(base)
    policy.truncation.enabled = False
    policy.pruning.enabled = False
    policy.compaction.auto = False
    policy.compaction.overflow_recovery = False
    policy.estimator = "chars/4"
    return policy


def _eager(base: str = "pi") -> Policy:
    """Checks before every call, on the last figure only (no projection), no truncation."""
    policy = get_preset(base)
    policy.truncation.enabled = False
    policy.compaction.check_before_each_call = True
    policy.compaction.project_after_tool_results = False
    policy.estimator = "chars/4"
    return policy


def _growing(*contexts: int, turn_before: int | None = None) -> Session:
    """One call per recorded context figure, each followed by a tool output that accounts for
    the growth to the next figure (a small one where the figure does not grow)."""
    script = SessionBuilder().user("start")
    following = [*contexts[1:], contexts[-1] + 2_100]
    for position, (context, upcoming) in enumerate(zip(contexts, following, strict=True)):
        if turn_before is not None and position == turn_before:
            script.user("next turn")
        size = max(upcoming - context - 100, 10)
        script.call(context=context).result(text_of_tokens(size, str(position % 10)))
    return script.reply("end", context=following[-1]).session(window=200_000)


# --- recorded + delta ---------------------------------------------------------------------------


def test_a_policy_that_changes_nothing_sees_the_recorded_figures() -> None:
    session = _growing(10_000, 30_000, 60_000, 190_000, 230_000)
    result = replay(session, _quiet())
    assert [p.simulated_tokens for p in result.points] == [p.recorded_tokens for p in result.points]
    assert all(p.simulated_provenance is Provenance.RECORDED for p in result.points)
    assert result.summary.compactions == 0
    # 230,000 > 200,000: the recording overflowed there, and so does the replay.
    assert [(e.kind, e.call_index) for e in result.events] == [("overflow", 4), ("overflow", 5)]
    assert [p.overflow_recorded for p in result.points] == [False] * 4 + [True, True]
    assert result.summary.overflows_simulated == 2


def test_truncation_lowers_every_later_call_by_what_it_removed() -> None:
    big = "\n".join(f"line {n} " + "y" * 80 for n in range(3_000))  # about 264 KB
    session = (
        SessionBuilder()
        .user()
        .call("read", context=5_000)
        .result(big)
        .call(context=72_000)
        .result("ok")
        .reply(context=72_100)
        .session()
    )
    policy = _quiet()
    policy.truncation.enabled = True
    policy.truncation.max_bytes = 10_000
    result = replay(session, policy)
    (event,) = [e for e in result.events if e.kind == "truncate"]
    assert event.message_index == 2
    assert event.call_index == 1  # the first call that sends the output
    assert event.tokens_before is not None and event.tokens_after is not None
    removed = event.tokens_before - event.tokens_after
    assert removed > 60_000
    state = result.messages[2]
    assert state.truncated and state.truncation_note and "truncated" in state.truncation_note
    assert state.tokens_after_truncation == event.tokens_after
    points = result.points
    assert points[0].simulated_tokens == 5_000  # before the output: unchanged
    recorded_1, recorded_2 = points[1].recorded_tokens, points[2].recorded_tokens
    assert recorded_1 is not None and recorded_2 is not None
    drop = recorded_1 - points[1].simulated_tokens
    assert drop > 0
    assert recorded_2 - points[2].simulated_tokens == drop
    assert points[1].simulated_provenance is not Provenance.RECORDED
    assert result.summary.tokens_truncated == removed


# --- when compaction fires ------------------------------------------------------------------


def test_threshold_fires_right_before_the_call_after_the_crossing() -> None:
    session = _growing(10_000, 90_000, 170_000, 185_000, 120_000)
    result = replay(session, _eager())
    compactions = [e for e in result.events if e.kind == "compact"]
    assert len(compactions) == 1
    (event,) = compactions
    # call 3 reports 185,000 + 10 output > 183,616; the check right before call 4 fires.
    assert event.trigger == "threshold"
    assert event.trigger_call_index == 3
    assert event.call_index == 4
    assert event.tokens_before == 185_010
    assert event.tokens_after is not None and event.tokens_after < 185_010
    assert event.head_indices and event.tail_indices
    assert max(event.head_indices) < min(event.tail_indices)
    assert result.points[4].check_fired
    recorded_at_4 = result.points[4].recorded_tokens
    assert recorded_at_4 is not None
    assert result.points[4].simulated_tokens < recorded_at_4
    for index in event.head_indices:
        assert result.messages[index].summarised_by == result.events.index(event)
        assert not result.messages[index].in_context_at_end
    assert result.messages[event.tail_indices[-1]].kept_by == result.events.index(event)


def test_turn_end_checks_leave_the_mid_turn_gap_open() -> None:
    # pi checks only when a turn ends: within one long turn nothing fires ...
    one_turn = _growing(10_000, 90_000, 170_000, 185_000, 190_000)
    pi = get_preset("pi")
    pi.truncation.enabled = False
    assert not [e for e in replay(one_turn, pi).events if e.kind == "compact"]
    # ... and as soon as a new turn starts after the crossing, it does.
    two_turns = _growing(10_000, 90_000, 170_000, 185_000, 190_000, turn_before=4)
    (event,) = [e for e in replay(two_turns, pi).events if e.kind == "compact"]
    assert (event.trigger_call_index, event.call_index) == (3, 4)


def test_projection_fires_before_the_call_the_tool_output_would_overflow() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=20_000)
        .result(text_of_tokens(60_000, "a"))
        .call(context=81_000)
        .result(text_of_tokens(150_000, "b"))  # 81,010 + 150,000: over the window
        .reply(context=231_100)
        .session()
    )
    plain = replay(session, _eager())
    assert plain.summary.compactions == 0 or plain.events[0].trigger == "overflow"
    projecting = _eager()
    projecting.compaction.project_after_tool_results = True
    result = replay(session, projecting)
    first = next(e for e in result.events if e.kind == "compact")
    assert first.trigger == "projection"
    assert first.call_index == 2
    assert result.points[2].check_tokens == 81_010 + 150_000


def test_overflow_recovery_compacts_and_retries_once() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=2_000)
        .result(text_of_tokens(120_000, "h"))
        .call(context=122_100)
        .result(text_of_tokens(90_000, "t"))
        .reply(context=212_200)
        .session()
    )
    policy = _eager()
    policy.compaction.auto = False  # only recovery can act
    result = replay(session, policy)
    (event,) = [e for e in result.events if e.kind == "compact"]
    assert event.trigger == "overflow"
    assert event.call_index == 2
    assert not result.points[2].overflow_simulated
    assert result.points[2].overflow_recorded
    assert result.summary.overflows_avoided == 1

    policy.compaction.overflow_recovery = False
    stuck = replay(session, policy)
    assert [e.kind for e in stuck.events] == ["overflow"]
    assert stuck.points[2].overflow_simulated
    assert stuck.summary.overflows_simulated == 1


def test_a_manual_recorded_compaction_is_applied_by_any_policy() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=30_000)
        .result(text_of_tokens(20_000, "m"))
        .reply(context=50_100)
        .compaction(trigger="manual", tokens_before=50_100)
        .user("carry on")
        .reply(context=6_000)
        .session()
    )
    result = replay(session, get_preset("seed"))
    (event,) = [e for e in result.events if e.kind in ("compact", "recorded-compaction")]
    assert event.trigger == "manual"
    assert event.at_message_index == 4
    assert event.recorded_index == 0
    (row,) = result.fidelity
    assert row.outcome == "manual"


def test_the_recording_agents_policy_takes_its_own_compaction_as_recorded() -> None:
    script = SessionBuilder(convention=UsageConvention.PI).user()
    for n in range(6):
        script.call(context=40_000 + 30_000 * n).result(text_of_tokens(3_000, str(n)))
    # the last call reports 190,000 + 10 > 183,616: pi compacts here, keeping m9 onwards
    script.compaction(tokens_before=190_010, first_kept=9, trigger="unknown")
    script.user("go on").call(context=30_000).result("ok").reply(context=31_000)
    session = script.session(fmt=SourceFormat.PI)
    pi = get_preset("pi")
    pi.truncation.enabled = False
    result = replay(session, pi)
    assert result.recording_policy
    (row,) = result.fidelity
    assert row.outcome == "same"
    (event,) = [e for e in result.events if e.kind == "compact"]
    assert event.recorded_index == 0
    # Taking the recorded result keeps the replay on the recorded figures afterwards.
    after = result.points[event.call_index :]
    assert [p.simulated_tokens for p in after] == [p.recorded_tokens for p in after]


# --- bad input ------------------------------------------------------------------------------------


def test_no_usage_at_all_is_estimated_and_said_so() -> None:
    session = (
        SessionBuilder()
        .user(text_of_tokens(100, "u"))
        .call()
        .result(text_of_tokens(1_000, "o"))
        .reply(text_of_tokens(50, "r"))
        .session()
    )
    result = replay(session, _quiet())
    assert any("no recorded usage" in note for note in result.notes)
    assert all(p.recorded_tokens is None for p in result.points)
    assert all(p.simulated_provenance is Provenance.ESTIMATED for p in result.points)
    assert result.overhead_tokens == 0
    # before-reply figures: the messages before each call, estimated
    user, call, output, _reply = get_counter("chars/4").messages_tokens(session.messages)
    assert [p.simulated_tokens for p in result.points] == [user, user + call + output]


def test_zero_usage_after_a_compaction_is_projected_not_trusted() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=1_000)
        .result(text_of_tokens(99_000, "z"))
        .reply(context=100_100)
        .compaction(tokens_before=100_100, trigger="manual")
        .user("again")
        .reply(context=0)  # an aborted call: all-zero usage
        .user("and again")
        .reply(context=9_000)
        .session()
    )
    result = replay(session, _quiet())
    zero = result.points[2]
    assert zero.recorded_tokens is None
    assert zero.baseline_provenance is Provenance.ESTIMATED
    assert 0 < zero.baseline_tokens < 100_000
    assert any("all-zero" in note for note in result.notes)


def test_usage_going_backwards_without_a_compaction_is_kept_and_noted() -> None:
    session = _growing(50_000, 40_000, 60_000)
    result = replay(session, _quiet())
    assert [p.simulated_tokens for p in result.points][:3] == [50_000, 40_000, 60_000]
    assert any("fell" in note for note in result.notes)


def test_unknown_window_replays_without_thresholds() -> None:
    session = _growing(10_000, 250_000)
    session.context_window = None
    session.window_source = "unknown"
    result = replay(session, get_preset("pi"))
    assert result.window is None and result.threshold is None
    assert not any(p.overflow_simulated for p in result.points)
    assert any("unknown context window" in note and "--window" in note for note in result.notes)
    fixed = get_preset("pi")
    fixed.context_window = 200_000
    assert replay(session, fixed).threshold == 183_616


def test_a_window_smaller_than_the_system_prompt_overflows_everywhere_without_looping() -> None:
    session = _growing(50_000, 52_100, 54_200)
    session.context_window = 20_000
    result = replay(session, get_preset("seed"))
    assert all(p.overflow_simulated for p in result.points)
    assert any("smaller than the recorded overhead" in note for note in result.notes)
    # one recovery attempt per call at most, one overflow event per call
    assert sum(1 for e in result.events if e.kind == "overflow") == len(result.points)


def test_a_session_of_one_message() -> None:
    result = replay(SessionBuilder().user("hi").session(), get_preset("opencode"))
    assert result.points == [] and result.events == []
    assert result.summary.calls == 0 and result.summary.peak_simulated == 0
    assert len(result.messages) == 1 and result.messages[0].in_context_at_end
    assert any("no model calls" in note for note in result.notes)


# --- determinism, JSON, progress, cancel --------------------------------------------------------


def _long_session(messages: int = 700, seed: int = 3) -> Session:
    """Many turns, recorded usage, recorded compactions (automatic and manual), window 60k."""
    rng = random.Random(seed)
    script = SessionBuilder()
    context = 3_000
    while len(script.messages) < messages:
        if context > 50_000:
            # every other recorded compaction is the user's (manual), the rest automatic
            manual = len(script.compactions) % 2 == 1
            script.compaction(tokens_before=context, trigger="manual" if manual else "auto")
            context = 3_000 + 400
        script.user(f"task {len(script.messages)} " + "w" * rng.randrange(20, 400))
        context += 120
        for _ in range(rng.randrange(1, 6)):
            size = rng.choice([50, 200, 800, 3_000, 12_000])
            script.call(rng.choice(["read", "bash", "grep"]), context=context)
            script.result(text_of_tokens(size, chr(97 + rng.randrange(26))))
            context += 20 + size
        script.reply("done " + "d" * rng.randrange(10, 300), context=context)
        context += 60
    return script.session(window=60_000)


def test_replay_is_deterministic_and_its_json_round_trips() -> None:
    session = _long_session(300)
    first = replay(session, get_preset("seed"))
    second = replay(session, get_preset("seed"))
    assert first.summary.compactions > 0
    dumped = first.model_dump(mode="json")
    assert dumped == second.model_dump(mode="json")
    assert dumped["schema_version"] == 1
    assert ReplayResult.model_validate(dumped).model_dump(mode="json") == dumped


def test_progress_is_reported_and_cancel_stops_the_run() -> None:
    session = _long_session(1_200)
    seen: list[tuple[int, int]] = []
    replay(session, get_preset("pi"), progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (len(session.messages), len(session.messages))
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ReplayCancelled):
        replay(session, get_preset("pi"), cancel=cancel)


# --- incremental re-simulation ----------------------------------------------------------------


def _changes(base: Policy) -> list[Policy]:
    edits: list[Callable[[Policy], None]] = [
        lambda p: setattr(p.compaction, "reserve_tokens", p.compaction.reserve_tokens + 3_000),
        lambda p: setattr(p.compaction, "reserve_tokens", 0),
        lambda p: setattr(p.truncation, "max_bytes", 9_000),
        lambda p: setattr(p.truncation, "max_lines", 40),
        lambda p: setattr(p.split, "tail_budget_tokens", 3_000),
        lambda p: setattr(p.compaction, "threshold_rule", "codex"),
        lambda p: setattr(p, "context_window", 45_000),
        lambda p: setattr(p.compaction, "overflow_recovery", not p.compaction.overflow_recovery),
        lambda p: setattr(p.pruning, "enabled", not p.pruning.enabled),
        lambda p: setattr(p.compaction, "project_after_tool_results", False),
        lambda p: setattr(p, "name", "renamed"),
    ]
    out = []
    for edit in edits:
        policy = base.model_copy(deep=True)
        edit(policy)
        out.append(policy)
    return out


@pytest.mark.parametrize("preset", list(PRESETS))
def test_incremental_runs_equal_fresh_runs(preset: str) -> None:
    session = _long_session(500)
    base = get_preset(preset)
    if base.estimator.startswith("tiktoken"):
        base.estimator = "chars/4"
    replayer = Replayer(session)
    replayer.run(base)
    resumed = []
    for changed in _changes(base):
        incremental = replayer.run(changed)
        fresh = replay(session, changed)
        assert incremental.model_dump(mode="json") == fresh.model_dump(mode="json"), changed
        resumed.append(incremental.resumed_from_call)
        replayer.run(base)
    assert any(call for call in resumed), "no change reused any of the previous run"


def test_a_later_threshold_change_reuses_the_calls_before_it() -> None:
    session = _long_session(600)
    base = _eager("seed")
    replayer = Replayer(session)
    first = replayer.run(base)
    compactions = [e for e in first.events if e.kind == "compact"]
    assert compactions
    assert first.points  # built: a resumed run shares the points a result has built
    higher = base.model_copy(deep=True)
    higher.compaction.codex_ratio = 0.95
    higher.compaction.threshold_rule = "codex"
    again = replayer.run(higher)
    assert again.resumed_from_call is not None and again.resumed_from_call > 0
    # the points before the resume point are the very objects of the first run
    reused = again.resumed_from_call
    if first.window == again.window and first.threshold == again.threshold:
        assert all(
            a is b for a, b in zip(first.points[:reused], again.points[:reused], strict=True)
        )
    assert replayer.run(base) is first  # an identical policy returns the cached result


def test_message_states_stay_bounded_and_equal_to_fresh_ones_after_many_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import core.replay.timeline

    monkeypatch.setattr(core.replay.timeline, "_STATES_SLACK", 0)  # bounded at four per message
    session = _long_session(60)
    replayer = Replayer(session)
    n = len(session.messages)
    sizes = []
    for step in range(30):
        policy = get_preset("seed")
        policy.context_window = 20_000 + 400 * step  # moves compactions: new message states
        incremental = replayer.run(policy)
        sizes.append(len(replayer._states))
        assert incremental.model_dump(mode="json") == replay(session, policy).model_dump(
            mode="json"
        )
    assert max(sizes) <= 5 * n
    assert min(sizes[10:]) >= n  # trimmed to the last run's states, never emptied
    assert any(later < earlier for earlier, later in pairwise(sizes))


def test_a_threshold_change_does_not_inherit_a_projection_that_crossed_mid_turn() -> None:
    """Checking at turn ends only, a projection that crosses mid-turn is remembered until the
    turn ends. Under a higher threshold it never crossed: the resumed run must not fire on the
    flag the first run left in its checkpoints."""
    session = (
        SessionBuilder()
        .user("go")
        .call(context=100_000)
        .result(text_of_tokens(86_000, "a"))  # projected at the next call: about 186,000
        .call(context=120_000)
        .result("ok")
        .user("next")
        .call(context=121_000)
        .result("ok")
        .reply(context=122_000)
        .session()
    )
    policy = _eager()
    policy.compaction.check_before_each_call = False
    policy.compaction.project_after_tool_results = True
    higher = policy.model_copy(deep=True)
    higher.compaction.reserve_tokens = 10_000  # threshold 183,616 -> 190,000
    replayer = Replayer(session)
    first = replayer.run(policy)
    assert [(e.kind, e.call_index, e.trigger) for e in first.events] == [
        ("compact", 2, "projection")
    ]
    resumed = replayer.run(higher)
    assert resumed.events == []
    assert resumed.model_dump(mode="json") == replay(session, higher).model_dump(mode="json")


@pytest.mark.parametrize("preset", ["seed", "opencode", "codex"])
def test_cached_compactions_give_the_result_computing_them_gives(preset: str) -> None:
    from core.llm.mock import MockSummarizer

    session = _long_session(700)
    base = get_preset(preset)
    base.pruning.enabled = True  # pruned copies are made only where kept: exercise that too
    mock = MockSummarizer()
    replayer = Replayer(session, summarizer_factory=lambda _policy: mock)
    first = replayer.run(base)
    written = mock.calls
    assert written > 0 and any(e.kind == "compact" for e in first.events)
    # Forget the traces: the run starts afresh, and every compaction comes from the caches.
    replayer._traces.clear()
    again = replayer.run(base)
    assert again is not first and again.resumed_from_call is None
    assert mock.calls == written  # no summary written again
    assert again.model_dump(mode="json") == first.model_dump(mode="json")
    # A summariser that has seen these heads before (its entry cache is warm) writes the same
    # summaries as a new one.
    warm = replay(session, base, summarizer=mock)
    cold = replay(session, base, summarizer=MockSummarizer())
    assert (
        warm.model_dump(mode="json")
        == cold.model_dump(mode="json")
        == first.model_dump(mode="json")
    )


# --- compare ---------------------------------------------------------------------------------------


def test_compare_runs_every_policy_side_by_side() -> None:
    session = _long_session(400)
    policies = [get_preset(name) for name in ("seed", "pi", "codex")]
    result = compare(session, policies)
    assert isinstance(result, CompareResult)
    assert [row.policy for row in result.rows] == ["seed", "pi", "codex"]
    for row, policy in zip(result.rows, policies, strict=True):
        alone = replay(session, policy)
        assert row.summary == alone.summary
        assert row.threshold == alone.threshold
        assert sum(row.fidelity.values()) == len(session.compactions)
    assert result.model_dump(mode="json")["schema_version"] == 1


def _random_session(seed: int) -> Session:
    """A short random session: uneven outputs, recorded compactions of every kind, some early."""
    rng = random.Random(seed)
    script = SessionBuilder()
    context = rng.randrange(500, 4_000)
    for _turn in range(rng.randrange(2, 9)):
        if script.messages and rng.random() < 0.35:
            triggers: list[CompactionTrigger] = ["manual", "auto", "unknown"]
            trigger = rng.choice(triggers)
            before = context if rng.random() < 0.7 else None
            kept = rng.randrange(len(script.messages)) if rng.random() < 0.4 else None
            script.compaction(tokens_before=before, trigger=trigger, first_kept=kept)
            context = rng.randrange(500, 4_000)
        script.user("turn " + "u" * rng.randrange(0, 200))
        for _ in range(rng.randrange(0, 5)):
            size = rng.choice([5, 80, 600, 2_500, 9_000, 20_000])
            usage = None if rng.random() < 0.15 else (0 if rng.random() < 0.05 else context)
            script.call(rng.choice(["read", "bash", "skill"]), context=usage)
            lines = "\n".join(["l" * 30] * max(1, size // 8))
            script.result(lines if rng.random() < 0.5 else text_of_tokens(size, "q"))
            context += size + rng.randrange(-300, 300)
        script.reply("ok", context=context if rng.random() < 0.9 else None)
    fmt = rng.choice([SourceFormat.CTXSCOPE, SourceFormat.PI, SourceFormat.CLAUDE_CODE])
    return script.session(window=rng.choice([30_000, 45_000, 80_000]), fmt=fmt)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    preset=st.sampled_from(list(PRESETS)),
    first=st.integers(0, 10),
    second=st.integers(0, 10),
)
def test_incremental_equals_fresh_on_random_sessions(
    seed: int, preset: str, first: int, second: int
) -> None:
    """Base, then one change, then a second change on top: each equals a fresh replay."""
    session = _random_session(seed)
    base = get_preset(preset)
    base.estimator = "chars/4"
    once = _changes(base)[first]
    twice = _changes(once)[second]
    replayer = Replayer(session)
    replayer.run(base)
    for policy in (once, twice):
        incremental = replayer.run(policy)
        fresh = replay(session, policy)
        assert incremental.model_dump(mode="json") == fresh.model_dump(mode="json")


def test_the_replay_and_the_reports_share_one_placing_of_the_calls() -> None:
    """The calls and compactions are placed once per session (a third of a second on 100 MB),
    and again when the session grows or for a copy."""
    from core.insights.context_walk import RecordedWalk
    from core.replay.engine import Replayer
    from core.replay.recorded import placed

    session = _growing(10_000, 30_000, 60_000)
    calls, recorded = placed(session)
    assert Replayer(session)._calls is calls
    walk = RecordedWalk(session)
    assert walk.calls is calls and walk.recorded is recorded
    assert placed(session.model_copy())[0] is not calls
    session.messages.append(session.messages[-1])
    grown, _ = placed(session)
    assert grown is not calls and grown.n == calls.n + 1


def test_the_replay_truncates_exactly_the_outputs_over_a_limit() -> None:
    # Within and over by bytes with few characters (3-byte chars), over by lines only, over by
    # characters: the replay measures only the outputs that may fit, and must agree with a
    # truncation of every output.
    outputs = ["ok", "中" * 333, "中" * 334, "a\n" * 40, "a\n" * 39 + "a", "b" * 1_001, "é" * 500]
    policy = _quiet()
    policy.truncation.enabled = True
    policy.truncation.max_bytes = 1_000
    policy.truncation.max_lines = 40
    truncated, expected = replay_and_plain_truncation(outputs, policy)
    assert truncated == expected
    assert sum(expected) == 3
