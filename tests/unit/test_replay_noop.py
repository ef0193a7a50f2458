"""Compaction attempts that change nothing: the replay reports them, and does not make again an
attempt that would end the same way (counted in attempts and summary requests, never timed).

The reference for "the same outcome" is :class:`EveryAttempt`, a replayer that makes every
attempt, as the engine did before it learnt to skip futile ones.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.llm.mock import MockSummarizer
from core.llm.protocol import SummaryResult
from core.model.session import Session, SourceFormat
from core.policy import PRESETS, Policy, get_preset
from core.replay import Replayer
from core.replay.results import Trigger
from core.replay.state import Item, Stuck
from core.replay.stuck import Appended, futile
from tests.support.builders import SessionBuilder, text_of_tokens


class CountingSummarizer(MockSummarizer):
    """The offline mock with a small context, counting the summary requests sent to it."""

    def __init__(self, context_limit_tokens: int | None) -> None:
        super().__init__(context_limit_tokens=context_limit_tokens)
        self.requests = 0

    async def summarize(self, *args: Any, **kwargs: Any) -> SummaryResult:
        self.requests += 1
        return await super().summarize(*args, **kwargs)


class CountingReplayer(Replayer):
    """Counts the compaction attempts that reach the compaction pipeline, and its requests."""

    def __init__(self, session: Session, limit: int | None) -> None:
        self.summarizer = CountingSummarizer(limit)
        super().__init__(session, summarizer_factory=lambda _policy: self.summarizer)
        self.attempts = 0

    def _compact(self, *args: Any, **kwargs: Any) -> Any:
        self.attempts += 1
        return super()._compact(*args, **kwargs)


class EveryAttempt(CountingReplayer):
    """Makes every attempt the policy sets out to make."""

    def _futile(self, *args: Any) -> bool:
        return False


class BothReadings(CountingReplayer):
    """Reads each attempt's appended messages both ways: :func:`core.replay.stuck.futile` of the
    :class:`~core.replay.stuck.Appended` stretch (no item made) and of its items as a list
    (the reading it replaces); the answers must agree."""

    def __init__(self, session: Session, limit: int | None) -> None:
        super().__init__(session, limit)
        self.answers: list[bool] = []

    def _futile(self, stuck: Stuck, appended: Sequence[Item], policy: Policy) -> bool:
        assert isinstance(appended, Appended)
        links = self._calls.linked_back()
        fast = futile(stuck, appended, policy, links)
        assert fast == futile(stuck, list(appended), policy, links)
        self.answers.append(fast)
        return fast


def _policy(strategy: str = "summary-only") -> Policy:
    policy = get_preset("claude-code")
    policy.truncation.enabled = False
    policy.compaction.strategy = strategy  # type: ignore[assignment]
    return policy


def _calls(script: SessionBuilder, count: int, context: int = 100_000) -> int:
    """``count`` calls, each with a 700-token output, the recorded context growing 1,700 a call
    (it crosses claude-code's threshold, 167,000, at the 40th); returns the context reached."""
    for n in range(count):
        script.call(context=context).result(text_of_tokens(700, str(n % 10)))
        context += 1_700
    return context


def _turns_session(protect_turns: int) -> tuple[Session, Policy]:
    """A session whose head overflows the summariser until older outputs are pruned, with two
    later turns, and a pruning policy protecting ``protect_turns`` turns."""
    script = SessionBuilder().user("start " + text_of_tokens(400, "u"))
    context = _calls(script, 46)
    for turn in ("next", "again"):
        context = _calls(script.user(turn), 6, context)
    session = script.reply("end", context=context).session(window=200_000)
    policy = _policy()
    policy.pruning.enabled = True
    policy.pruning.protect_turns = protect_turns
    return session, policy


def _stuck_session(calls_over: int = 12, late_output: int = 0) -> Session:
    """Forty calls under the threshold, then ``calls_over`` calls above it: a head far too
    large for a 3,000-token summariser, even without the tail or its 16 oldest messages.
    ``late_output``: the bytes of one more output, four calls before the end."""
    script = SessionBuilder().user("start " + text_of_tokens(400, "u"))
    context = _calls(script, 40 + calls_over - 4)
    if late_output:
        script.call(context=context).result("y" * late_output)
    context = _calls(script, 4, context)
    return script.reply("end", context=context).session(window=200_000)


def _same(a: Any, b: Any) -> None:
    assert a.model_dump(mode="json") == b.model_dump(mode="json")


@pytest.mark.parametrize("strategy", ["summary-only", "codex", "tail"])
def test_a_summary_request_too_large_is_tried_once_while_the_head_only_grows(
    strategy: str,
) -> None:
    session = _stuck_session()
    policy = _policy(strategy)
    engine = CountingReplayer(session, limit=3_000)
    result = engine.run(policy)
    reference = EveryAttempt(session, limit=3_000)
    expected = reference.run(policy)
    _same(result, expected)
    assert result.summary.compactions == 0
    fired = sum(1 for p in result.points if p.check_fired)
    assert fired > 5
    # The policy kept trying; the replay made the first attempt only.
    assert reference.attempts >= fired
    assert engine.attempts == 1
    # The whole head only: the mock says it would refuse each shorter one allowed without being
    # sent it (core.llm.protocol.OverflowProbe), and its refusal of the last is the error
    # (before, the last was sent too: 2 an attempt).
    assert engine.summarizer.requests == 1
    assert reference.summarizer.requests == reference.attempts >= fired
    # Every attempt is still reported.
    assert result.summary.noop_compactions == reference.attempts
    (note,) = [n for n in result.notes if "compaction failed" in n]
    first = next(p.call_index for p in result.points if p.check_fired)
    assert f"crossed the threshold before call {first}, but the compaction failed" in note
    assert note.endswith(f"(and {reference.attempts - 1} more like it)")
    # The failure is kept for its message, not for the head and request its traceback holds.
    errors = [o for o in engine._compactions.values() if isinstance(o, Exception)]
    assert errors and all(e.__traceback__ is None and e.__cause__ is None for e in errors)


def test_without_a_failure_nothing_is_skipped_and_nothing_is_reported() -> None:
    session = _stuck_session()
    engine = CountingReplayer(session, limit=None)
    result = engine.run(_policy())
    assert result.summary.compactions >= 1
    assert result.summary.noop_compactions == 0
    _same(result, EveryAttempt(session, limit=None).run(_policy()))


@pytest.mark.parametrize(("protect_turns", "attempts", "compactions"), [(1, 2, 1), (2, 3, 0)])
def test_a_new_turn_makes_a_pruning_policy_try_again(
    protect_turns: int, attempts: int, compactions: int
) -> None:
    """Pruning protects the last turns: once a turn starts, older outputs may be pruned and the
    head may fit, so the attempt is made again (once per turn, not once per call). Protecting
    one turn, the second turn's attempt prunes the first turn and fits; protecting two, the
    head keeps a whole turn of outputs and never fits."""
    session, policy = _turns_session(protect_turns)
    engine = CountingReplayer(session, limit=3_000)
    reference = EveryAttempt(session, limit=3_000)
    result = engine.run(policy)
    _same(result, reference.run(policy))
    assert engine.attempts == attempts
    assert reference.attempts > attempts + 3
    assert result.summary.compactions == compactions


def test_a_head_that_was_everything_because_the_tail_was_is_tried_again() -> None:
    """Keeping the last turn: while that turn is the whole conversation, everything is head
    and its request does not fit. Once the turn outgrows the tail budget, a tail is kept again:
    the head is shorter, and fits."""
    session = (
        SessionBuilder()
        .user("go")
        .call("read", context=150_000)
        .result(text_of_tokens(600, "a"))
        .call("read", context=170_000)  # over the threshold: everything is tail, so all is head
        .result(text_of_tokens(600, "b"))
        .call("read", context=171_000)
        .result(text_of_tokens(1_000, "c"))
        .reply("done", context=172_000)
        .session(window=200_000)
    )
    policy = get_preset("opencode")
    policy.truncation.enabled = False
    policy.split.tail_turns = 1
    policy.split.tail_budget_tokens = 2_000
    policy.compaction.max_head_drops = 0
    engine = CountingReplayer(session, limit=1_200)
    result = engine.run(policy)
    _same(result, EveryAttempt(session, limit=1_200).run(policy))
    assert engine.attempts == 2
    (event,) = [e for e in result.events if e.kind == "compact"]
    assert (event.call_index, event.head_indices) == (3, [0, 1, 2])


def test_a_recorded_compaction_rebuilds_the_context_and_the_next_attempt_is_made() -> None:
    script = SessionBuilder().user("start " + text_of_tokens(400, "u"))
    context = _calls(script, 50)
    script.compaction(trigger="manual", tokens_before=context)
    script.user("carry on")
    context = _calls(script, 50)
    session = script.reply("end", context=context).session(
        window=200_000, fmt=SourceFormat.CLAUDE_CODE
    )
    policy = _policy()  # claude-code: the recording's own policy takes the manual compaction
    engine = CountingReplayer(session, limit=3_000)
    reference = EveryAttempt(session, limit=3_000)
    result = engine.run(policy)
    _same(result, reference.run(policy))
    assert [e.kind for e in result.events] == ["recorded-compaction"]
    assert engine.attempts == 2  # one before the recorded compaction, one after it
    assert reference.attempts > 10


def test_nothing_to_compact_is_not_tried_again_on_the_same_context() -> None:
    """A window smaller than the recorded overhead: the check fires and the call overflows at
    every call, and the tail split finds nothing to compact. The overflow recovery right after
    the threshold check at the same call has the very same context: not tried again."""
    session = (
        SessionBuilder()
        .user("go")
        .call(context=50_000)
        .result("a")
        .call(context=50_100)
        .result("b")
        .reply(context=50_200)
        .session(window=20_000)
    )
    policy = get_preset("pi")
    policy.compaction.check_before_each_call = True
    engine = CountingReplayer(session, limit=None)
    reference = EveryAttempt(session, limit=None)
    result = engine.run(policy)
    _same(result, reference.run(policy))
    assert result.summary.noop_compactions == reference.attempts > engine.attempts
    assert any("nothing to compact" in note for note in result.notes)


def test_a_resumed_run_keeps_skipping_and_equals_a_fresh_one() -> None:
    session = _stuck_session(calls_over=16, late_output=60_000)
    policy = _policy()
    policy.truncation.enabled = True
    policy.truncation.max_bytes = 50_000
    engine = CountingReplayer(session, limit=3_000)
    engine.run(policy)
    assert engine.attempts == 1
    # Only the late output's truncation changes: the run resumes after the failed attempt.
    later = policy.model_copy(deep=True)
    later.truncation.max_bytes = 40_000
    resumed = engine.run(later)
    assert resumed.resumed_from_call is not None
    assert resumed.resumed_from_call > next(p.call_index for p in resumed.points if p.check_fired)
    _same(resumed, EveryAttempt(session, limit=3_000).run(later))
    assert engine.attempts == 1
    # A threshold change resumes before the first attempt: one new attempt, then skips again.
    lower = later.model_copy(deep=True)
    lower.compaction.reserve_tokens = 36_000
    _same(engine.run(lower), EveryAttempt(session, limit=3_000).run(lower))
    assert engine.attempts == 2


def test_a_run_keeps_the_text_of_the_first_note_of_each_kind_only() -> None:
    """Every failed attempt is kept (its place, its count in the result's note), the text of
    the first only: the result shows no other (5,000 failures held 2.5 MB of texts); a run
    resumed after the first failure still says it, and counts the later ones."""
    session = _stuck_session(calls_over=16, late_output=60_000)
    policy = _policy()
    policy.truncation.enabled = True
    policy.truncation.max_bytes = 50_000
    engine = CountingReplayer(session, limit=3_000)
    result = engine.run(policy)
    (trace,) = engine._traces.values()
    failed = [text for _when, key, text in trace.run_notes if key == "failed"]
    assert len(failed) == result.summary.noop_compactions > 2
    assert failed[0] and not any(failed[1:])
    later = policy.model_copy(deep=True)
    later.truncation.max_bytes = 40_000
    resumed = engine.run(later)
    assert resumed.resumed_from_call is not None
    assert resumed.notes == EveryAttempt(session, limit=3_000).run(later).notes
    (note,) = [n for n in resumed.notes if "compaction failed" in n]
    assert note.startswith(failed[0]) and note.endswith(f"(and {len(failed) - 1} more like it)")


# --- skipping never changes a replay ------------------------------------------------------------


def _random_session(seed: int) -> Session:
    """Turns of calls whose recorded context crosses a 20,000-token window's threshold, with
    results that answer older calls, stray summaries and recorded compactions."""
    rng = random.Random(seed)
    script = SessionBuilder()
    context = rng.randrange(2_000, 12_000)
    for _turn in range(rng.randrange(2, 7)):
        if script.messages and rng.random() < 0.15:
            script.compaction(trigger=rng.choice(["manual", "auto"]), tokens_before=context)
            context = rng.randrange(2_000, 8_000)
        if rng.random() < 0.1:
            script.user("## Goal\n- an earlier summary", summary=True)
        script.user("turn " + text_of_tokens(rng.randrange(5, 400), "u"))
        for _ in range(rng.randrange(1, 5)):
            size = rng.choice([20, 300, 900, 2_500])
            script.call(rng.choice(["read", "bash", "skill"]), context=context)
            if rng.random() < 0.2:  # a second call before the first one's result
                script.call("grep", context=context + 50)
                script.result(text_of_tokens(size, "a"))
            script.result(text_of_tokens(size, "q"))
            context += size + rng.randrange(0, 2_500)
        script.reply("ok", context=context)
    fmt = rng.choice([SourceFormat.CTXSCOPE, SourceFormat.CLAUDE_CODE])
    return script.session(window=20_000, fmt=fmt)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    preset=st.sampled_from(list(PRESETS)),
    strategy=st.sampled_from(["tail", "summary-only", "codex"]),
    pruning=st.sampled_from([None, 0, 1, 2]),
    budget_rule=st.booleans(),
    drops=st.integers(0, 3),
    limit=st.sampled_from([None, 300, 1_500, 4_000]),
    truncated=st.booleans(),
)
def test_skipping_futile_attempts_never_changes_a_replay(
    seed: int,
    preset: str,
    strategy: str,
    pruning: int | None,
    budget_rule: bool,
    drops: int,
    limit: int | None,
    truncated: bool,
) -> None:
    """And each skipped attempt's stretch read from its messages is read as its items
    (:class:`BothReadings`), truncated outputs among them or not."""
    session = _random_session(seed)
    policy = get_preset(preset)
    policy.estimator = "chars/4"
    policy.compaction.strategy = strategy  # type: ignore[assignment]
    policy.compaction.max_head_drops = drops
    policy.pruning.enabled = pruning is not None
    policy.pruning.protect_turns = pruning or 0
    policy.pruning.budget_rule = budget_rule
    policy.pruning.protect_tokens = 1_000
    policy.pruning.minimum_tokens = 500
    policy.truncation.enabled = truncated
    policy.truncation.max_lines = 3
    engine = BothReadings(session, limit)
    reference = EveryAttempt(session, limit)
    _same(engine.run(policy), reference.run(policy))
    assert engine.attempts <= reference.attempts
    # And after a change that moves the threshold, resumed from the first run.
    changed = policy.model_copy(deep=True)
    changed.compaction.reserve_tokens += 1_500
    _same(engine.run(changed), EveryAttempt(session, limit).run(changed))


