"""T7: context figures, the three threshold rules, projection, recognition and diagnosis."""

from __future__ import annotations

import pytest

from core.algorithms.overflow import (
    call_overflowed,
    context_after_reply,
    context_before_reply,
    context_tokens,
    overflow_reason,
    project,
    recorded_kind,
    should_compact,
    threshold,
    usable_usage,
)
from core.model.session import Message, Role, Usage, UsageConvention
from core.policy import get_preset

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


def test_codex_rule_uses_the_full_model_window_when_the_recorded_one_is_effective() -> None:
    from core.algorithms.overflow import threshold as rule_threshold
    from core.policy import get_preset

    codex = get_preset("codex")
    # Codex records 95% of a 272k window (258,400) and compacts at 90% of the full 272k.
    assert rule_threshold(codex, 258_400, model_window=272_000) == 244_800
    assert rule_threshold(codex, 258_400) == 232_560
