"""One truth on every screen: for every sample session, the figures the TUI shows for a
call and a compaction — header, status line, list, detail pane, gauge, compaction screen, overflow
view — are the values the command line's ``--json`` gives for the same call.

The command line runs in-process (``replay --json``, ``analyze --json``) and the app opens the
same file under the same policy (the recording agent's preset, as both choose by default). Each
file is one test; the real sessions of ``../shared/samples`` are read when present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot

from core.formats import LoadError, detect_format, load_session
from core.insights.breakdown import breakdown
from core.insights.cost import (
    CompactionCost,
    SessionCost,
    compaction_cost_label,
    cost_label,
    session_cost,
)
from tools.scenes import SAMPLES, settle
from tui.app import CtxscopeApp
from tui.cli.commands.breakdown import calls_table
from tui.cli.main import cli
from tui.figures import check_line, index_runs
from tui.screens.compaction import CompactionScreen
from tui.screens.overflow import OverflowScreen
from tui.screens.session import SessionScreen

SHARED = SAMPLES.parents[1] / "shared" / "samples"
SIZE = (160, 40)
"""Wide enough for the gauge to spell every figure out."""


def _sample_files() -> list[Path]:
    files = [
        SAMPLES / "claude-code" / "compacted.jsonl",
        SAMPLES / "claude-code" / "long.jsonl",
        SAMPLES / "claude-code" / "overflow.jsonl",
        *sorted((SAMPLES / "codex").glob("*.jsonl")),
        SAMPLES / "ctxscope" / "long.jsonl",
        SAMPLES / "live" / "growing.jsonl",
        SAMPLES / "opencode" / "export.json",
        SAMPLES / "opencode" / "storage",
        SAMPLES / "pi" / "branched.jsonl",
        SAMPLES / "pi" / "session.jsonl",
    ]
    return [f for f in files if f.exists()]


def _shared_files() -> list[Path]:
    if not SHARED.is_dir():
        return []
    found = [
        p for p in sorted(SHARED.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".json")
    ]
    found = [p for p in found if "storage" not in p.parts and "subagents" not in p.parts]
    if (SHARED / "opencode" / "storage").is_dir():
        found.append(SHARED / "opencode" / "storage")
    sessions = []
    for path in found:
        try:
            detect_format(path)
        except (LoadError, OSError, ValueError):
            continue
        sessions.append(path)
    return sessions


FILES = _sample_files() + _shared_files()


def _cli(command: str, path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, [command, str(path), "--json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _breakdown_title(path: Path) -> str:
    """The title ``ctxscope breakdown`` prints over its table (made by the command's own
    :func:`calls_table`, not rendered: printing thousands of rows took most of this test)."""
    session = load_session(path)
    return _flat(str(calls_table(breakdown(session), session_cost(session)).title))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _chosen_calls(replay: dict[str, Any]) -> list[int]:
    """The calls compared: first, last, the peak, each compaction, the first overflow."""
    points = replay["points"]
    if not points:
        return []
    calls = {0, len(points) - 1}
    peak = replay["summary"]["peak_call_index"]
    if peak is not None:
        calls.add(peak)
    for event in replay["events"]:
        if event["kind"] in ("compact", "recorded-compaction") and event["call_index"] is not None:
            calls.add(event["call_index"])
    overflow = next((p["call_index"] for p in points if p["overflow_recorded"]), None)
    if overflow is not None:
        calls.add(overflow)
    return sorted(calls)[:8]


async def _check_calls(pilot: Pilot[None], screen: SessionScreen, replay: dict[str, Any]) -> None:
    state = screen.state
    assert state is not None and state.result is not None
    for call in _chosen_calls(replay):
        point = replay["points"][call]
        screen.select_message(point["message_index"])
        await settle(pilot)
        assert screen.gauge.selected_call == call
        label = screen.gauge._label_text(call, 0).plain  # the gauge's own words, spelled out
        assert label.startswith(f" call {call} · msg #{point['message_index']}")
        if point["recorded_tokens"] is not None:
            assert f"recorded {point['recorded_tokens']:,}" in label
        assert f"simulated {point['simulated_tokens']:,}" in label
        if point["window"]:
            assert f"window {point['window']:,}" in label
        head = screen.detail.section_text("head", width=300).strip().split(" · ")
        assert head[0].startswith(f"#{point['message_index']} ") and f"call {call}" in head
        decision = _flat(screen.detail.section_text("decision", width=300))
        assert check_line(state.result.points[call], state.policy) in decision
        if point["checked"]:
            assert f"checked before this call: {point['check_tokens']:,}" in decision
        message = replay["messages"][point["message_index"]]
        tokens = screen.detail.section_text("tokens", width=300)
        assert f"replay  {message['tokens']:,}" in _flat(tokens).replace("replay ", "replay  ")


def _check_header_and_status(screen: SessionScreen, replay: dict[str, Any]) -> None:
    window = str(screen.query_one("#hdr-window").render())
    if replay["window"]:
        assert f"{replay['window']:,}" in window and f"({replay['window_source']})" in window
    peak = str(screen.query_one("#status-peak").render())
    summary = replay["summary"]
    lead = summary["peak_recorded"] if summary["peak_recorded"] is not None else None
    if lead is None:
        lead = summary["peak_simulated"]
    assert peak.startswith(f"peak {lead:,}")
    if summary["peak_recorded"] is not None and summary["peak_simulated"] != lead:
        assert f"simulated {summary['peak_simulated']:,}" in peak


def _check_cost(screen: SessionScreen, analyze: dict[str, Any], breakdown: str) -> None:
    """The session's cost: the status line and ``ctxscope breakdown`` both say
    ``cost_label`` of ``analyze --json``'s cost."""
    cost = SessionCost.model_validate(analyze["cost"])
    info = str(screen.query_one("#status-info").render())
    if cost.calls:
        assert f"cost {cost_label(cost)}" in info
        assert f"session cost {cost_label(cost)}" in breakdown
    else:
        assert "cost" not in info


