"""The scenes' ``settle`` waits for the app's workers at most SETTLE_LIMIT_S: a worker that never
ends fails the test that waits for it, naming the worker, instead of hanging the run."""

from __future__ import annotations

import threading

import pytest
from textual.app import App

import tools.scenes as scenes
from tests.support.tui_harness import until
from tools.scenes import settle


class _Stuck(App[None]):
    """An app whose one thread worker runs until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def on_mount(self) -> None:
        self.run_worker(self.release.wait, name="never-ending", group="stuck", thread=True)


async def test_a_worker_that_never_ends_fails_settle_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scenes, "SETTLE_LIMIT_S", 0.3)
    app = _Stuck()
    try:
        async with app.run_test() as pilot:
            await until(pilot, lambda: any(w.is_running for w in app.workers), "the worker runs")
            with pytest.raises(AssertionError, match="'never-ending' \\(stuck\\) did not end"):
                await settle(pilot)
            app.release.set()
    finally:
        app.release.set()


async def test_settle_returns_once_the_workers_are_done() -> None:
    app = _Stuck()
    app.release.set()
    async with app.run_test() as pilot:
        await settle(pilot)
        assert not [w for w in app.workers if w.is_running]
