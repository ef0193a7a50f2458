"""What a replay leaves alive once it is done (the peak memory of a one-shot command)."""

from __future__ import annotations

from array import array

from core.llm.summary_templates import build_transcript, transcript_entries
from core.model.session import Session
from core.policy import Policy, get_preset
from core.replay import replay
from core.replay.calls import Calls
from core.replay.state import CheckColumns
from tests.support.builders import SessionBuilder, text_of_tokens


def _one_compaction() -> tuple[Session, Policy]:
    """A session whose replay under the returned policy (pi's, check before each call, chars/4)
    compacts once, its head holding four 40,000-token outputs."""
    policy = get_preset("pi")
    policy.truncation.enabled = False
    policy.compaction.check_before_each_call = True
    policy.compaction.project_after_tool_results = False
    policy.estimator = "chars/4"
    script = SessionBuilder().user("start")
    for position, context in enumerate((10_000, 90_000, 170_000, 185_000)):
        script.call(context=context).result(text_of_tokens(40_000, str(position)))
    return script.reply("end", context=120_000).session(window=200_000), policy


def test_a_compaction_forgets_the_transcripts_it_remembered() -> None:
    """The head of every compaction (megabytes at 100 MB) is not kept once the compaction is
    done: the transcript memo is emptied, and the summary is the same as with it."""
    session, policy = _one_compaction()
    earlier = build_transcript(["[User]: remembered"])
    assert transcript_entries(earlier) is not None
    result = replay(session, policy)
    assert [e.kind for e in result.events].count("compact") == 1
    assert transcript_entries(earlier) is None


def test_links_back_are_a_compact_column() -> None:
    """Four bytes per message, as the calls' other per-message columns, not an int object each
    (a 100 MB session has 10^5)."""
    session = (
        SessionBuilder().user("start").call(context=1_000).result("out").reply("end").session()
    )
    links = Calls(session).linked_back()
    assert isinstance(links, array)
    assert links.itemsize == 4
    assert len(links) == len(session.messages)


def test_released_compaction_caches_change_no_result() -> None:
    """A replayer whose head entries were dropped compacts again with the same outcome as one
    that kept them, and keeps its compaction results (a live LLM is not asked twice)."""
    from core.replay import Replayer

    session, policy = _one_compaction()
    kept, released = Replayer(session), Replayer(session)
    first = released.run(policy)
    released.release_compaction_caches()
    assert released._entry_cache is None  # (the next compaction starts an empty one)
    assert released._compactions  # the results stay
    other = policy.model_copy(deep=True)
    other.split.tail_budget_tokens = 1_000
    kept.run(policy)
    again = released.run(other)
    assert again.summary == kept.run(other).summary
    assert first.summary == kept.run(policy).summary


def _lists_of_checks() -> int:
    """Lists alive whose last item is a threshold check (a trace's column, or a copy)."""
    import gc

    from core.replay.state import Check

    gc.unfreeze()  # (a run freezes what it leaves: gc.get_objects skips frozen objects)
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is list and o and isinstance(o[-1], Check))


def test_the_inferred_threshold_keeps_its_spans_not_the_checks() -> None:
    """The walk following the recording (one check per call, ~10 MB at 50,000 calls) is read
    into the evidence's spans and freed: the replayer keeps the spans, and the inferred
    threshold and the recording's checks asked for again are the same."""
    from core.model.session import SourceFormat
    from core.replay import Replayer

    script = SessionBuilder().user("start")
    for step in range(40):
        script.call(context=20_000 + step * 4_000).result(text_of_tokens(3_000, str(step)))
    script.compaction(tokens_before=180_000, trigger="auto")
    script.user("again").call(context=30_000).reply("end", context=31_000)
    session = script.session(fmt=SourceFormat.CLAUDE_CODE, window=200_000)
    replayer = Replayer(session)
    replayer.run(get_preset("seed"))  # (a run of another policy: its trace keeps its checks)
    before = _lists_of_checks()
    threshold = replayer.inferred_threshold()
    checks = replayer.recording_checks()
    assert threshold.high is not None and checks
    assert _lists_of_checks() == before
    assert replayer.inferred_threshold() == threshold
    assert replayer.recording_checks() == checks


def test_a_result_reads_its_call_columns_without_copying_them() -> None:
    """A finished run's columns of the session's calls are the calls' own (no copy of 10^5
    items kept per result)."""
    from core.replay import Replayer

    session, policy = _one_compaction()
    replayer = Replayer(session)
    result = replayer.run(policy)
    calls = replayer._calls
    assert result.point_column("message_index") is calls.calls
    assert result.point_column("recorded_tokens") is calls.usage_context
    assert list(result.point_column("message_index")) == [p.message_index for p in result.points]


