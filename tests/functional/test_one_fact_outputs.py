"""One fact, one number, on the outputs of the sample sessions: each command names the
compaction figure it shows, the report and the export state the tokens after for every agent,
replay's recorded column shows a refused call's recorded count, breakdown says why a total is
above the window."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.model.session import Provenance
from core.replay.results import CallPoint
from tests.support.paths import REPO
from tui.cli.commands.breakdown import over_window_note
from tui.cli.main import cli
from tui.cli.render import _recorded_cell

SAMPLES = REPO / "sample_sessions"
WIDE = {"COLUMNS": "200"}


def _text(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env=WIDE)
    assert result.exit_code == 0, result.output
    return result.stdout


def _figures(path: Path) -> list[dict[str, object]]:
    reports = json.loads(_text("compactions", str(path), "--json"))
    return [r["figures"] for r in reports if r["figures"] is not None]


@pytest.mark.parametrize("command", ["analyze", "replay", "fidelity", "compactions"])
def test_every_command_names_each_compaction_figure_with_its_number(command: str) -> None:
    path = SAMPLES / "pi" / "session.jsonl"
    (figures,) = _figures(path)
    text = " ".join(_text(command, str(path)).replace("\u00a0", " ").split())
    assert f"at message {figures['at_message']}" in text
    for name, key in (
        ("agent's count", "agent_count"),
        ("check", "check_tokens"),
        ("last prompt", "last_prompt"),
        ("tokens after", "tokens_after"),
    ):
        value = figures[key]
        assert isinstance(value, int)
        assert f"{name} {value:,}" in text, (command, name)


@pytest.mark.parametrize(
    "path", ["claude-code/compacted.jsonl", "opencode/export.json", "pi/session.jsonl"]
)
def test_the_report_and_the_export_state_the_tokens_after_for_every_agent(
    path: str, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    session = SAMPLES / path
    expected = [f["tokens_after"] for f in _figures(session)]
    assert expected and None not in expected
    page = tmp_path / "report.html"
    _text("report", str(session), "-o", str(page), "--force")
    html = page.read_text(encoding="utf-8")
    table = html[
        html.index(">tokens after</th>") : html.index("</table>", html.index(">tokens after</th>"))
    ]
    cells = [
        [unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table)
    ]
    assert [int(c[8].split(" (")[0].replace(",", "")) for c in cells] == expected
    folder = tmp_path / "export"
    _text("export", "--to", str(folder), str(session))
    rows = pq.read_table(folder / "compactions.parquet").to_pylist()
    assert [r["tokens_after"] for r in rows] == expected
    assert all(r["tokens_after_source"] for r in rows)


def _point(recorded: int | None, baseline: int, provenance: Provenance) -> CallPoint:
    return CallPoint(
        call_index=0,
        message_index=1,
        turn_index=0,
        recorded_tokens=recorded,
        recorded_kind=None,
        simulated_tokens=baseline,
        simulated_provenance=provenance,
        window=400_000,
        threshold=None,
        overflow_recorded=True,
        overflow_simulated=False,
        event_ids=[],
        baseline_tokens=baseline,
        baseline_provenance=provenance,
    )


def test_replays_recorded_column_shows_a_recorded_figure_wherever_there_is_one() -> None:
    assert _recorded_cell(_point(371_312, 371_312, Provenance.RECORDED)) == "371,312"
    # a refused call: no usage, but the file holds its count (the provider's error)
    assert _recorded_cell(_point(None, 371_606, Provenance.RECORDED)) == "371,606"
    assert _recorded_cell(_point(None, 51_403, Provenance.ESTIMATED)) == "-"


def test_a_breakdown_above_the_window_says_why() -> None:
    assert over_window_note([(0, 100, "recorded")], 200) is None
    assert over_window_note([(0, 300, "recorded")], None) is None
    note = over_window_note([(3, 434_000, "estimated"), (4, 390_000, "recorded")], 400_000)
    assert note is not None and "call 3, 434,000" in note and "an estimate" in note
    text = _text("breakdown", str(SAMPLES / "claude-code" / "overflow.jsonl"))
    said = " ".join(text.split())
    # call 84 recorded 209,658 and call 85 is estimated above it: both marked, the largest named
    assert (
        "2 calls above the 200,000-token window (the largest: call 85, 214,497): an estimate"
        in said
    )
    assert "210k!" in said and "214k~!" in said
