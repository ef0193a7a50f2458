"""A replay's threshold is a prediction: the rule of the agent's version at every call, never read
from the session's own compactions. The interval those compactions imply is a fact reported beside
it, and the ``inferred`` policy built on it is an explicit, labelled choice."""

from __future__ import annotations

from core.model.session import CompactionTrigger, Session, SourceFormat
from core.replay import Replayer, native_policy, replay
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO

WINDOW = 200_000
RULE = 167_000  # Claude Code from 2.1.21: 200,000 - min(32,000, 20,000) - 13,000


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


def test_a_compaction_below_the_rule_is_missed_not_copied() -> None:
    # the agent compacted at 150,000, below its documented 167,000: the replay predicts from the
    # rule and says it missed, instead of taking the threshold from the compaction it scores
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000, 40_000], 4)
    result = replay(session, native_policy(session))
    assert all(span.source == "rule" and span.threshold == RULE for span in result.thresholds)
    assert all(point.threshold_source != "inferred" for point in result.points)
    (row,) = result.fidelity
    assert (row.outcome, row.threshold_source, row.threshold) == ("missed", "rule", RULE)


def test_a_recording_that_passes_the_rule_without_compacting_still_compacts_by_the_rule() -> None:
    session = _session([120_000, 160_000, 175_000, 180_000], None)
    result = replay(session, native_policy(session))
    assert [e for e in result.events if e.kind == "compact"]
    assert [span.source for span in result.thresholds] == ["rule"]


def test_an_edited_buffer_lowers_every_stretchs_threshold_by_the_edit() -> None:
    # two stretches, the first ended by a compaction below the rule: the user's edit is replayed
    # exactly, in both
    session = _session([100_000, 120_000, 140_000, 150_000, 30_000, 40_000], 4)
    native = native_policy(session)
    edited = native.model_copy(deep=True)
    edited.compaction.autocompact_buffer_tokens += 20_000
    before = replay(session, native)
    after = replay(session, edited)
    assert len(after.points) == len(before.points) > 0
    for old, new in zip(before.points, after.points, strict=True):
        assert old.threshold is not None and new.threshold == old.threshold - 20_000
    assert {span.threshold for span in after.thresholds} == {RULE - 20_000}


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
    assert "not a prediction" in policy.description
    (row,) = engine.run(policy).fidelity
    assert row.outcome == "same"  # fitted to this very compaction: it cannot miss it


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


def test_claude_code_before_2_1_21_compacts_12k_lower() -> None:
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


def test_analyze_labels_the_inferred_policy_as_no_prediction() -> None:

    from click.testing import CliRunner

    from tui.cli.main import cli

    sample = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"
    result = CliRunner().invoke(cli, ["analyze", str(sample), "--policy", "inferred"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "inferred: threshold" in text and "not a prediction" in text
    native = CliRunner().invoke(cli, ["analyze", str(sample)])
    assert "(the recording agent's own policy)" in " ".join(native.output.split())


def _recount_session(version: str) -> Session:
    """Claude Code compacts before the third call: the second call's recorded context (166,700)
    plus its reply's tool call and the small output after it is just under 167,000, and reaches
    it only when the reply's blocks after the first (here its tool call) are counted again."""
    builder = SessionBuilder(model="claude-opus-4-6").user("go")
    builder.call(context=100_000, text="looking").result("ok")
    builder.call("bash", {"command": "x" * 1_600}, text="next", context=166_700, output=10)
    builder.result(text_of_tokens(250))
    builder.compaction(tokens_before=167_010)
    builder.user("carry on")
    builder.call(context=30_000).result("ok")
    return builder.reply(context=31_000).session(
        window=WINDOW, fmt=SourceFormat.CLAUDE_CODE, model="claude-opus-4-6", agent_version=version
    )


def test_claude_code_from_2_1_74_counts_the_last_replys_later_blocks_again() -> None:
    # cli.js 2.1.74: the estimate starts at the first transcript line of the last response, and
    # a tool_use block counts as its name and JSON input (2.1.68 started after the last line)
    new = _recount_session("2.1.80")
    old = _recount_session("2.1.68")
    assert native_policy(new).compaction.recount_reply_blocks == "all"
    assert native_policy(old).compaction.recount_reply_blocks == "none"
    (row,) = replay(new, native_policy(new)).fidelity
    assert row.outcome == "same" and row.check_tokens is not None and row.check_tokens >= RULE
    (old_row,) = replay(old, native_policy(old)).fidelity
    assert old_row.check_tokens is not None and old_row.check_tokens < RULE
    assert old_row.check_tokens + 400 <= row.check_tokens  # the tool call's ~400 tokens


def test_a_replayers_recounts_and_agent_checks_are_the_ones_a_fresh_replayer_makes() -> None:
    # the replayer keeps each reply's recount (by way of counting and estimator) and the last
    # check figures made from the agent's estimates: a second setting of the same policy, as the
    # inferred threshold makes after the run, reads the same lists, and another way of counting
    # or another estimator gets its own
    from core.model.tokens import get_counter
    from core.replay.checks import reply_recount

    session = _recount_session("2.1.80")
    policy = native_policy(session)
    replayer = Replayer(session)
    first = replayer._setting(policy)
    count = get_counter(policy.estimator).count
    assert first.reply_recount == [reply_recount(m, policy, count) for m in session.messages]
    assert any(first.reply_recount)
    again = replayer._setting(policy)
    assert again.reply_recount is first.reply_recount
    assert again.check_tokens == first.check_tokens
    text_only = policy.model_copy(
        update={"compaction": policy.compaction.model_copy(update={"recount_reply_blocks": "text"})}
    )
    assert (
        replayer._setting(text_only).reply_recount
        == Replayer(session)._setting(text_only).reply_recount
    )
    agent = policy.model_copy(
        update={"compaction": policy.compaction.model_copy(update={"use_agent_estimates": True})}
    )
    assert replayer._setting(agent).check_tokens == Replayer(session)._setting(agent).check_tokens
    assert replayer.inferred_threshold() == Replayer(session).inferred_threshold()
