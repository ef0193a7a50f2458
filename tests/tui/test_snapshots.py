"""SVG snapshots of the main screens at 120x34 (and the narrow layout at 80x24).

Baselines live in tests/tui/__snapshots__/test_snapshots/. After a deliberate visual change:
``pytest tests/tui/test_snapshots.py --snapshot-update``, then review the SVGs in the diff.
"""

from __future__ import annotations

import pytest
from snapshot_apps import (
    OVERFLOW_SAMPLE,
    SAMPLES,
    BuiltSessionApp,
    picker_app,
    prepare,
    sample_app,
)
from textual.pilot import Pilot

from tui.screens.session import SessionScreen

WIDE = (120, 34)
NARROW = (80, 24)

needs_samples = pytest.mark.skipif(
    not OVERFLOW_SAMPLE.exists(), reason="sample_sessions are not generated"
)


def _keys(*keys: str):  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[object]) -> None:
        await prepare(pilot)
        for key in keys:
            await pilot.press(key)
            await prepare(pilot)

    return run_before


@needs_samples
def test_picker(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(picker_app(), terminal_size=WIDE, run_before=_keys())


@needs_samples
def test_session_overflow_sample(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The main sample as `make run` opens it: list, gauge, detail, status."""
    assert snap_compare(sample_app(), terminal_size=WIDE, run_before=_keys())


@needs_samples
def test_session_narrow(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """80x24: the detail pane goes below the list."""
    assert snap_compare(sample_app(), terminal_size=NARROW, run_before=_keys("down", "down"))


@needs_samples
def test_session_truncated_output_selected(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The first output the policy truncates: ✂ rows and the model's preview in the detail."""

    async def run_before(pilot: Pilot[object]) -> None:
        await prepare(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, SessionScreen) and screen.state is not None
        result = screen.state.result
        assert result is not None
        first = next(m.message_index for m in result.messages if m.truncated)
        screen.select_message(first)
        await prepare(pilot)

    assert snap_compare(sample_app(policy="seed"), terminal_size=WIDE, run_before=run_before)


def test_session_compaction_split(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """`]` selects a compaction: head and tail in the gutter, the split rule between them."""
    assert snap_compare(
        BuiltSessionApp(policy="opencode"),
        terminal_size=WIDE,
        run_before=_keys("right_square_bracket"),
    )


def test_session_policy_panel(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(BuiltSessionApp(policy="seed"), terminal_size=WIDE, run_before=_keys("p"))


def test_session_search(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        BuiltSessionApp(policy="seed"),
        terminal_size=WIDE,
        run_before=_keys("slash", *"module_4", "enter"),
    )


def test_session_window_unknown_light(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """No window recorded (the header says so) in the light theme."""
    assert snap_compare(
        BuiltSessionApp(policy="seed", window=None), terminal_size=WIDE, run_before=_keys("t")
    )


def test_help(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        BuiltSessionApp(policy="seed"), terminal_size=WIDE, run_before=_keys("question_mark")
    )


@needs_samples
def test_overflow_view(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(sample_app(), terminal_size=WIDE, run_before=_keys("o"))


def test_samples_folder_is_where_the_snapshots_expect_it() -> None:
    assert SAMPLES.name == "sample_sessions"
