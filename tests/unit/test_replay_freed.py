"""A replayed session is freed by reference counting once nothing uses it: no reference cycle
runs through the session, its replay or its results (a cycle is only freed by the cyclic
collector, which walks every object of the session to find it: an eighth of a fleet run; and
what a replay froze out of the collector's sight, a cycle among them would keep to the end).

Every test runs with the cyclic collector off, so an object still alive after its last user is
gone is one a cycle keeps."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.fleet import survey
from core.formats import load_session
from core.formats.ctxscope_jsonl import write_session
from core.model.session import Session, SourceFormat
from core.policy import Policy, get_preset
from core.replay import Replayer, native_policy, replay
from tests.support.fleet_sessions import write_built, write_fleet
from tests.support.sessions import read_bash_turns


@pytest.fixture(autouse=True)
def collector_off() -> Iterator[None]:
    """No cyclic collection during a test: what survives it is kept by a cycle."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref[Session]]:
    """A weak reference to every session the fleet loads."""
    refs: list[weakref.ref[Session]] = []

    def load(path: str) -> Session:
        session = load_session(path)
        refs.append(weakref.ref(session))
        return session

    monkeypatch.setattr(survey, "load_session", load)
    return refs


def _growing() -> Session:
    """Thirty turns growing past a 60k window: the replay compacts."""
    return read_bash_turns(30, 2_500)


def _policy(base: Policy, dotted: str, value: object) -> Policy:
    data = base.model_dump()
    section, name = dotted.split(".")
    data[section][name] = value
    return Policy.model_validate(data)


def test_a_fleet_row_leaves_no_session_behind(
    tmp_path: Path, loaded: list[weakref.ref[Session]]
) -> None:
    """Claude Code sessions (one with recorded compactions, one the replay compacts: the mock
    summariser writes the summaries), and Codex and pi ones: each is freed as its row is made."""
    built = write_fleet(tmp_path)
    write_built(tmp_path, "codex", [90_000, 180_000, 240_000], fmt=SourceFormat.CODEX)
    write_built(tmp_path, "pi", [90_000, 180_000, 240_000], fmt=SourceFormat.PI)
    write_session(_growing(), tmp_path / "growing.jsonl")
    names = [*built, "codex", "pi", "growing"]
    for name in names:
        row = survey.analyse_row(str(tmp_path / f"{name}.jsonl"))
        assert row.error is None, row.error
    assert len(loaded) == len(names)
    assert [ref() for ref in loaded] == [None] * len(names)


def test_the_detailed_analysis_leaves_no_session_behind(
    tmp_path: Path, loaded: list[weakref.ref[Session]]
) -> None:
    """With the calls and compactions of the export, too."""
    write_fleet(tmp_path)
    analysis = survey.analyse(str(tmp_path / "compacted.jsonl"), detail=True)
    assert analysis.calls and analysis.compactions
    assert loaded and loaded[0]() is None


def test_a_replayer_and_its_results_free_the_session() -> None:
    """Runs under several policies (one resuming another's trace, one compacting, the inferred
    threshold's walk) hold the session only while the replayer or a result is used."""
    session = _growing()
    ref = weakref.ref(session)
    replayer = Replayer(session)
    native = native_policy(session)
    results = [replayer.run(native)]
    results.append(replayer.run(_policy(native, "pruning.protect_turns", 5)))
    results.append(replayer.run(get_preset("seed")))
    replayer.inferred_threshold()
    assert all(result.events for result in results)
    policies = [result.policy for result in results]
    del session, replayer
    assert ref() is None  # (the results hold what they read, not the session)
    fresh = _growing()
    for result, policy in zip(results, policies, strict=True):
        dumped = result.model_dump(mode="json")
        assert dumped == replay(fresh, policy).model_dump(mode="json")


def test_a_single_replay_frees_the_session(tmp_path: Path) -> None:
    write_fleet(tmp_path)
    session = load_session(str(tmp_path / "compacted.jsonl"))
    ref = weakref.ref(session)
    result = replay(session, native_policy(session))
    assert result.points
    del session, result
    assert ref() is None
