"""``o`` on a session that came close without overflowing explains the nearest approach to the
window and why each recorded compaction ran."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from textual.widgets import Static

from core.formats import load_session
from core.replay import native_policy, replay
from tests.support.paths import REPO
from tests.support.views_fixtures import Host
from tui.screens.overflow import OverflowScreen

COMPACTED = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"


@pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")
async def test_no_overflow_explains_the_nearest_approach_and_each_compaction() -> None:
    session = load_session(str(COMPACTED))
    result = replay(session, native_policy(session))
    app = Host(Static("behind"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = OverflowScreen(session, result)
        app.push_screen(screen)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.diagnosis is not None and screen.diagnosis.call_index is None
        facts_view = screen.query_one("#ov-facts", Static)
        assert facts_view.display
        console = Console(width=116, record=True, file=io.StringIO())
        console.print(facts_view.content)
        facts = " ".join(console.export_text().split())
        peak = result.summary.peak_recorded
        assert peak is not None
        assert f"Nearest {peak:,} tokens recorded" in facts, facts
        assert f"{peak / 200_000:.1%} of 200,000" in facts
        assert "Compaction #0" in facts and "Compaction #1" in facts
        assert "auto" in facts and "manual" in facts
        # each automatic compaction's cause: the check against the threshold, named as elsewhere
        row = next(r for r in result.fidelity if r.recorded_index == 0)
        assert row.check_tokens is not None and row.threshold is not None
        assert f"measured {row.check_tokens:,}, which reached the threshold {row.threshold:,}" in (
            facts
        ), facts
        assert "agent's count 167,888" in facts
