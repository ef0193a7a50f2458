"""T7: context figures, the three threshold rules, projection, recognition and diagnosis."""

from __future__ import annotations

import pytest
from builders import SessionBuilder, text_of_tokens
from sessions import late_overflow_session

from core.models import Message, Role, Usage, UsageConvention
from core.overflow import (
    call_overflowed,
    context_after_reply,
    context_before_reply,
    context_tokens,
    diagnose,
    overflow_reason,
    project,
    recorded_kind,
    should_compact,
    threshold,
    usable_usage,
)
from core.policy import Policy, get_preset
from core.replay import replay

# --- context figures -----------------------------------------------------------------------------


def test_anthropic_usage_is_measured_before_the_reply() -> None:
    usage = Usage(input=1, cache_read=170_000, cache_write=500, output=300)
    assert context_tokens(usage) == 170_501
    assert context_before_reply(usage) == 170_501
    assert context_after_reply(usage) == 170_801
    assert recorded_kind(usage) == "before-reply"


@pytest.mark.parametrize(
    "convention", [UsageConvention.PI, UsageConvention.OPENAI, UsageConvention.OPENCODE]
)
def test_other_conventions_are_measured_after_the_reply(convention: UsageConvention) -> None:
    usage = Usage(input=1, cache_read=174_218, cache_write=519, output=266, total=175_004,
                  convention=convention)  # fmt: skip
    assert context_tokens(usage) == 175_004
    assert context_before_reply(usage) == 174_738
    assert recorded_kind(usage) == "after-reply"


def test_all_zero_usage_is_no_usage() -> None:
    aborted = Message(index=0, id="a", role=Role.ASSISTANT, usage=Usage())
    assert usable_usage(aborted) is None
    real = Message(index=0, id="a", role=Role.ASSISTANT, usage=Usage(input=5))
    assert usable_usage(real) is not None


# --- threshold rules -----------------------------------------------------------------------------


def test_pi_rule_is_strictly_greater_than_window_minus_reserve() -> None:
    pi = get_preset("pi")
    assert threshold(pi, 200_000) == 183_616
    assert not should_compact(183_616, pi, 200_000)
    assert should_compact(183_617, pi, 200_000)


def test_opencode_rule_without_input_limit_uses_the_capped_output_limit() -> None:
    opencode = get_preset("opencode")
    # max_output = min(64,000, 32,000): usable = 200,000 - 32,000
    assert threshold(opencode, 200_000, 64_000) == 168_000
    assert threshold(opencode, 200_000, 8_192) == 200_000 - 8_192
    assert threshold(opencode, 200_000, None) == 168_000
    assert should_compact(168_000, opencode, 200_000, 64_000)  # >=, not >
    assert not should_compact(167_999, opencode, 200_000, 64_000)


def test_opencode_rule_with_input_limit_subtracts_the_reserve() -> None:
    opencode = get_preset("opencode")
    # reserved = min(20,000, max_output) unless configured
    assert threshold(opencode, 400_000, 128_000, input_limit=272_000) == 252_000
    assert threshold(opencode, 400_000, 8_192, input_limit=272_000) == 272_000 - 8_192
    configured = opencode.model_copy(deep=True)
    configured.compaction.reserve_tokens = 30_000
    assert threshold(configured, 400_000, 8_192, input_limit=272_000) == 242_000


def test_codex_rule_is_a_ratio_of_the_window_or_an_explicit_limit() -> None:
    codex = get_preset("codex")
    assert threshold(codex, 272_000) == 244_800
    assert should_compact(244_800, codex, 272_000)
    assert not should_compact(244_799, codex, 272_000)
    limited = codex.model_copy(deep=True)
    limited.compaction.auto_compact_token_limit = 180_000
    assert threshold(limited, 272_000) == 180_000


def test_no_automatic_compaction_without_auto_or_window() -> None:
    pi = get_preset("pi")
    assert not should_compact(10**9, pi, None)
    manual_only = pi.model_copy(deep=True)
    manual_only.compaction.auto = False
    assert not should_compact(10**9, manual_only, 200_000)


def test_projection_adds_every_message_since_the_last_call() -> None:
    assert project(180_000, 25_000) == 205_000
    assert project(180_000, [10, 20, 30]) == 180_060
    assert project(180_000, []) == 180_000


# --- recognising an overflow ---------------------------------------------------------------------


def _call(
    *, usage: Usage | None = None, stop_reason: str | None = None, error: str | None = None
) -> Message:
    return Message(
        index=0, id="c", role=Role.ASSISTANT, usage=usage, stop_reason=stop_reason, error=error
    )


def test_overflow_recognition() -> None:
    assert overflow_reason(_call(stop_reason="length"), 200_000) == "stop-length"
    assert overflow_reason(_call(error="prompt is too long: 210000 tokens > 200000"), None) == (
        "error"
    )
    assert overflow_reason(_call(usage=Usage(input=200_001)), 200_000) == "over-window"
    assert overflow_reason(_call(usage=Usage(input=200_000)), 200_000) is None
    assert not call_overflowed(_call(error="Rate limit reached: 30000 tokens per minute"), 1)
    assert not call_overflowed(_call(usage=Usage()), 10)  # aborted, all zero
    tool = Message(index=0, id="t", role=Role.TOOL, stop_reason="length")
    assert overflow_reason(tool, 10) is None


# --- diagnosis -------------------------------------------------------------------------------------


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
    assert "no model calls" in diagnose(lonely).explanation
    unknown = SessionBuilder().user().reply(context=10_000).session(window=None)
    result = diagnose(unknown)
    assert not result.overflowed
    assert "--window" in result.explanation


def test_codex_rule_uses_the_full_model_window_when_the_recorded_one_is_effective() -> None:
    from core.overflow import threshold as rule_threshold
    from core.policy import get_preset

    codex = get_preset("codex")
    # Codex records 95% of a 272k window (258,400) and compacts at 90% of the full 272k.
    assert rule_threshold(codex, 258_400, model_window=272_000) == 244_800
    assert rule_threshold(codex, 258_400) == 232_560
