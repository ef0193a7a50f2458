"""The recorded contexts made a stretch between recorded compactions at a time (running sums,
each compaction clearing only what came since the one before), against a straightforward
computation of each call's context on its own: the last compaction before it, what that one
kept and wrote, and every message of the main conversation walked since."""

from __future__ import annotations

import pytest

from core.model.session import SourceFormat
from core.model.tokens import TokenCounter, get_counter
from core.replay.recorded import (
    BaseItems,
    RecordedCompaction,
    RecordedCompactions,
    RecordedSide,
    _recorded_contexts,
    placed,
)
from tests.support.builders import SessionBuilder


def _session_builder(recorded_usage: bool) -> SessionBuilder:
    """Four recorded compactions: one at the start, one keeping messages, one keeping fewer of
    them, one keeping from before what the one ahead of it kept (only what that one kept is
    still there); calls with and (``recorded_usage`` False: only) without usage, side chains
    between them."""

    def figure(value: int) -> int | None:
        return value if recorded_usage else None

    builder = SessionBuilder().compaction("## Goal\n- earlier work").user("go")
    for k in range(3):
        builder.call(context=figure(30_000 + 1_000 * k) if k != 1 else None)
        builder.result("x" * (400 + k))
    builder.user("aside", sidechain=True).call(context=figure(40_000), sidechain=True)
    builder.compaction(first_kept=4).user("again").call(context=figure(12_000))
    builder.result("y" * 80).call().result("v" * 120).user("and on")
    builder.compaction(first_kept=5).call(context=figure(9_000)).result("u" * 60)
    builder.user("more", sidechain=True).call(sidechain=True).call(context=figure(9_500))
    builder.compaction("## Goal\n- the third", first_kept=4).user("last").call()
    builder.result("t" * 33).call(context=figure(11_000))
    return builder.reply("done", context=figure(11_500))


def _base(
    rc: RecordedCompaction, before: set[int], tok: list[int], counter: TokenCounter
) -> BaseItems:
    kept = [] if rc.first_kept is None else sorted(j for j in before if rc.first_kept <= j < rc.m_c)
    items = [(j, tok[j]) for j in rc.owned]
    if rc.summary_message is not None:
        items.append((-1 - rc.index, counter.count(rc.summary_message.text)))
    return (*items, *((j, tok[j]) for j in kept))


def _per_call(
    recorded: RecordedCompactions, tok: list[int], counter: TokenCounter
) -> tuple[list[int], dict[int, tuple[BaseItems, int]], list[bool]]:
    """Each call's recorded context worked out on its own (quadratic: a walk from the last
    compaction before it), the compactions' contexts, and per call whether one came since the
    call before."""
    calls = recorded.calls
    applied = sorted(
        (rc for rc in recorded.all if not rc.rewound and 0 <= rc.m_c < calls.n),
        key=lambda rc: rc.m_c,
    )

    def walked(start: int, stop: int) -> list[int]:
        return [j for j in range(start, stop) if calls.main[j] and not recorded.owned[j]]

    bases: dict[int, tuple[BaseItems, int]] = {}
    in_context: set[int] = set()
    walk_start = 0
    for rc in applied:
        before = in_context | set(walked(walk_start, rc.m_c))
        items = _base(rc, before, tok, counter)
        bases[rc.index] = (items, rc.owned_end)
        in_context = {j for j, _t in items if j >= 0}
        walk_start = rc.owned_end
    e_cov: list[int] = []
    changed: list[bool] = []
    for c, i in enumerate(calls.calls):
        last = [rc for rc in applied if rc.m_c <= i]
        if last:
            items, start = bases[last[-1].index]
            cov = sum(t for _j, t in items)
        else:
            start, cov = 0, 0
        cov += sum(tok[j] for j in walked(start, i))
        if calls.main[i] and calls.after_reply[c]:
            cov += tok[i]
        e_cov.append(cov)
        previous = calls.calls[c - 1] if c else -1
        changed.append(any(previous < rc.m_c <= i for rc in applied))
    return e_cov, bases, changed


@pytest.mark.parametrize("recorded_usage", [True, False])
def test_the_contexts_made_per_stretch_are_each_calls_own(recorded_usage: bool) -> None:
    # (Codex: a call without usage is measured after its reply, which its context then holds)
    session = _session_builder(recorded_usage).session(fmt=SourceFormat.CODEX)
    calls, recorded = placed(session)
    assert calls.after_reply.count(1) == (0 if recorded_usage else len(calls))
    counter = get_counter("chars/4")
    tok = counter.messages_tokens(session.messages)
    side = RecordedSide()
    e_cov: list[int] = []
    changed = _recorded_contexts(side, e_cov, recorded, tok, counter)
    want_cov, want_bases, want_changed = _per_call(recorded, tok, counter)
    assert e_cov == want_cov
    assert side.bases == want_bases
    assert [bool(flag) for flag in changed] == want_changed
    # (the session is what the test means: four compactions, the second keeping messages
    # 4 to 7, the third 5 on: message 4 left the context there, and the last, keeping from
    # 4, finds it gone)
    assert len(side.bases) == 4 and sum(want_changed) == 4
    kept = [[j for j, _t in side.bases[rc.index][0] if 0 <= j < rc.m_c] for rc in recorded.all]
    assert kept[:3] == [[], [4, 5, 6, 7], [5, 6, 7, *range(10, 17)]]
    assert kept[3][:4] == [5, 6, 7, 10]  # (from 4 on: 4 is no longer there)
