"""The recording's checks (the evidence about the agent's threshold) come from the run of the
agent's own preset where they can: one walk where there were two.

:meth:`core.replay.Replayer.recorded_checks` measures what the preset's check sees when the run
makes exactly the recording's compactions. Up to the first call where the preset's own run departs
from that (:attr:`core.replay.state.Trace.first_divergence`) the two runs have the same context, so
the walk following the recording resumes there. Whatever the resume point, the checks and the
inferred threshold must be the ones a walk from the start gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from core.formats import load_session
from core.model.session import Session
from core.replay import Replayer, simulate
from core.replay import state as state_module
from core.replay.policies import native_policy
from core.replay.recorded import placed
from core.replay.state import Check
from tests.unit.test_replay import _random_session

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
FILES = [
    "samples/claude-code/claude-2.1.4_auto-2x_alignment-hive_e7e29155.jsonl",
    "samples/claude-code/claude-2.1.226_auto-2x_flutter-docker-image_K1.jsonl",
    "samples/claude-code/claude-2.1.49_manual-1x_cipher-box_c644f3afc8.jsonl",
    "samples/codex/codex-desktop-0.142.5_gpt-5.5_auto-midturn-2x_mise_4812ee462d.jsonl",
    "samples/codex/codex-tui-0.118.0_gpt-5.4_auto-midturn+preturn_git-sync_f2725f595f.jsonl",
    "samples/pi/before-compaction.jsonl",
    "samples/opencode/opencode-1.18.9_openai-gpt-5.6-luna_auto-overflow_shui_12.json",
]


def _figures(checks: Sequence[Check | None]) -> list[tuple[object, ...] | None]:
    """What the evidence reads of each check."""
    return [
        None
        if check is None
        else (check.base, check.proj, check.checks_now, check.baseline_measure)
        for check in checks
    ]


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the message each walk starts from."""
    starts: list[int] = []
    walk = simulate.Run.walk

    def recording(self: simulate.Run, pos: int, *args: object, **kwargs: object) -> None:
        starts.append(pos)
        walk(self, pos, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(simulate.Run, "walk", recording)
    return starts


def _compare(session: Session, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """The checks with and without the preset's run first are the same; returns where the
    walk following the recording started, and where the preset's run departs from it."""
    native = native_policy(session)
    alone = Replayer(session)
    setting = alone._setting(native)
    expected = _figures(alone.recorded_checks(setting))
    shared = Replayer(session)
    shared.run(native)
    starts = _walks(monkeypatch)
    got = _figures(shared.recorded_checks(shared._setting(native)))
    monkeypatch.undo()
    assert got == expected
    assert shared.inferred_threshold() == alone.inferred_threshold()
    trace = shared._traces[next(reversed(shared._traces))]
    divergence = len(shared._calls) if trace.first_divergence is None else trace.first_divergence
    assert len(starts) == 1
    return starts[0], divergence


@pytest.mark.parametrize("name", FILES)
def test_the_recordings_checks_resume_from_the_presets_run(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = SHARED / name
    if not path.exists():
        pytest.skip("shared samples absent")
    session = load_session(path)
    start, divergence = _compare(session, monkeypatch)
    calls, _recorded = placed(session)
    # The walk following the recording starts where the preset's run departs from it: at the
    # message of that call (or past the end when it never does).
    expected = (
        calls.n if divergence == len(calls) else (calls.calls[divergence] if divergence else 0)
    )
    assert start == expected


@pytest.mark.parametrize("seed", range(40))
def test_the_recordings_checks_are_the_same_on_built_sessions(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare(_random_session(seed), monkeypatch)


def test_a_session_the_preset_replays_as_recorded_needs_no_second_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = SHARED / FILES[0]
    if not path.exists():
        pytest.skip("shared samples absent")
    session = load_session(path)
    start, divergence = _compare(session, monkeypatch)
    if divergence < len(placed(session)[0]):
        pytest.skip("the preset's run departs from the recording on this sample")
    assert start == len(session.messages)  # nothing walked


@pytest.mark.parametrize("seed", range(20))
def test_the_recordings_checks_are_the_same_when_the_presets_run_was_resumed(seed: int) -> None:
    """The preset's run resumed from a run of the preset with another threshold: where it
    departs from the recording is carried over from the run it resumed."""
    session = _random_session(seed)
    native = native_policy(session)
    alone = Replayer(session)
    expected = _figures(alone.recorded_checks(alone._setting(native)))
    shared = Replayer(session)
    other = native.model_copy(deep=True)
    other.compaction.reserve_tokens += 3_000
    shared.run(other)
    shared.run(native)
    assert _figures(shared.recorded_checks(shared._setting(native))) == expected
    assert shared.inferred_threshold() == alone.inferred_threshold()


@pytest.mark.parametrize("seed", [s for s in range(20) if s != 15])  # (15: two calls)
def test_the_recordings_checks_are_the_same_with_sparse_checkpoints(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long session's runs keep a checkpoint every few calls only: the walk following the
    recording resumes from the last one kept before the preset's run departs from it, and
    measures the checks a walk from the start measures."""
    monkeypatch.setattr(state_module, "CHECKPOINTS_KEPT", 2)
    session = _random_session(seed)
    assert state_module.checkpoint_spacing(len(placed(session)[0])) > 1
    start, divergence = _compare(session, monkeypatch)
    calls, _recorded = placed(session)
    assert start <= (calls.n if divergence == len(calls) else calls.calls[divergence])


@pytest.mark.parametrize("seed", range(6))
def test_the_walk_following_the_recording_keeps_no_state_to_resume_from(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only its checks are read: the state is not copied before each call (a checkpoint), as a
    run of a policy's is; the state it starts from and the one it ends with are."""
    session = _random_session(seed)
    calls = len(placed(session)[0])
    native = native_policy(session)
    replayer = Replayer(session)
    setting = replayer._setting(native)
    copies: list[int] = []
    copy = state_module.State.copy

    def counted(state: state_module.State) -> state_module.State:
        copies.append(1)
        return copy(state)

    monkeypatch.setattr(state_module.State, "copy", counted)
    checks = replayer.recorded_checks(setting)
    assert len(checks) == calls
    assert len(copies) <= 2 < calls
