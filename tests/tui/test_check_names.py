"""``check`` and ``check on the recording`` are two figures with two names, on every screen and
command that shows a check beside a recorded compaction.

``check`` (:data:`core.insights.named_figures.CHECK_FIGURE`) is what the replay's check measured
before the compaction's call; ``check on the recording`` (``RECORDING_CHECK``) what the same check
measures when the run makes exactly the recording's compactions: the evidence of the inferred
threshold. They differ where the replay's context went another way (a Claude Code sample: 318,583
and 167,009, the replay having missed the compaction before). The policy panel called the second
"the check figure", and the commands did not show it at all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from core.formats import load_session
from core.insights.named_figures import (
    CHECK_FIGURE,
    RECORDING_CHECK,
    compaction_figures,
    recording_checks,
)
from core.replay import Replayer, native_policy
from tools.scenes import SAMPLES, settle
from tui.app import CtxscopeApp
from tui.cli.main import cli
from tui.screens.compaction import CompactionScreen
from tui.screens.session import SessionScreen
from tui.widgets.policy_panel import PolicyPanel

SHARED = SAMPLES.parents[1] / "shared" / "samples" / "claude-code"
FILES = [
    SAMPLES / "claude-code" / "compacted.jsonl",  # check 167,180, on the recording 167,792
    SHARED / "claude-2.1.226_auto-2x_flutter-docker-image_K1.jsonl",  # 318,583 and 167,009
]
NAMED = re.compile(r"\b(check on the recording|check)[ \u00a0]+([\d,]+)")


def _named_checks(text: str) -> list[tuple[str, int]]:
    flat = " ".join(text.split())
    return [(name, int(value.replace(",", ""))) for name, value in NAMED.findall(flat)]


def _expect(path: Path) -> tuple[dict[int, int | None], dict[int, int]]:
    """Each recorded compaction's ``check`` and ``check on the recording``, from named_figures."""
    session = load_session(path)
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    checks = {f.recorded_index: f.check_tokens for f in compaction_figures(session, result)}
    return checks, recording_checks(replayer)


def _assert_named(text: str, checks: set[int | None], recording: set[int], where: str) -> None:
    """Every figure named ``check`` is a replay's check, every ``check on the recording`` one
    of the recording; a figure that is only the recording's never goes by ``check``."""
    for name, value in _named_checks(text):
        if name == RECORDING_CHECK.name:
            assert value in recording, (where, name, value, text)
        else:
            assert name == CHECK_FIGURE.name
            assert value in checks or value not in recording, (where, name, value, text)


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_the_commands_name_both_checks(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    checks, recording = _expect(path)
    differing = {k: v for k, v in recording.items() if v != checks.get(k)}
    assert differing, "the sample should show the two figures apart"
    for command in ("compactions", "fidelity", "analyze", "replay"):
        text = _cli(command, str(path))
        _assert_named(text, set(checks.values()), set(recording.values()), command)
        if command in ("compactions", "fidelity"):  # (analyze and replay: under their options)
            for k, value in differing.items():
                said = f"{RECORDING_CHECK.name} {value:,}"
                assert said in " ".join(text.replace("\u00a0", " ").split()), (command, k, said)
    fidelity = _cli("fidelity", str(path))
    assert f"interval ({RECORDING_CHECK.name})" in " ".join(fidelity.split())


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
async def test_the_screens_name_both_checks(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    checks, recording = _expect(path)
    check_values, recorded_values = set(checks.values()), set(recording.values())
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        state = screen.state
        assert state is not None and state.result is not None
        # the list's rules and split lines
        boundaries = [m for m in state.markers if m.kind == "boundary"]
        for marker in state.markers:
            _assert_named(marker.text, check_values, recorded_values, "list")
        for k, value in recording.items():
            assert f"{RECORDING_CHECK.name} {value:,}" in boundaries[k].text, boundaries[k].text
        # the detail pane at each recorded compaction
        for compaction in state.session.compactions:
            screen.select_message(compaction.message_index)
            await settle(pilot)
            decision = screen.detail.section_text("decision", width=300)
            _assert_named(decision, check_values, recorded_values, "detail")
        # the policy panel's evidence: the interval is the check on the recording's
        await pilot.press("p")
        await settle(pilot)
        evidence = str(screen.query_one(PolicyPanel).query_one("#pp-evidence", Static).render())
        flat = " ".join(evidence.split())
        assert f"by the {CHECK_FIGURE.name} figure" not in flat  # (was its name there)
        assert RECORDING_CHECK.name in flat
        # the compaction screen, at every stop
        compaction_screen = CompactionScreen(state.session, state.policy, 0, state.result)
        app.push_screen(compaction_screen)
        await settle(pilot)
        for position in range(len(compaction_screen.events)):
            compaction_screen.show_event(position)
            await pilot.pause()
            text = str(compaction_screen.query_one("#cs-tokens").render())
            _assert_named(text, check_values, recorded_values, "compaction screen")
            stop = compaction_screen.events[position]
            index = stop.recorded_index
            if index is not None and index in recording:
                said = f"{RECORDING_CHECK.name} {recording[index]:,}"
                assert said in " ".join(text.split()), text