def _check_list(screen: SessionScreen, replay: dict[str, Any], analyze: dict[str, Any]) -> None:
    state = screen.state
    assert state is not None
    boundaries = [m for m in state.markers if m.kind == "boundary"]
    by_index = {row["recorded_index"]: row for row in analyze["fidelity"]}
    for k, marker in enumerate(boundaries):
        row = by_index.get(k)
        if row is None:
            continue
        assert marker.text.startswith(f"recorded compaction #{k} · {row['trigger']}")
        if row["tokens_before"] is not None:
            assert f"{row['tokens_before']:,}" in marker.text
    split = next((m for m in state.markers if m.kind == "split"), None)
    if split is not None and state.active_event is not None:
        event = replay["events"][state.active_event]
        if event["tokens_before"] is not None and event["tokens_after"] is not None:
            assert f"{event['tokens_before']:,} → {event['tokens_after']:,}" in split.text


async def _check_compactions(
    pilot: Pilot[None], screen: SessionScreen, replay: dict[str, Any], analyze: dict[str, Any]
) -> None:
    state = screen.state
    assert state is not None and state.result is not None
    compaction = CompactionScreen(state.session, state.policy, 0, state.result)
    pilot.app.push_screen(compaction)
    await settle(pilot)
    events = [e for e in replay["events"] if e["kind"] in ("compact", "recorded-compaction")]
    costs = {
        c["why"]["recorded_index"]: c["cost"]
        for c in analyze["compactions"]
        if c["cost"] is not None and c["why"]["recorded_index"] is not None
    }
    # (the screen also stops at the recorded compactions the replay did not apply)
    replayed = [p for p, stop in enumerate(compaction.events) if stop.replayed]
    assert len(replayed) == len(events)
    for position, event in zip(replayed[:3], events[:3], strict=True):
        compaction.show_event(position)
        await pilot.pause()
        cost = costs.get(event["recorded_index"])
        if cost is not None:  # the compaction's cost, as ``ctxscope compactions`` prints it
            label = compaction_cost_label(CompactionCost.model_validate(cost))
            assert f"cost: {label}" in _flat(str(compaction.query_one("#forgotten-body").render()))
        tokens = str(compaction.query_one("#cs-tokens").render())
        split = _flat(str(compaction.query_one("#cs-split").render()))
        if event["tokens_before"] is not None and event["tokens_after"] is not None:
            assert f"before {event['tokens_before']:>9,}" in tokens
            assert f"after  {event['tokens_after']:>9,}" in tokens
        head = len(event["head_indices"])
        assert f"head {head:,} messages {index_runs(event['head_indices'])}" in split
        if event["tail_indices"]:
            assert f"{len(event['tail_indices']):,} messages kept" in split
        mode = str(compaction.query_one("#cs-mode").render())
        if event["call_index"] is not None:
            assert f"call {event['call_index']}" in mode
    compaction.action_back()
    await settle(pilot)


async def _check_overflow(
    pilot: Pilot[None], screen: SessionScreen, analyze: dict[str, Any]
) -> None:
    state = screen.state
    assert state is not None
    view = OverflowScreen(state.session, state.result)
    pilot.app.push_screen(view)
    await settle(pilot)
    d = view.diagnosis
    assert d is not None
    expected = analyze["diagnosis"]
    for key in ("call_index", "tokens", "window", "threshold", "last_check_tokens", "verdict"):
        assert getattr(d, key) == expected[key], key
    if d.call_index is not None and d.tokens is not None:
        headline = str(view.query_one("#ov-headline").render())
        assert f"Call {d.call_index} " in headline and f"{d.tokens:,}" in headline
    view.action_close()
    await settle(pilot)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(p.parents[1])) for p in FILES])
async def test_the_tui_shows_the_clis_figures(path: Path) -> None:
    replay = _cli("replay", path)
    analyze = _cli("analyze", path)
    breakdown = _breakdown_title(path)
    app = CtxscopeApp(str(path), discover=lambda: [], live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SessionScreen), path
        state = screen.state
        assert state is not None and state.result is not None
        assert state.result.policy.name == replay["policy"]["name"]
        _check_header_and_status(screen, replay)
        _check_cost(screen, analyze, breakdown)
        _check_list(screen, replay, analyze)
        await _check_calls(pilot, screen, replay)
        await _check_compactions(pilot, screen, replay, analyze)
        await _check_overflow(pilot, screen, analyze)
