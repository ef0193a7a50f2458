"""bench/analyze_phases.py runs the command's steps and adds them up (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "analyze_phases.py"
SESSION = ROOT / "sample_sessions" / "claude-code" / "overflow.jsonl"
FIGURE = re.compile(r"(imports|load|replay|report|json|rest) (\d+\.\d{3}) \(\d+\.\d×\)")


def test_each_step_is_measured_and_the_sum_is_theirs() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", str(SESSION)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    figures = dict((name, float(value)) for name, value in FIGURE.findall(done.stdout))
    assert list(figures) == ["imports", "load", "replay", "report", "json", "rest"]
    assert all(value >= 0 for value in figures.values())
    total = float(re.search(r"sum (\d+\.\d{3}) s", done.stdout).group(1))  # type: ignore[union-attr]
    assert abs(total - sum(figures.values())) <= 0.004  # (each figure rounded to 1 ms)
    assert "bound 5×" in done.stdout  # (given files are measured against the small shape's bound)
