"""The context a policy had at a message, and a compaction run on it now.

"A compaction run at message N must work on the context as the model had it at N (previous
summary + kept tail + everything since), and a replayed recorded compaction on what the recording
had before it." Before, the compaction screen took the session's messages from the last recorded
boundary: right after a compaction that was the summary and a few messages, and compacting them
gave an empty summary.
"""

from __future__ import annotations

import asyncio

import pytest

from core.formats import load_session
from core.llm.summary_templates import split_sections
from core.policy import get_preset
from core.replay import Replayer, native_policy
from tests.support.paths import REPO

SAMPLES = REPO / "sample_sessions"
COMPACTED = SAMPLES / "claude-code" / "compacted.jsonl"
"""An automatic compaction (boundary at message 291, taken before call 126 at message 295),
then a manual /compact."""

needs_samples = pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")


@pytest.fixture(scope="module")
def replayer() -> Replayer:
    return Replayer(load_session(COMPACTED))


def _adopted(replayer: Replayer) -> tuple[int, int]:
    """(event id, message) of the recording's automatic compaction, as the agent's preset takes
    it."""
    result = replayer.run(native_policy(replayer.session))
    event_id, event = next(
        (k, e) for k, e in enumerate(result.events) if e.kind == "compact" and e.recorded_index == 0
    )
    assert event.at_message_index is not None
    return event_id, event.at_message_index


@needs_samples
def test_before_a_compaction_the_context_is_the_whole_conversation(replayer: Replayer) -> None:
    policy = native_policy(replayer.session)
    result = replayer.run(policy)
    _, at = _adopted(replayer)
    before = replayer.context_at(policy, at)
    assert len(before.messages) > 200  # not the 4 messages after the boundary
    assert before.indices[0] == 0 and max(before.indices) < at
    # its figure is the very one the check before that call measured (the CLI's check_tokens)
    point = next(p for p in result.points if p.message_index == at)
    assert before.at_call and before.figure == point.check_tokens
    assert before.call_index == point.call_index


@needs_samples
def test_after_a_compaction_the_context_is_its_summary_and_what_came_since(
    replayer: Replayer,
) -> None:
    policy = native_policy(replayer.session)
    _, at = _adopted(replayer)
    after = replayer.context_at(policy, at, through=True)
    assert after.through and after.indices[-1] == at
    later = replayer.context_at(policy, at + 5)
    assert later.rebuilt_at == at  # rebuilt by the compaction before call `at`
    assert len(later.messages) < 20
    summary = replayer.session.messages[later.indices[0]]
    assert summary.summary  # the recorded summary leads the context


@needs_samples
def test_a_compaction_run_at_the_recorded_one_compacts_what_the_recording_had(
    replayer: Replayer,
) -> None:
    policy = native_policy(replayer.session)
    _, at = _adopted(replayer)
    done = asyncio.run(replayer.compaction_at(policy, at, through=False))
    result = done.result
    assert len(result.head_ids) > 200 and result.tokens_before > 100_000
    assert split_sections(result.summary)["Goal"].strip() != "(none)"
    # before/after in the provider's count: the replay's figure, then less what was removed
    before, after = done.figure_before, done.figure_after
    assert before is not None and before == done.context.figure
    assert after is not None and 0 < after < before // 2
    assert done.window == 200_000 and done.window_known


@needs_samples
def test_a_policys_own_summary_leads_its_context_after_it(replayer: Replayer) -> None:
    seed = get_preset("seed")
    result = replayer.run(seed)
    own = next(e for e in result.events if e.kind == "compact" and e.recorded_index is None)
    assert own.at_message_index is not None
    after = replayer.context_at(seed, own.at_message_index + 1)
    first_kept = min(i for i in after.indices if i >= 0)
    assert -1 in after.indices  # the summary the replay wrote (no session message holds it)
    assert first_kept in own.tail_indices


@needs_samples
def test_recorded_compactions_say_what_they_replaced_and_left(replayer: Replayer) -> None:
    # Regression: "a compact event shows 'after 0'"; "head 0 / tail 0"
    result = replayer.run(native_policy(replayer.session))
    taken = [e for e in result.events if e.recorded_index is not None]
    assert {e.kind for e in taken} == {"compact", "recorded-compaction"}
    for event in taken:
        assert event.tokens_before and event.tokens_after
        assert 0 < event.tokens_after < event.tokens_before
        assert event.head_indices
        assert not set(event.head_indices) & set(event.tail_indices)
    adopted = next(e for e in taken if e.kind == "compact")
    call = result.points[adopted.call_index or 0]
    assert adopted.tokens_after == call.recorded_tokens  # the recording's own figure after it
    manual = next(e for e in taken if e.kind == "recorded-compaction")
    recorded = replayer.session.compactions[manual.recorded_index or 0]
    assert manual.tokens_before == recorded.tokens_before  # 53,785: what the recording says
