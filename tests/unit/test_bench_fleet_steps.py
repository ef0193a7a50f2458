"""bench/fleet.py times each step of a fleet row per agent and adds them up (no timing is asserted)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "fleet.py"
SAMPLES = ROOT / "sample_sessions"
SESSIONS = {
    "claude-code": [
        SAMPLES / "claude-code" / "overflow.jsonl",
        SAMPLES / "claude-code" / "long.jsonl",
    ],
    "codex": [
        SAMPLES / "codex" / "rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl"
    ],
    "pi": [SAMPLES / "pi" / "session.jsonl"],
    "opencode": [SAMPLES / "opencode" / "export.json"],
}
STEPS = ["floor", "load", "replay", "cost", "figures"]


def _fleet_folder(tmp_path: Path) -> Path:
    """The bench's layout (one folder per agent, ``session-NNN`` files) of the repository's own
    sample sessions."""
    folder = tmp_path / "sessions"
    index = 0
    for agent, paths in SESSIONS.items():
        (folder / agent).mkdir(parents=True)
        for path in paths:
            shutil.copyfile(path, folder / agent / f"session-{index:03d}{path.suffix}")
            index += 1
    return folder


def test_each_step_of_each_agent_is_measured(tmp_path: Path) -> None:
    folder = _fleet_folder(tmp_path)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--steps-of", str(folder)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    totals = json.loads(done.stdout)
    assert list(totals) == list(SESSIONS)
    for agent, paths in SESSIONS.items():
        figures = totals[agent]
        assert figures["files"] == len(paths)
        assert figures["megabytes"] == pytest.approx(
            sum(path.stat().st_size for path in paths) / 1e6
        )
        assert all(figures[step] >= 0 for step in STEPS)
        assert figures["load"] > 0  # (a load that was not timed would be 0.0)


def test_the_report_sums_the_steps_against_the_bound(tmp_path: Path) -> None:
    folder = _fleet_folder(tmp_path)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--keep", str(folder), "--steps-only"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    rows = {
        match[0]: [float(value) for value in match[1:]]
        for match in re.findall(
            r"^(\S+) +(\d+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)",
            done.stdout,
            re.MULTILINE,
        )
    }
    assert list(rows) == [*SESSIONS, "all"]
    files = [row[0] for row in rows.values()]
    assert files[-1] == sum(files[:-1]) == sum(len(paths) for paths in SESSIONS.values())
    for row in rows.values():
        *steps, total = row[3:]  # (after files, megabytes and the floor: the steps, their sum)
        assert abs(total - sum(steps)) <= 0.03  # (each rounded to 10 ms)
    assert re.search(
        r"the bound \(100 MB/s\) allows [\d.]+ s for \d+ MB; the steps take", done.stdout
    )
