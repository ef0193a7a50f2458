"""Every command at 80 columns: no number is cut, nothing runs past the edge.

Seen before: ``compare`` printed ``226,4…`` and ``recorded compactions manu…``; the 20-character
"why" column made every event of ``analyze`` / ``replay`` ten lines tall; ``replay`` printed no
per-call timeline although the README promised one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.model.write_numbers import format_tokens
from tests.support.paths import REPO
from tui.cli.main import cli

ROOT = REPO
SAMPLES = ROOT / "sample_sessions"
COMPACTED = SAMPLES / "claude-code" / "compacted.jsonl"
PI = SAMPLES / "pi" / "session.jsonl"
COLUMNS = {"COLUMNS": "80"}

needs_samples = pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")

CUT_NUMBER = re.compile(r"\d[\d,]*…")
"""A number that rich cut with an ellipsis."""


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env=COLUMNS, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def json_of(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def assert_fits(text: str) -> None:
    for line in text.splitlines():
        assert len(line) <= 80, line
    assert not CUT_NUMBER.search(text), CUT_NUMBER.search(text)


@needs_samples
@pytest.mark.parametrize(
    "args",
    [
        ("analyze", str(COMPACTED)),
        ("analyze", str(SAMPLES / "claude-code" / "overflow.jsonl")),
        ("replay", str(PI)),
        ("replay", str(COMPACTED), "--all-calls"),
        ("compare", str(COMPACTED)),
        ("compare", str(COMPACTED), *("-p", "seed") * 4, "-p", "inferred"),
        ("fidelity", str(SAMPLES)),
        ("policy", "list"),
        ("policy", "show", "claude-code"),
    ],
    ids=lambda args: " ".join(Path(a).name if "/" in a else a for a in args),
)
def test_every_command_fits_80_columns(args: tuple[str, ...]) -> None:
    assert_fits(run(*args))


def test_sessions_fits_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert_fits(run("sessions"))


@needs_samples
def test_compare_shows_every_figure_whole() -> None:
    text = run("compare", str(COMPACTED))
    data = json_of("compare", str(COMPACTED))
    rows = data["rows"]
    assert isinstance(rows, list)
    for row in rows:
        summary = row["summary"]
        assert row["policy"] in text
        for key in ("peak_simulated", "tokens_summarised", "final_tokens"):
            assert format_tokens(summary[key]) in text, (row["policy"], key)
        assert format_tokens(row["threshold"]) in text


@needs_samples
def test_replay_prints_its_timeline_call_by_call() -> None:
    text = run("replay", str(PI))
    data = json_of("replay", str(PI))
    points = data["points"]
    assert isinstance(points, list)
    assert f"timeline ({len(points):,} calls)" in text
    compacted = next(p for p in points if p["event_ids"] and p["check_fired"])
    row = next(
        line
        for line in text.splitlines()
        if line.split()[:2]
        == [
            str(compacted["call_index"]),
            str(compacted["message_index"]),
        ]
    )
    assert format_tokens(compacted["check_tokens"]) in row and "compact" in row
    every = run("replay", str(PI), "--all-calls")
    assert all(
        any(
            line.split()[:2] == [str(p["call_index"]), str(p["message_index"])]
            for line in every.splitlines()
        )
        for p in points
    )


@needs_samples
def test_an_event_is_one_line_of_figures_and_its_reason_in_full() -> None:
    text = run("replay", str(PI))
    events = json_of("replay", str(PI))["events"]
    assert isinstance(events, list)
    compact = next(e for e in events if e["kind"] == "compact")
    before, after, at = (
        compact["tokens_before"],
        compact["tokens_after"],
        compact["at_message_index"],
    )
    if compact["recorded_index"] is not None:  # a recorded one: its named figures
        reports = json_of("compactions", str(PI))
        assert isinstance(reports, list)
        figures = next(
            r["figures"] for r in reports if r["why"]["recorded_index"] == compact["recorded_index"]
        )
        before, after, at = figures["check_tokens"], figures["tokens_after"], figures["at_message"]
        head = f"call {compact['call_index']} · at message {at}"
    else:
        head = f"call {compact['call_index']} · message {at}"
    line = next(line for line in text.splitlines() if head in line)
    assert f"{format_tokens(before)} → {format_tokens(after)}" in line
    words = " ".join(text.split())
    assert compact["reason"] in words
