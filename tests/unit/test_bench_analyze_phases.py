"""bench/analyze_phases.py times each step of the command's own process, and its figures add up
to that process's CPU; bench/_phase_clock.py runs the command unchanged (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "analyze_phases.py"
CLOCK = ROOT / "bench" / "_phase_clock.py"
SESSION = ROOT / "sample_sessions" / "claude-code" / "overflow.jsonl"
FIGURE = re.compile(r"(\w+) (\d+\.\d{3}) \(\d+\.\d×\)")
FIRST = ["start", "imports", "args", "load"]


@pytest.mark.parametrize(
    ("command", "steps"),
    [
        ("analyze", [*FIRST, "cost", "replay", "report", "json", "exit"]),
        ("breakdown", [*FIRST, "breakdown", "cost", "json", "exit"]),
    ],
)
def test_each_step_is_measured_and_the_sum_is_theirs(command: str, steps: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "2", "--command", command, str(SESSION)],
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
    assert abs(float(total.group(1)) - sum(figures.values())) <= 0.006  # (each rounded to 1 ms)
    assert "the run of least CPU of 2; the others " in done.stdout
    assert "bound 5×" in done.stdout  # (given files: the small shape's bound, 5 × for both)


@pytest.mark.parametrize("command", ["analyze", "breakdown"])
def test_the_clocked_command_writes_what_the_command_does(command: str, tmp_path: Path) -> None:
    """The clock changes nothing the command prints or returns; its figures are one JSON line
    on standard error, each step once, in the command's order, before the exit step."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from _phase_clock import steps
    finally:
        sys.path.remove(str(ROOT / "bench"))
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    plain = subprocess.run(
        [sys.executable, "-m", "tui.cli.main", command, "--json", str(SESSION)],
        capture_output=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    clocked = subprocess.run(
        [sys.executable, str(CLOCK), command, "--json", str(SESSION)],
        capture_output=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert clocked.returncode == plain.returncode == 0
    assert clocked.stdout == plain.stdout
    assert plain.stderr == b""
    figures = orjson.loads(clocked.stderr)
    assert list(figures) == list(steps(command)[:-1])
    assert all(value >= 0 for value in figures.values())


def test_an_unclocked_command_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(CLOCK), "replay", "--json", str(SESSION)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert "usage: _phase_clock.py {analyze|breakdown}" in done.stderr


def test_a_profile_part_s_count_is_its_summary_line(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from analyze_phases import _summary
    finally:
        sys.path.remove(str(ROOT / "bench"))
    part = tmp_path / "cg.out.3"
    part.write_text("# callgrind format\nevents: Ir\nsummary: 630673060\ntotals: 630673060\n")
    assert _summary(part) == 630_673_060
    (tmp_path / "empty").write_text("events: Ir\n")
    with pytest.raises(RuntimeError):
        _summary(tmp_path / "empty")
