"""A limit change that leaves the window and compaction fields alone keeps the windows and
thresholds of the run before (made once, not per policy: 10^5 calls each); a change of either
makes them again, as a replayer that never saw the first policy makes them."""

from __future__ import annotations

from typing import Any

from core.policy import Policy, get_preset
from core.replay import Replayer
from tests.support.builders import SessionBuilder, text_of_tokens


def _session() -> Any:
    script = SessionBuilder()
    context = 2_000
    for turn in range(30):
        script.user(text_of_tokens(900, "u"))
        context += 900
        script.call("read", context=context)
        script.result(text_of_tokens(700, "r"))
        context += 700
        script.reply(f"ok {turn}", context=context)
    return script.session(window=60_000)


def _changed(policy: Policy, section: str | None, field: str, value: Any) -> Policy:
    policy = policy.model_copy(deep=True)
    setattr(policy if section is None else getattr(policy, section), field, value)
    return policy


def test_a_truncation_or_pruning_change_keeps_the_windows_and_thresholds() -> None:
    session = _session()
    replayer = Replayer(session)
    base = get_preset("seed")
    first = replayer._setting(base)
    for section, field, value in (("truncation", "max_lines", 40), ("pruning", "protect_turns", 4)):
        setting = replayer._setting(_changed(base, section, field, value))
        assert setting.windows is first.windows and setting.limits is first.limits
        assert setting.spans is first.spans


def test_a_window_or_compaction_change_makes_them_again() -> None:
    session = _session()
    replayer = Replayer(session)
    base = get_preset("seed")
    first = replayer._setting(base)
    for section, field, value in (
        (None, "context_window", 40_000),
        ("compaction", "reserve_tokens", 30_000),
    ):
        policy = _changed(base, section, field, value)
        setting = replayer._setting(policy)
        fresh = Replayer(session)._setting(policy)
        assert (setting.windows, setting.limits, setting.spans) == (
            fresh.windows,
            fresh.limits,
            fresh.spans,
        )
    # (and back: the first policy's again)
    again = replayer._setting(base)
    assert (again.windows, again.limits, again.spans) == (first.windows, first.limits, first.spans)
