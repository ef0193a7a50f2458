"""bench/analyze_phases.py runs each command's steps and adds them up (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "analyze_phases.py"
SESSION = ROOT / "sample_sessions" / "claude-code" / "overflow.jsonl"
FIGURE = re.compile(r"(\w+) (\d+\.\d{3}) \(\d+\.\d×\)")


@pytest.mark.parametrize(
    ("command", "steps"),
    [
        ("analyze", ["imports", "load", "cost", "replay", "report", "json", "rest"]),
        ("breakdown", ["imports", "load", "breakdown", "cost", "json", "rest"]),
    ],
)
def test_each_step_is_measured_and_the_sum_is_theirs(command: str, steps: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--command", command, str(SESSION)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert f"{command} --json {SESSION.name}" in done.stdout
    figures = {name: float(value) for name, value in FIGURE.findall(done.stdout)}
    assert list(figures) == steps
    assert all(value >= 0 for value in figures.values())
    total = re.search(r"sum (\d+\.\d{3}) s", done.stdout)
    assert total is not None
    assert abs(float(total.group(1)) - sum(figures.values())) <= 0.004  # (each rounded to 1 ms)
    assert "bound 5×" in done.stdout  # (given files: the small shape's bound, 5 × for both)
