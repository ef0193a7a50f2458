"""A truncation setting's copies of the outputs it truncates (:class:`core.replay.truncation.Copies`):
counted when the setting is made, but made (and kept) only when first read — a replay reads one
only to compact or prune a context holding it — and then the words :func:`sent_output` gives,
the same object for every later reader."""

from __future__ import annotations

from core.model.session import Session
from core.model.tokens import get_counter, message_text
from core.policy import DEFAULT_HINT, Policy, get_preset
from core.replay import Replayer, sent_output
from core.replay.engine import MessageTokens
from core.replay.truncation import Truncations
from tests.support.builders import SessionBuilder


def _long_reads(turns: int, window: int) -> Session:
    """Read outputs of 300 lines that a 100-line limit truncates, one a turn."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(turns):
        script.user(f"turn {turn}")
        script.call("read", context=context)
        script.result("\n".join(f"building /src/alpha_{turn}_{i}.py ok" for i in range(300)))
        context += 3_000
        script.reply("ok", context=context)
    return script.session(window=window)


def _policy(hint: str = DEFAULT_HINT) -> Policy:
    policy = get_preset("seed")
    policy.estimator = "chars/4"
    policy.truncation.max_lines = 100
    policy.truncation.hint_template = hint
    return policy


def test_copies_are_counted_but_not_made_until_read() -> None:
    session = _long_reads(6, 1_000_000)
    policy = _policy()
    truncation = Truncations(session, MessageTokens(session)).of(policy)
    copies = truncation.messages
    assert len(copies) == 6 and copies.made() == 0
    counter = get_counter(policy.estimator)
    for i in copies:
        words = sent_output(session.messages[i], policy.truncation).content
        assert truncation.tokens[i] == counter.count(message_text(copies[i]))
        result = copies[i].tool_result
        assert result is not None and result.output == words
        assert copies[i] is copies[i]  # made once, then kept
    assert copies.made() == 6


def test_a_replay_that_never_compacts_makes_no_copy() -> None:
    """``analyze`` of a session that never compacts (a 100 MB one's copies were 89 MB)."""
    session = _long_reads(6, 1_000_000)
    policy = _policy()
    replayer = Replayer(session)
    result = replayer.run(policy)
    assert result.summary.compactions == 0
    assert [e.kind for e in result.events].count("truncate") == 6
    assert replayer._truncations.of(policy).messages.made() == 0


def test_a_compaction_reads_the_copies_of_the_context_it_compacts() -> None:
    session = _long_reads(30, 12_000)
    policy = _policy()
    replayer = Replayer(session)
    assert replayer.run(policy).summary.compactions > 0
    assert replayer._truncations.of(policy).messages.made() > 0


def test_settings_are_told_apart_by_their_words_made_to_compare_only_then() -> None:
    session = _long_reads(4, 1_000_000)
    truncations = Truncations(session, MessageTokens(session))
    one = truncations.of(_policy())
    alike = _policy()
    alike.truncation.retention_days = 3.0  # (another setting, the same words)
    same = truncations.of(alike)
    assert same is not one
    other = truncations.of(_policy(hint=DEFAULT_HINT.replace("only part", "only bits")))
    first = next(iter(one.messages))
    assert one.tokens[first] == other.tokens[first]  # as many tokens, other words
    assert one.differs_from(other, first)
    assert not one.differs_from(same, first)
    # compared without keeping a copy: none is made to be compared
    assert one.messages.made() == other.messages.made() == same.messages.made() == 0


def test_a_setting_truncating_nothing_sends_the_estimators_own_counts() -> None:
    session = _long_reads(3, 1_000_000)
    tokens = MessageTokens(session)
    truncations = Truncations(session, tokens)
    plain = tokens("chars/4")
    before = list(plain)
    loose = _policy()
    loose.truncation.max_lines = 1_000
    assert not any(truncations.of(loose).truncated)
    assert truncations.of(loose).tokens is plain  # (no copy of a count per message)
    cut = truncations.of(_policy())
    assert cut.tokens is not plain and cut.tokens != plain
    assert plain == before  # the estimator's counts are left as they are
