"""The recorded walk (core.insights.context_walk): ``compaction_steps()`` yields exactly the
compaction steps of the full walk, on built sessions (sidechains, kept tails, a rewound and a
back-to-back compaction) and on every sample of ../shared/samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.formats import load_session
from core.insights.context_walk import CompactionStep, RecordedWalk
from core.model.session import Session
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO, opencode_storage_piece

SAMPLES = REPO.parent / "shared" / "samples"


def _full(session: Session) -> list[CompactionStep]:
    return [s for s in RecordedWalk(session).steps() if isinstance(s, CompactionStep)]


def _built() -> Session:
    builder = (
        SessionBuilder()
        .user("start")
        .call("read", context=1_000)
        .result(tokens=200)
        .reply("side", context=1_300, sidechain=True)
        .reply("first", context=1_500)
        .user("more")
        .reply("second", context=2_000)
        .compaction(tokens_before=2_000, first_kept=5)
        .compaction(tokens_before=900)
        .user("again")
        .call("grep", context=1_200)
        .result(tokens=300)
        .compaction(tokens_before=1_600)
        .reply("last", context=800)
    )
    session = builder.session()
    session.compactions[2].rewound = True
    return session


def test_compaction_steps_are_the_walks_on_a_built_session() -> None:
    session = _built()
    full = _full(session)
    assert [s.compaction.index for s in full] == [0, 1]  # the rewound one never took effect
    assert list(RecordedWalk(session).compaction_steps()) == full
    assert full[0].kept  # the kept tail is part of what the fast walk must find


def _samples() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    return sorted(
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json") and not opencode_storage_piece(p)
    )


@pytest.mark.parametrize("path", _samples(), ids=lambda p: p.name)
def test_compaction_steps_are_the_walks_on_every_sample(path: Path) -> None:
    session = load_session(path)  # (every sample but an opencode storage piece is a session)
    assert list(RecordedWalk(session).compaction_steps()) == _full(session)
