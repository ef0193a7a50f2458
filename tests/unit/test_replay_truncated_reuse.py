"""A run that reuses work of an earlier run (same replayer) sends the outputs truncated its own way.

The replayer keeps the truncated outputs of each setting and the compactions of each run, and a
later run reuses them where their inputs match. Two truncation settings can cut an output to as
many tokens with other words — a hint naming another spill folder, a hint worded otherwise — so
the words must be part of what is matched: a resumed run's context is the fresh run's, word for
word, and a compaction it reuses keeps this run's truncated copies in its tail.
"""

from __future__ import annotations

from core.model.session import Session
from core.policy import DEFAULT_HINT, Policy, get_preset
from core.replay import Replayer
from tests.support.builders import SessionBuilder


def _long_reads(turns: int = 30) -> Session:
    """Read outputs of 300 lines (their first half unlike their second) that a 100-line limit
    truncates, growing past a small window so that a replay compacts."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(turns):
        script.user(f"turn {turn}")
        script.call("read", context=context)
        first = [f"building /src/alpha_{turn}_{i}.py ok" for i in range(150)]
        second = [f"failing! /src/omega_{turn}_{i}.py no" for i in range(150)]
        script.result("\n".join(first + second))
        context += 3_000
        script.reply("ok", context=context)
    return script.session(window=12_000)


def _policy(*, spill_dir: str = "/tmp/spill-one", hint: str = DEFAULT_HINT) -> Policy:
    policy = get_preset("seed")
    policy.estimator = "chars/4"
    policy.truncation.max_lines = 100
    policy.truncation.spill_dir = spill_dir
    policy.truncation.hint_template = hint
    return policy


def _sent(replayer: Replayer, policy: Policy, session: Session) -> list[tuple[str, str, str]]:
    """Every message of the context before the last message: id, text and tool output."""
    context = replayer.context_at(policy, len(session.messages) - 1)
    return [(m.id, m.text, m.tool_result.output if m.tool_result else "") for m in context.messages]


def _resumed_and_fresh(first: Policy, second: Policy) -> tuple[list[tuple[str, str, str]], ...]:
    session = _long_reads()
    replayer = Replayer(session)
    replayer.run(first)
    replayer.run(second)
    return _sent(replayer, second, session), _sent(Replayer(session), second, session)


def test_the_session_compacts_with_truncated_reads_in_the_kept_tail() -> None:
    """The premise of the tests below: truncated outputs live through a compaction."""
    session = _long_reads()
    result = Replayer(session).run(_policy())
    assert sum(event.kind == "compact" for event in result.events) >= 1
    sent = _sent(Replayer(session), _policy(), session)
    assert any("lines truncated" in output for _, _, output in sent)


def test_another_spill_folder_is_named_in_every_truncated_output() -> None:
    resumed, fresh = _resumed_and_fresh(
        _policy(spill_dir="/tmp/spill-one"), _policy(spill_dir="/tmp/spill-two")
    )
    assert not [m for m in resumed if "spill-one" in m[2]]
    assert any("spill-two" in output for _, _, output in fresh)
    assert resumed == fresh


def test_a_reused_compaction_keeps_this_runs_truncated_copies() -> None:
    """A hint of the same length words the truncated outputs otherwise at the same token
    counts: the compaction that follows has the same ids and tokens as the first run's."""
    other = DEFAULT_HINT.replace("Search", "Browse")
    assert other != DEFAULT_HINT and len(other) == len(DEFAULT_HINT)
    resumed, fresh = _resumed_and_fresh(_policy(), _policy(hint=other))
    assert any("Browse that file" in output for _, _, output in fresh)
    assert not [m for m in resumed if "Search that file" in m[2]]
    assert resumed == fresh
