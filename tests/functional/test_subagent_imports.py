"""``ctxscope analyze --json`` of a session with sub-agents replays each one (the fleet's
:func:`core.fleet.survey.subagent_summaries`), without what a fleet run needs beyond that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def test_analyze_of_a_session_with_subagents_starts_without_the_fleets_machinery(
    tmp_path: Path,
) -> None:
    """Neither ``importlib.metadata`` (ctxscope's version, a key of the fleet's cache), nor the
    process pool, nor session discovery: 8 % of the instructions of ``analyze --json`` of a
    real 2.8 MB session with two sub-agents."""
    sample = REPO / "sample_sessions" / "claude-code" / "delegating.jsonl"
    assert (sample.parent / "delegating" / "subagents").is_dir()
    command = [sys.executable, "-X", "importtime", "-m", "tui", "analyze", "--json", str(sample)]
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _run in range(2):  # (the second after the price memo is written)
        result = subprocess.run(command, capture_output=True, text=True, env=environment)
        assert result.returncode == 0, result.stderr[-2000:]
    assert '"subagents": [\n    {' in result.stdout  # (its sub-agent was replayed)
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "core.fleet.survey" in modules
    fleet_only = {"importlib.metadata", "multiprocessing", "core.fleet.session_pool"}
    fleet_only |= {"core.formats.discovery", "sqlite3"}
    assert not fleet_only & modules, sorted(fleet_only & modules)
