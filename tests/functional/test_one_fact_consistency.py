"""One fact, one number: the same fact about a real session agrees across
``analyze --json``, ``fleet --json``, ``export`` (Parquet read back) and ``report`` (the HTML's
summary table parsed).

Runs over every session file in ``../shared/samples`` (skipped when absent). Compared: the window,
the recorded compactions, the peak and its call, and the cost.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.paths import REPO
from tui.cli.main import cli

SHARED = REPO.parent / "shared" / "samples"
SAMPLES = (
    sorted(
        p
        for pattern in ("*/*.jsonl", "*/*.json")
        for p in SHARED.glob(pattern)
        if p.stat().st_size > 20_000
    )
    if SHARED.is_dir()
    else []
)

pytestmark = pytest.mark.skipif(not SAMPLES, reason="../shared/samples is absent")


def _json(*args: str) -> Any:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def fleet_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    report = _json("fleet", "--no-cache", "-j", "2", *map(str, SAMPLES))
    return {Path(row["path"]).name: row for row in report["rows"]}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("export")
    result = CliRunner().invoke(
        cli, ["export", "--to", str(folder), "-j", "2", *map(str, SAMPLES)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    rows = pq.read_table(folder / "sessions.parquet").to_pylist()
    return {Path(row["path"]).name: row for row in rows}


def _report_figures(sample: Path, folder: Path) -> dict[str, str]:
    """The HTML report's summary table: figure -> value."""
    page = folder / "report.html"
    result = CliRunner().invoke(
        cli, ["report", str(sample), "-o", str(page), "--force"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    table = html[html.index("<th>figure</th>") :]
    table = table[: table.index("</table>")]
    cells = re.findall(r"<tr><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td></tr>", table)
    return {unescape(name): unescape(value) for name, value in cells}


def _count(text: str) -> int | None:
    digits = text.replace(",", "")
    return int(digits) if digits.isdigit() else None


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name[:60])
def test_the_same_facts_agree(
    sample: Path,
    fleet_rows: dict[str, dict[str, Any]],
    exported: dict[str, dict[str, Any]],
    tmp_path: Path,
) -> None:
    analysis = _json("analyze", str(sample))
    page = _report_figures(sample, tmp_path)
    page_peak = next(
        v
        for k, v in page.items()
        if k.startswith("peak context, ") and k != "peak context, simulated"
    )
    fleet = fleet_rows[sample.name]
    export = exported[sample.name]
    session = analysis["session"]
    facts = {
        "window": (
            session["window"],
            fleet["window_tokens"],
            export["window_tokens"],
            _count(page["window"]),
        ),
        "recorded compactions": (
            session["recorded_compactions"],
            fleet["compactions"],
            export["compactions"],
            _count(page["recorded compactions"]),
        ),
        "peak": (
            session["peak_tokens"],
            fleet["peak_tokens"],
            export["peak_tokens"],
            _count(page_peak),
        ),
        "peak call": (
            session["peak_call_index"],
            fleet["peak_call_index"],
            export["peak_call_index"],
            _count(page["peak call"]),
        ),
        "cost": (
            None
            if analysis["cost"]["total_usd"] is None
            else round(analysis["cost"]["total_usd"], 4),
            fleet["cost_usd"],
            export["cost_usd"],
        ),
    }
    differ = {name: values for name, values in facts.items() if len(set(values)) > 1}
    assert not differ, f"analyze / fleet / export / report disagree: {differ}"
