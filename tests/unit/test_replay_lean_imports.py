"""A replay imports the parts of the walk it uses when it first uses them: following an earlier
run (:mod:`core.replay.shifted`, :mod:`core.replay.lanes`: a one-shot command never does) and
rebuilding a context after a compaction or a pruning (:mod:`core.replay.rebuild`). ``analyze``
of a session whose replay compacts nowhere imports none of them. (What finds an attempt futile,
:mod:`core.replay.stuck`, is imported with the walk: a session whose compactions fail reads it
at every check that fires, where an import in the function would cost a look-up each time.)"""

from __future__ import annotations

from tests.support.paths import REPO
from tests.support.processes import run_python

_WALK_PARTS = ("core.replay.shifted", "core.replay.lanes", "core.replay.rebuild")

REPLAY = """
import sys
from core.formats import load_session
from core.replay.engine import Replayer
from core.replay.policies import native_policy
session = load_session({path!r})
replayer = Replayer(session)
result = replayer.run(native_policy(session))
assert result.points
print(",".join(sorted(m for m in {parts!r} if m in sys.modules)))
"""


def _imported(path: str) -> str:
    return run_python(REPLAY.format(path=path, parts=_WALK_PARTS)).strip()


def test_a_replay_that_compacts_nowhere_imports_no_part_it_does_not_use() -> None:
    sample = REPO / "sample_sessions" / "pi" / "branched.jsonl"
    assert _imported(str(sample)) == ""


def test_a_replay_that_compacts_imports_the_rebuild() -> None:
    """The parts are imported where used: a replay that compacts (the overflow sample's: the
    agent's rule fires where the recording overflowed) rebuilds its context with them.
    (Following an earlier run: ``tests/unit/test_replay_shifted.py``.)"""
    sample = REPO / "sample_sessions" / "claude-code" / "overflow.jsonl"
    assert "core.replay.rebuild" in _imported(str(sample)).split(",")
