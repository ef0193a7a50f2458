"""The overflow diagnosis of a replayed session: the call to explain, what filled the window since
the last compaction, and whether the last threshold check came too late."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.diagnosis import OverflowDiagnosis, diagnose, what_filled
from core.model.session import Session
from core.policy import Policy, get_preset
from core.replay import native_policy, replay
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.sessions import late_overflow_session


def _diagnose_native(session: Session) -> OverflowDiagnosis:
    """The diagnosis under the recording agent's own preset (the TUI's default)."""
    return diagnose(session, replay(session, native_policy(session)))


def _checking_pi(project_results: bool) -> Policy:
    policy = get_preset("pi")
    policy.compaction.check_before_each_call = True
    policy.compaction.project_after_tool_results = project_results
    policy.estimator = "chars/4"
    policy.truncation.enabled = False  # keep the big outputs whole
    return policy


def test_diagnosis_finds_the_call_the_contributors_and_the_blind_spot() -> None:
    session = late_overflow_session()
    result = replay(session, _checking_pi(project_results=False))
    diagnosis = diagnose(session, result)
    assert diagnosis.overflowed
    assert diagnosis.call_index == 3
    assert diagnosis.message_index == 7
    assert diagnosis.overflow_reason == "over-window"
    assert diagnosis.tokens == 102_100
    assert diagnosis.since_message_index == 0
    top, second = diagnosis.contributors[:2]
    assert (top.message_index, top.tool_name, top.tokens) == (6, "grep", 60_000)
    assert (second.message_index, second.tool_name, second.tokens) == (2, "read", 40_000)
    assert top.share == pytest.approx(60_000 / diagnosis.growth_tokens)
    assert diagnosis.by_tool[0].tool_name == "grep"
    assert [c.tokens for c in diagnosis.contributors] == sorted(
        (c.tokens for c in diagnosis.contributors), reverse=True
    )
    # The check before the overflowing call saw 42,010 (after the grep call's reply): below
    # 83,616, so nothing fired; the 60,090 tokens that followed were the blind spot.
    assert diagnosis.threshold == 83_616
    assert diagnosis.last_check_call_index == 3
    assert diagnosis.last_check_tokens == 42_010
    assert diagnosis.gap_tokens == 102_100 - 42_010
    assert diagnosis.fired_too_late
    assert "too late" in diagnosis.explanation
    assert "grep" in diagnosis.explanation


def test_with_projection_the_check_sees_the_tool_output_in_time() -> None:
    session = late_overflow_session()
    result = replay(session, _checking_pi(project_results=True))
    diagnosis = diagnose(session, result)
    assert diagnosis.overflowed  # the recording still overflowed ...
    assert diagnosis.last_check_tokens == 42_010 + 60_000
    assert not diagnosis.fired_too_late  # ... but the projected check would have fired
    assert result.points[3].check_fired
    assert result.summary.overflows_avoided == 1  # and the replay compacts before the call
    assert not result.points[3].overflow_simulated


def test_never_checked_counts_as_too_late() -> None:
    session = late_overflow_session()
    pi = get_preset("pi")  # checks only at turn ends: this one turn never ends before the call
    diagnosis = diagnose(session, replay(session, pi))
    assert diagnosis.overflowed
    assert diagnosis.last_check_call_index is None
    assert diagnosis.fired_too_late


def test_near_window_without_overflow() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=50_000)
        .result("x")
        .reply(context=96_000)
        .session(window=100_000)
    )
    diagnosis = diagnose(session, replay(session, get_preset("pi")), margin=0.05)
    assert not diagnosis.overflowed
    assert diagnosis.overflow_reason == "near-window"
    assert diagnosis.call_index == 1
    assert not diagnosis.fired_too_late
    far = diagnose(session, replay(session, get_preset("pi")), margin=0.01)
    assert far.call_index is None
    assert "peak" in far.explanation


def test_growth_starts_at_the_last_recorded_compaction() -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=60_000)
        .result(text_of_tokens(30_000, "o"))
        .reply(context=91_000)
        .compaction(tokens_before=91_000)
        .user("go on")
        .call(context=5_000)
        .result(text_of_tokens(500, "n"))
        .reply(context=101_000)
        .session(window=100_000)
    )
    diagnosis = diagnose(session, replay(session, get_preset("pi")))
    assert diagnosis.overflowed
    assert diagnosis.since_message_index == 4
    assert all(c.message_index >= 4 for c in diagnosis.contributors)


def test_diagnosis_without_calls_or_window() -> None:
    lonely = SessionBuilder().user("hello").session()
    assert "no model calls" in _diagnose_native(lonely).explanation
    unknown = SessionBuilder().user().reply(context=10_000).session(window=None)
    result = _diagnose_native(unknown)
    assert not result.overflowed
    assert "--window" in result.explanation


def test_plain_words_for_an_agent_that_checks_only_between_prompts() -> None:
    # Regression: "last checked right before call 122" for an overflow at call 340 did not
    # say that pi checks only between prompts, nor what it should have done
    session = (
        SessionBuilder()
        .user("first")
        .call("read", context=10_000)
        .result("ok")
        .reply("done", context=11_000)
        .user("second")
        .call("read", context=30_000)
        .result(text_of_tokens(30_000, "a"))
        .call("grep", context=62_000)
        .result(text_of_tokens(30_000, "b"))
        .call("grep", context=92_000)
        .result(text_of_tokens(10_000, "c"))
        .reply("too big", context=102_100)
        .session(window=100_000)
    )
    result = replay(session, get_preset("pi"))
    d = diagnose(session, result)
    assert d.overflowed and d.call_index == 5
    assert "only between prompts" in d.schedule
    assert d.last_check_call_index == 2 and d.last_check_crossed is False
    assert d.threshold == 83_616 and d.threshold_source == "rule"
    assert d.crossed_call_index == 4 and d.crossed_tokens == 92_000
    assert "passed the threshold at call 4" in d.verdict
    assert "pi should have compacted there" in d.verdict
    for words in (d.schedule, d.verdict):
        assert words in d.explanation  # the CLI says it in the same words


def test_a_threshold_above_the_window_is_said_to_be_one() -> None:
    session = late_overflow_session()
    policy = _checking_pi(project_results=False)
    policy.compaction.auto_compact_token_limit = 150_000  # above the 100k window
    d = diagnose(session, replay(session, policy))
    assert d.overflowed and d.threshold == 150_000
    assert "not below the 100,000-token window" in d.verdict


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(min_value=-3, max_value=6), max_size=30),
    st.integers(min_value=-1, max_value=12),
    st.booleans(),
)
def test_what_filled_ranks_the_largest_first_and_the_earlier_of_equals_first(
    sizes: list[int], top: int, sidechains: bool
) -> None:
    """The contributors are the messages sorted by size, largest first, the earlier of equals
    first, cut to ``top`` (many ties: the sizes are small numbers); the growth is their sum."""
    builder = SessionBuilder()
    for n, _ in enumerate(sizes):
        builder.user(f"m{n}", sidechain=sidechains and n % 3 == 0)
    session = builder.session()
    growth, contributors, _ = what_filled(session, sizes, 0, len(sizes), top)
    kept = [i for i, m in enumerate(session.messages) if not m.sidechain and not m.summary]
    expected = sorted(kept, key=lambda i: (-sizes[i], i))[: max(top, 0)]
    assert [c.message_index for c in contributors] == expected
    assert growth == sum(sizes[i] for i in kept)
