"""``RecordedCompactions.here``: the automatic recorded compaction before a call, found among the
compactions of that call (the same one a scan of them all finds), without scanning them all
each time a walk asks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.model.session import Session
from core.replay.recorded import RecordedCompaction, RecordedCompactions, placed
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files

_KINDS = ("auto", "overflow", "manual", "unknown")


def _scanned(recorded: RecordedCompactions, c: int, kind: str) -> RecordedCompaction | None:
    """The definition: the first of ``all`` before call ``c``, automatic, of ``kind`` (or of
    an unknown kind)."""
    for rc in recorded.all:
        if rc.recorded_call == c and rc.automatic and (rc.kind == kind or rc.kind == "unknown"):
            return rc
    return None


def _same_as_the_scan(session: Session) -> RecordedCompactions:
    calls, recorded = placed(session)
    for c in range(-1, len(calls) + 2):
        for kind in _KINDS:
            assert recorded.here(c, kind) is _scanned(recorded, c, kind), (c, kind)
    return recorded


def _compacted() -> Session:
    """Automatic compactions (two before the same call), a manual one and an overflow's."""
    builder = SessionBuilder().user("go")
    for k in range(3):
        builder.call(context=30_000 + 1_000 * k).result("x" * 400)
    builder.compaction(trigger="auto").compaction("## Goal\n- again", trigger="auto")
    builder.user("more").call(context=12_000).result("y" * 80)
    builder.compaction(trigger="manual").user("and more").call(context=9_000)
    builder.compaction(trigger="overflow").call(context=8_000)
    return builder.call().reply("done", context=13_000).session()


def test_here_is_the_first_automatic_compaction_of_the_call() -> None:
    recorded = _same_as_the_scan(_compacted())
    assert sum(rc.automatic for rc in recorded.all) >= 3


@pytest.mark.parametrize("path", small_shared_files(2_000_000)[:12] or [None])
def test_here_of_real_sessions(path: Path | None) -> None:
    _same_as_the_scan(load_shared_or_skip(path))


class _Unread(list[RecordedCompaction]):
    def __iter__(self) -> Iterator[RecordedCompaction]:
        raise AssertionError("every recorded compaction was scanned again")


def test_here_does_not_scan_every_compaction_at_each_call() -> None:
    _calls, recorded = placed(_compacted())
    first = recorded.here(3)
    assert first is not None
    recorded.all = _Unread(recorded.all)
    assert recorded.here(3) is first
    assert recorded.here(0) is None and recorded.here(3, "overflow") is None
