"""SVG snapshots of every scene: each screen and state a user can reach (tools.scenes), and the ones
only a test can hold still (snapshot_apps: a file being read, a replay or a summary running).

Baselines live in tests/tui/__snapshots__/test_snapshots/. After a deliberate visual change:
``pytest tests/tui/test_snapshots.py --snapshot-update``, then look at the SVGs in the diff
(``python -m tools.screenshots NAME --out /tmp/x`` draws one scene as SVG + PNG).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from tests.tui import snapshot_apps
from tools.scenes import OVERFLOW, SAMPLES, SCENES, Scene, fixed_timezone

needs_samples = pytest.mark.skipif(
    not OVERFLOW.exists(), reason="sample_sessions are not generated"
)

SnapCompare = Callable[..., bool]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The picker shows local dates: draw them in UTC, then give the zone back."""
    monkeypatch.setenv("TZ", "UTC")
    fixed_timezone()
    yield
    monkeypatch.undo()
    time.tzset()


def draw(snap_compare: SnapCompare, scene: Scene) -> bool:
    return snap_compare(scene.app(), terminal_size=scene.size, run_before=scene.run)


@needs_samples
@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_scene(snap_compare: SnapCompare, scene: Scene) -> None:
    assert draw(snap_compare, scene)


HELD_SCENES = [
    snapshot_apps.loading,
    snapshot_apps.loading_first_part,
    snapshot_apps.replaying,
    snapshot_apps.compaction_running,
    snapshot_apps.compaction_cancelled,
]


@needs_samples
@pytest.mark.parametrize("held", HELD_SCENES, ids=[h.__name__ for h in HELD_SCENES])
def test_held_scene(
    snap_compare: SnapCompare,
    monkeypatch: pytest.MonkeyPatch,
    held: Callable[[pytest.MonkeyPatch], Scene],
) -> None:
    assert draw(snap_compare, held(monkeypatch))


def test_every_scene_has_its_own_name() -> None:
    names = [s.name for s in SCENES]
    assert len(set(names)) == len(names)
    assert SAMPLES.name == "sample_sessions"
