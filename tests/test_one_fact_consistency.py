"""One fact, one number (issue 23 item 2): the same fact about a real session agrees across
``analyze --json``, ``fleet --json`` and ``export`` (Parquet read back).

Runs over every session file in ``../shared/samples`` (skipped when absent). Compared: the window,
the recorded compactions, the peak and its call, and the cost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tui.cli import cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
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


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name[:60])
def test_the_same_facts_agree(
    sample: Path, fleet_rows: dict[str, dict[str, Any]], exported: dict[str, dict[str, Any]]
) -> None:
    analysis = _json("analyze", str(sample))
    fleet = fleet_rows[sample.name]
    export = exported[sample.name]
    session, summary = analysis["session"], analysis["summary"]
    facts = {
        "window": (session["window"], fleet["window_tokens"], export["window_tokens"]),
        "recorded compactions": (
            session["recorded_compactions"],
            fleet["compactions"],
            export["compactions"],
        ),
        "peak": (summary["peak_recorded"], fleet["peak_tokens"], export["peak_tokens"]),
        "peak call": (
            summary["peak_call_index"],
            fleet["peak_call_index"],
            export["peak_call_index"],
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
    assert not differ, f"analyze / fleet / export disagree: {differ}"