def test_the_summary_table_shows_the_attempts_that_changed_nothing() -> None:
    from rich.console import Console

    from tui.cli.render import summary_table

    result = CountingReplayer(_stuck_session(), limit=3_000).run(_policy())
    assert result.summary.noop_compactions > 0
    console = Console(width=100, record=True)
    console.print(summary_table(result.summary))
    text = console.export_text()
    line = next(row for row in text.splitlines() if "attempts that changed nothing" in row)
    assert line.split()[-1] == str(result.summary.noop_compactions)


@pytest.mark.parametrize(
    ("trigger", "call", "said"),
    [
        ("threshold", 4, "the context crossed the threshold before call 4"),
        ("projection", 4, "the projected context crossed the threshold before call 4"),
        ("overflow", None, "message 9 would not fit the window"),
        ("manual", 4, "the user compacted before message 9 in the recording"),
        ("recorded", 4, "the recording compacted before call 4"),
    ],
)
def test_a_noop_note_says_its_trigger(trigger: Trigger, call: int | None, said: str) -> None:
    """Each trigger's note names where the attempt was made (call, else message)."""
    from types import SimpleNamespace

    from core.replay.simulate import Run

    notes: list[tuple[str, str]] = []
    run = SimpleNamespace(
        trace=SimpleNamespace(noops=[], checkpoints=[None, None]),
        note=lambda key, text: notes.append((key, text)),
        _noted=set(),
    )
    Run.changed_nothing(run, 9, call, trigger, True, "why")  # type: ignore[arg-type]
    Run.changed_nothing(run, 9, call, trigger, False, "why")  # type: ignore[arg-type]
    assert notes == [
        ("failed", f"{said}, but the compaction failed: why"),
        (f"nothing-{trigger}", f"{said}, but there was nothing to compact: why"),
    ]
    assert run.trace.noops == [2, 2]


def test_both_readings_of_a_stuck_stretch_are_made() -> None:
    """The stuck session makes attempts that are skipped (read both ways above)."""
    engine = BothReadings(_stuck_session(), limit=3_000)
    engine.run(_policy())
    assert True in engine.answers


@pytest.mark.parametrize("protect_turns", [1, 2])
def test_both_readings_agree_when_turns_matter(protect_turns: int) -> None:
    """A pruning policy reads the turn starts of each stretch too: skipped and retried attempts
    (a turn started) are read alike both ways."""
    session, policy = _turns_session(protect_turns)
    engine = BothReadings(session, limit=3_000)
    engine.run(policy)
    assert True in engine.answers
    assert False in engine.answers
