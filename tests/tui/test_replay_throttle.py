"""The replay worker's progress throttle: a re-run stays quiet at first."""

from __future__ import annotations

import time

import pytest

from tui.screens.session.worker_messages import Throttle


def test_first_report_passes_at_once_by_default() -> None:
    throttle = Throttle(interval_s=3600.0)  # (no quiet start: only the interval is set)
    assert throttle.ready()
    assert not throttle.ready()  # the next one waits for the interval (far longer than the test)


def test_a_quiet_start_holds_the_first_report() -> None:
    throttle = Throttle(quiet_s=3600.0)  # (far longer than the test takes)
    assert not throttle.ready()
    assert not throttle.ready()


def test_the_first_report_passes_on_a_machine_just_booted(monkeypatch: pytest.MonkeyPatch) -> None:
    # The monotonic clock counts from boot: on a machine up for less than the interval, a first
    # report measured from 0 would be held.
    monkeypatch.setattr(time, "monotonic", lambda: 5.0)
    throttle = Throttle(interval_s=3600.0)
    assert throttle.ready()
    assert not throttle.ready()