def test_the_mostly_empty_message_columns_keep_only_their_exceptions() -> None:
    """A result's per-message columns that are mostly one value (None, False, the estimator's
    provenance) hold that value and the exceptions, not an item per message (8 bytes each at
    10^5 messages); read whole or one by one, they are the message states' fields."""
    session, policy = _one_compaction()
    result = replay(session, policy)
    names = (
        "provenance",
        "truncation_note",
        "pruned",
        "prune_reason",
        "summarised_by",
        "kept_by",
    )
    columns = {name: result.message_column(name) for name in names}
    assert [e.kind for e in result.events].count("compact") == 1
    for name, column in columns.items():
        assert not isinstance(column, list), name
        expected = [getattr(state, name) for state in result.messages]
        assert list(column) == expected, name
        assert [column[i] for i in range(-len(expected), len(expected))] == expected * 2, name
        assert column[1:3] == expected[1:3] and column == expected, name
    assert any(v is not None for v in columns["summarised_by"])


def test_a_run_following_the_recording_keeps_no_figure_of_its_own_per_call() -> None:
    """Where the run's context is the recorded one (no compaction of its own), a call's
    simulated figure is the recorded figure's own int object, and the checks are kept as
    columns (no tuple, nor int object, of their own per call kept to the end)."""
    from core.model.session import SourceFormat
    from core.replay import Replayer, native_policy

    script = SessionBuilder().user("start")
    for step in range(30):
        script.call(context=20_000 + step * 1_000).result(text_of_tokens(900, str(step % 10)))
    session = script.reply("end", context=51_000).session(
        fmt=SourceFormat.CLAUDE_CODE, window=200_000
    )
    policy = native_policy(session)
    replayer = Replayer(session)
    result = replayer.run(policy)
    assert result.summary.compactions == 0
    (trace,) = replayer._traces.values()
    side = replayer._recorded_side(policy.estimator)
    figures = trace.columns["simulated_tokens"]
    assert trace.deltas == [0] * len(figures)
    assert all(figures[c] is side.baseline[c] for c in range(len(figures)))
    # (after the first call: the first has no figure of its own to start from)
    agreed = [c for c in trace.made[1:] if c.proj is not None and c.proj == c.baseline_measure]
    assert len(agreed) > 20
    assert isinstance(trace.made, CheckColumns)
    # the projection flag before each call: a byte a call
    assert type(trace.pending) is bytearray and len(trace.pending) == len(figures)


def test_the_recorded_prompts_are_the_calls_column_where_every_call_has_its_usage() -> None:
    """``analyze``'s recorded prompt of each call is the calls' own prompt column where every
    call's usage is read as it is (no copy kept to the end of the command)."""
    from core.insights.named_figures import _recorded_prompt_column, plain_recorded_prompts
    from core.replay import Replayer, native_policy

    script = SessionBuilder().user("start")
    for step in range(5):
        script.call(context=20_000 + step * 1_000).result("out")
    session = script.reply("end", context=26_000).session(window=200_000)
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    column = _recorded_prompt_column(session, result)
    assert column is replayer._calls.usage_prompt
    assert column == plain_recorded_prompts(
        session, result.point_column("message_index"), result.point_column("recorded_tokens")
    )


def test_a_results_message_columns_are_made_when_first_read() -> None:
    """``analyze`` reads no message state of most sessions: the per-message columns (and the
    compactions' maps) are not made for it, and once read they are those of the states."""
    from core.replay import Replayer
    from core.replay.timeline import ColumnStates

    session, policy = _one_compaction()
    result = Replayer(session).run(policy)
    lazy = result._lazy_messages
    assert (
        isinstance(lazy, ColumnStates)
        and lazy._make is not None
        and lazy.count == len(session.messages)
    )
    summarised = result.message_column("summarised_by")
    assert lazy._make is None
    assert list(summarised) == [state.summarised_by for state in result.messages]
    assert any(by is not None for by in summarised)


def test_the_causes_of_no_compaction_read_no_message_column() -> None:
    from core.insights.compaction_causes import compaction_causes
    from core.replay import Replayer
    from core.replay.timeline import ColumnStates

    session = SessionBuilder().user("start").call(context=1_000).result("out").reply("end")
    built = session.session()
    result = Replayer(built).run(get_preset("claude-code"))
    assert compaction_causes(built, result) == []
    lazy = result._lazy_messages
    assert isinstance(lazy, ColumnStates) and lazy._make is not None


def test_a_results_token_columns_are_read_without_making_the_others() -> None:
    """The message tokens (and as sent) are the run's own columns: reading them (``analyze``'s
    projected prompts of a Codex session do) makes none of the other message columns, and they
    are the states' fields."""
    from core.replay import Replayer
    from core.replay.timeline import ColumnStates

    session, policy = _one_compaction()
    result = Replayer(session).run(policy)
    lazy = result._lazy_messages
    assert isinstance(lazy, ColumnStates)
    tokens = result.message_column("tokens")
    sent = result.message_column("tokens_after_truncation")
    assert lazy._make is not None  # (nothing else made)
    assert list(tokens) == [state.tokens for state in result.messages]
    assert list(sent) == [state.tokens_after_truncation for state in result.messages]
    assert lazy._make is None
    assert lazy.column("tokens") is tokens
