"""The app moves what is alive at start-up out of the collector's sight and collects the young
generation less often (:func:`tui.screens.session.heap.freeze_heap`), before any screen is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tui.app import CtxscopeApp


@pytest.fixture
def default_collector() -> Iterator[None]:
    before = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("default_collector")
def test_the_app_tunes_the_collector_when_it_is_made() -> None:
    assert gc.get_freeze_count() == 0
    CtxscopeApp(None, discover=lambda: [], live=False)
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] >= 7_000
