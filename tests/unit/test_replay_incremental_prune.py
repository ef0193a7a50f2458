"""Other protected turns prune otherwise at every pruning attempt.

:meth:`core.replay.incremental.ResumePlanner.first_prune_difference` resumes a change of the
protected turns at the first pruning attempt without planning it under both settings: whatever
the messages, the two plans differ in what :func:`core.replay.incremental._decided` compares (the
skip boundaries differ, or both are 0 and each plan's summary names its own number of turns).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.algorithms.prune import plan_prune
from core.model.session import Message
from core.model.tokens import get_counter
from core.policy import PruningPolicy
from core.replay.incremental import _decided
from tests.unit.test_prune import NOW, STEP, build, seed_example

COUNTER = get_counter("chars/4")


def _plans_differ(messages: list[Message], a: PruningPolicy, b: PruningPolicy) -> bool:
    plans = [plan_prune(messages, p, counter=COUNTER, now_ms=NOW, copies=False) for p in (a, b)]
    return _decided(plans[0]) != _decided(plans[1])


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(STEP, max_size=40),
    pruned_every=st.integers(0, 12),
    turns=st.tuples(st.integers(1, 6), st.integers(1, 6)).filter(lambda t: t[0] != t[1]),
    budget_rule=st.booleans(),
    protect_tokens=st.integers(0, 150),
    minimum_tokens=st.integers(0, 150),
)
def test_other_protected_turns_always_decide_otherwise(
    steps: list[tuple[str, str, int]],
    pruned_every: int,
    turns: tuple[int, int],
    budget_rule: bool,
    protect_tokens: int,
    minimum_tokens: int,
) -> None:
    messages = build(steps, pruned_every)
    a, b = (
        PruningPolicy(
            protect_turns=n,
            budget_rule=budget_rule,
            protect_tokens=protect_tokens,
            minimum_tokens=minimum_tokens,
        )
        for n in turns
    )
    assert _plans_differ(messages, a, b)


def test_protecting_everything_either_way_still_decides_otherwise() -> None:
    messages = seed_example()  # user turns at 0, 3 and 8: three or four turns protect all
    a, b = PruningPolicy(protect_turns=3), PruningPolicy(protect_turns=4)
    plans = [plan_prune(messages, p, counter=COUNTER, now_ms=NOW) for p in (a, b)]
    assert plans[0].boundary == plans[1].boundary == 0
    assert plans[0].pruned_at == plans[1].pruned_at == []
    assert _plans_differ(messages, a, b)  # (the summaries: "fewer than 3 / 4 user turns")
    assert _plans_differ([], a, b)
