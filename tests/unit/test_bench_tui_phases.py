"""bench/tui_app.py --phases splits the open's CPU by thread and step (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from core.formats import load_session

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "tui_app.py"
SESSION = ROOT / "sample_sessions" / "claude-code" / "long.jsonl"

sys.path.insert(0, str(ROOT / "bench"))
from _tui_phases import PHASE_ROWS, phase_rows  # noqa: E402


def _child_open(*flags: str) -> dict[str, float]:
    messages = len(load_session(SESSION).messages)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--child-open", str(SESSION), str(messages), *flags],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    figures: dict[str, float] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return figures


def test_the_open_is_split_by_thread_and_step() -> None:
    figures = _child_open("--phases")
    keys = {key for _label, key, _kind in PHASE_ROWS}
    assert keys <= set(figures)
    # the whole file was read and replayed in their threads, and counted there
    assert figures["phase_load_cpu"] > 0
    assert figures["phase_replay_cpu"] > 0
    assert figures["phase_head_cpu"] == 0  # (a small file: read in one go, no first part)
    # the same file read once more after the app closed, alone in the process (its own figure)
    assert figures["phase_alone_cpu"] > 0
    assert figures["phase_alone_wall"] >= figures["phase_alone_cpu"] * 0.5
    assert all(figures[key] >= 0 for key in keys)
    assert len(phase_rows(figures)) == len(PHASE_ROWS)
    # the benchmark's own figures are there beside them
    assert {"load_in_app", "replayed_frame", "peak_rss"} <= set(figures)


def test_rows_name_each_figure_in_its_unit() -> None:
    figures = {"phase_load_cpu": 1.23456, "phase_load_faults": 34567.0}
    assert phase_rows(figures) == [
        ("loader: whole file read (load_session)", "1.235 s CPU"),
        ("loader: page faults of that read", "34,567"),
    ]
    counted = phase_rows({"phase_collections": 9.0, "phase_collect_cpu": 0.0258})
    assert counted == [("collector passes (their CPU)", "9 (25.8 ms)")]
    assert phase_rows({"load_in_app": 1.0}) == []
    assert phase_rows({"phase_alone_wall": 1.5, "phase_load_waits": 481.0}) == [
        ("loader: waits during that read (switches)", "481"),
        ("the same read alone in this process: wall", "1.500 s"),
    ]
