"""The agent's threshold as the recording shows it: the rule where they agree, the recording where
they do not, each stretch saying which; the interval a session's compactions give; the
``inferred`` policy built on it."""

from __future__ import annotations

from core.model.session import CompactionTrigger, Session, SourceFormat
from core.replay import Replayer, native_policy, replay
from tests.support.builders import SessionBuilder, text_of_tokens

WINDOW = 200_000
RULE = 167_000  # Claude Code from 2.1.20: 200,000 - 20,000 - 13,000


def _session(
    contexts: list[int], compact_before: int | None, *, trigger: CompactionTrigger = "auto"
) -> Session:
    """A Claude Code session whose calls record ``contexts``, each followed by a 400-token tool
    output; a recorded compaction (its summary) before call ``compact_before``."""
    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for position, context in enumerate(contexts):
        if position == compact_before:
            builder.compaction(tokens_before=contexts[position - 1] + 500, trigger=trigger)
            builder.user("carry on")
        builder.call(context=context).result(text_of_tokens(400))
    return builder.reply(context=contexts[-1] + 500).session(
        window=WINDOW,
        fmt=SourceFormat.CLAUDE_CODE,
        model="claude-sonnet-4-5",
        agent_version="2.1.39",
    )


def test_a_compaction_the_rule_explains_keeps_the_rule() -> None:
    session = _session([100_000, 140_000, 166_000, 168_000, 30_000, 40_000], 4)
    result = replay(session, native_policy(session))
    assert result.thresholds[0].source == "rule" and result.thresholds[0].threshold == RULE
    (row,) = result.fidelity
    assert (row.trigger, row.outcome, row.threshold, row.threshold_source) == (
        "auto",
        "same",
        RULE,
        "rule",
    )


def test_a_compaction_below_the_rule_gives_an_inferred_threshold_that_reproduces_it() -> None:
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000, 40_000], 4)
    result = replay(session, native_policy(session))
    span = result.thresholds[0]
    assert span.source == "inferred" and span.rule_threshold == RULE
    assert span.low is not None and span.high is not None and span.threshold is not None
    assert span.low < span.threshold <= span.high
    assert "does not explain it" in span.note
    (row,) = result.fidelity
    assert (row.outcome, row.threshold_source) == ("same", "inferred")
    assert result.points[row.recorded_call_index or 0].threshold_source == "inferred"


def test_the_documented_rule_alone_misses_it() -> None:
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000, 40_000], 4)
    rule_only = native_policy(session)
    rule_only.compaction.threshold_from_evidence = False
    (row,) = replay(session, rule_only).fidelity
    assert row.outcome == "missed" and row.threshold_source == "rule"


def test_a_recording_that_passes_the_rule_without_compacting_compacts_nowhere() -> None:
    session = _session([120_000, 160_000, 175_000, 180_000], None)
    result = replay(session, native_policy(session))
    assert not [e for e in result.events if e.kind == "compact"]
    (span,) = result.thresholds
    assert span.source == "inferred" and "without compacting" in span.note
    rule_only = native_policy(session)
    rule_only.compaction.threshold_from_evidence = False
    assert [e for e in replay(session, rule_only).events if e.kind == "compact"]


def test_the_interval_and_the_inferred_policy() -> None:
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000, 40_000], 4)
    engine = Replayer(session)
    interval = engine.inferred_threshold()
    assert interval.low is not None and interval.high is not None
    assert interval.low < interval.high and not interval.conflict
    assert interval.compactions == 1 and interval.rule_threshold == RULE
    assert interval.value == interval.low + 1  # the smallest threshold the interval allows
    assert "compacted at" in interval.note and "→ threshold in" in interval.note
    policy = engine.inferred_policy()
    assert (
        policy.name == "inferred" and policy.compaction.auto_compact_token_limit == interval.value
    )
    (row,) = engine.run(policy).fidelity
    assert row.outcome == "same"


def test_a_session_without_automatic_compactions_bounds_it_from_below_only() -> None:
    session = _session([100_000, 120_000, 130_000], None)
    interval = Replayer(session).inferred_threshold()
    assert interval.high is None and interval.low is not None and interval.low >= 130_000
    assert interval.value == RULE  # the rule lies above every figure: it stands
    assert "never compacted by itself" in interval.note


def test_a_manual_compaction_is_the_users_and_bounds_nothing_from_above() -> None:
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000], 4, trigger="manual")
    result = replay(session, native_policy(session))
    (row,) = result.fidelity
    assert (row.trigger, row.outcome, row.automatic) == ("manual", "manual", False)
    assert Replayer(session).inferred_threshold().high is None


def test_claude_code_before_2_1_20_compacts_12k_lower() -> None:
    session = _session([100_000, 150_000, 154_000, 156_000, 30_000], 4)
    session.agent_version = "2.1.4"
    result = replay(session, native_policy(session))
    assert result.thresholds[0].rule_threshold == 155_000
    assert result.thresholds[0].source == "rule"
    assert result.fidelity[0].outcome == "same"


def test_a_compaction_where_the_schedule_does_not_check_still_shows_a_check() -> None:
    # pi (session format v3) checks at turn ends; an automatic compaction recorded inside a turn
    # shows this pi checked there (later releases check after each batch of tool results)
    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for context in (100_000, 150_000, 180_000, 185_000):
        builder.call(context=context).result(text_of_tokens(200))
    builder.compaction(tokens_before=185_200)
    builder.call(context=30_000).result("ok")
    session = builder.reply(context=31_000).session(fmt=SourceFormat.PI, model="claude-sonnet-4-5")
    session.metadata["pi_version"] = 3
    result = replay(session, native_policy(session))
    assert not native_policy(session).compaction.check_before_each_call
    (row,) = result.fidelity
    assert (row.outcome, row.threshold_source) == ("same", "rule")
