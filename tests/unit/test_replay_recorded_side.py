"""The recorded side's per-call figures (``measure_recorded_side``), against the walk they are
defined by: one message at a time, looking up the recorded compactions before each."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.model.session import Provenance, Session
from core.model.tokens import TokenCounter, get_counter
from core.replay.calls import narrowest
from core.replay.recorded import (
    RecordedCompactions,
    RecordedSide,
    _context_after,
    measure_recorded_side,
    placed,
)
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files


def _reference(
    recorded: RecordedCompactions, tok: list[int], counter: TokenCounter
) -> RecordedSide:
    """``e_rec_cov``, ``bases``, the baselines and the ratio, message by message."""
    side = RecordedSide()
    calls = recorded.calls
    base_sum = walk = walk_start = 0
    in_ctx = [False] * calls.n
    changed_before: list[bool] = []
    changed = False
    for i in range(calls.n):
        for rc in recorded.at.get(i, ()):
            if rc.rewound:
                continue
            items = _context_after(rc, in_ctx, tok, counter)
            base_sum, walk, walk_start = sum(t for _j, t in items), 0, rc.owned_end
            side.bases[rc.index] = (items, walk_start)
            changed = True
        c = calls.call_of[i]
        if c >= 0:
            cov = base_sum + walk
            if calls.kinds[c] == "after-reply" and calls.main[i]:
                cov += tok[i]
            side.e_rec_cov.append(cov)
            changed_before.append(changed)
            changed = False
        if calls.main[i] and not recorded.owned[i] and i >= walk_start:
            walk += tok[i]
            in_ctx[i] = True
    for c, figure in enumerate(calls.usage_context):
        if figure is not None:
            side.overhead = max(0, figure - side.e_rec_cov[c])
            break
    else:
        measured = calls.session.metadata.get("context_overhead")
        if isinstance(measured, int) and measured > 0:
            side.overhead = measured
    e_cov, last = side.e_rec_cov, None
    for c, i in enumerate(calls.calls):
        if changed_before[c]:
            last = None
        figure = calls.usage_context[c]
        after = calls.kinds[c] == "after-reply"
        reply = tok[i] if calls.main[i] else 0
        side.e_rec_after.append(e_cov[c] + (0 if after else reply))
        if figure is not None:
            prompt = calls.usage_prompt[c]
            side.baseline.append(figure)
            side.baseline_prompt.append(prompt if prompt is not None else figure)
            side.baseline_after.append(calls.usage_after[c] or figure)
            side.baseline_prov.append(Provenance.RECORDED)
            last = (figure, e_cov[c])
            continue
        value = max(0, last[0] + e_cov[c] - last[1]) if last else side.overhead + e_cov[c]
        side.baseline.append(value)
        side.baseline_prompt.append(max(0, value - reply) if after else value)
        side.baseline_after.append(value if after else value + reply)
        side.baseline_prov.append(counter.provenance)
    ratios = sorted(
        (calls.usage_context[c] or 0) / e_cov[c] - side.overhead / e_cov[c]
        for c in range(len(calls))
        if calls.usage_context[c] is not None and e_cov[c] > 0
    )
    if ratios:
        side.ratio = min(4.0, max(0.25, ratios[len(ratios) // 2]))
    return side


_FIELDS = (
    "e_rec_cov",
    "e_rec_after",
    "bases",
    "baseline",
    "baseline_prompt",
    "baseline_after",
    "baseline_prov",
    "overhead",
    "ratio",
)
_COLUMNS = ("e_rec_cov", "e_rec_after", "baseline_prompt")
"""The int columns held as arrays once measured (:func:`core.replay.calls.narrowest`)."""


def _same_as_reference(session: Session) -> RecordedSide:
    _calls, recorded = placed(session)
    counter = get_counter("chars/4")
    tok = counter.messages_tokens(session.messages)
    side = measure_recorded_side(recorded, tok, counter)
    expected = _reference(recorded, tok, counter)
    for field in _FIELDS:
        got, want = getattr(side, field), getattr(expected, field)
        if field in _COLUMNS:
            got, want = list(got), list(want)
        assert got == want, field
    # (the int columns in 4-byte arrays, every figure fitting)
    assert {getattr(side, name).typecode for name in _COLUMNS} == {"i"}
    return side


def _compacted() -> Session:
    """Two recorded compactions (one at the very start, one keeping messages), calls with and
    without usage, a side chain."""
    builder = SessionBuilder().compaction("## Goal\n- earlier work").user("go")
    for k in range(4):
        builder.call(context=None if k == 1 else 30_000 + 1_000 * k).result("x" * 400)
    builder.user("more", sidechain=True).call(context=40_000, sidechain=True)
    builder.compaction(first_kept=6).user("again").call(context=12_000).result("y" * 80)
    return builder.call().reply("done", context=13_000).session()


def test_recorded_side_is_the_message_walk() -> None:
    side = _same_as_reference(_compacted())
    assert len(side.bases) == 2 and len(side.e_rec_cov) == 7  # (the side chain makes no call)


@pytest.mark.parametrize("path", small_shared_files(2_000_000)[:12] or [None])
def test_recorded_side_of_real_sessions(path: Path | None) -> None:
    _same_as_reference(load_shared_or_skip(path))


def test_the_narrowest_column_holds_every_figure() -> None:
    small, large, huge = [0, -1, 2**31 - 1, -(2**31)], [2**31, -(2**31) - 1], [2**63]
    for values, typecode in ((small, "i"), (small + large, "q")):
        column = narrowest(values)
        assert isinstance(column, array) and column.typecode == typecode
        assert list(column) == values
    assert narrowest(small + huge) == small + huge
    assert list(narrowest(array("q", small))) == small


def test_every_call_with_its_figures_takes_them_as_recorded() -> None:
    """A session whose every call recorded its figures (the usual case: the baselines are the
    recorded columns, taken at once), a recorded compaction and a side chain among them."""
    builder = SessionBuilder().user("go")
    for k in range(5):
        builder.call(context=20_000 + 3_000 * k).result("z" * (300 + k))
    builder.user("more", sidechain=True).call(context=9_000, sidechain=True)
    builder.compaction(first_kept=3).user("again").call(context=15_000).result("w" * 90)
    session = builder.reply("done", context=16_000).session()
    calls, _recorded = placed(session)
    assert None not in calls.usage_context and all(calls.usage_after)
    side = _same_as_reference(session)
    assert side.baseline == calls.usage_context
    assert set(side.baseline_prov) == {Provenance.RECORDED}


def _narrowest_reference(values: list[int]) -> Any:
    """:func:`narrowest` type by type (the signed 4-byte array first)."""
    for typecode in "iq":
        try:
            return array(typecode, values)
        except OverflowError:
            continue
    return values


_EDGES = st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, -1, -(2**31), 2**63 - 1, 2**63])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_EDGES, st.integers(-(2**40), 2**40), st.integers(0, 10**6))))
def test_the_narrowest_column_read_through_an_unsigned_one_is_the_same(values: list[int]) -> None:
    """Values read into an unsigned array first (the quick way, where all are from 0 to
    2**31 - 1): the same column, of the same type, as tried type by type."""
    got, want = narrowest(values), _narrowest_reference(values)
    assert type(got) is type(want) and list(got) == list(want)
    if isinstance(want, array):
        assert isinstance(got, array) and got.typecode == want.typecode
    assert list(narrowest(array("q", values))) == list(want) if isinstance(want, array) else True
