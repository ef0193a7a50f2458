"""A command imports what it runs: ``breakdown --json`` replays nothing and so loads no replay
engine, though it reads the recorded walk from a submodule of :mod:`core.replay` (whose
``__init__`` runs first); ``analyze --json`` of a session with recorded counts reads no
tokenizer file (``importlib.resources``, with tempfile and shutil, only when it does)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.claude_jsonl import write_claude_session
from tests.support.processes import run_python

ENGINE = (
    "core.replay.engine",
    "core.replay.simulate",
    "core.replay.checks",
    "core.replay.state",
    "core.replay.timeline",
    "core.llm.protocol",
)


def _loaded(command: str, names: tuple[str, ...], cache: Path) -> set[str]:
    """Which of ``names`` ``ctxscope COMMAND --json`` imports (its ``-X importtime`` lines), run
    as the console script runs it on a Claude Code session whose every call records its counts
    (its second run: the first writes the price memo)."""
    session = cache / "session.jsonl"
    write_claude_session(session, 12)
    line = [sys.executable, "-X", "importtime", "-m", "tui", command, "--json", str(session)]
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    for _run in range(2):
        result = subprocess.run(line, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.lstrip().startswith("{")
    modules = {
        row.rsplit("|", 1)[1].strip()
        for row in result.stderr.splitlines()
        if row.startswith("import time:")
    }
    assert "core.model.session" in modules  # (the lines are there to read)
    return set(names) & modules


def test_breakdown_loads_no_replay_engine(tmp_path: Path) -> None:
    assert _loaded("breakdown", ENGINE, tmp_path) == set()


@pytest.mark.parametrize("command", ["analyze", "breakdown"])
def test_a_session_with_recorded_counts_reads_no_tokenizer_file(
    tmp_path: Path, command: str
) -> None:
    assert _loaded(command, ("importlib.resources", "tempfile"), tmp_path) == set()


def test_the_replay_engine_is_there_when_a_command_replays(tmp_path: Path) -> None:
    """(The test above would pass for a run that failed to import it: this one does not. A
    module :func:`importlib.import_module` loads has no ``-X importtime`` line: those the engine
    imports have theirs.)"""
    assert _loaded("analyze", ENGINE[1:3], tmp_path) == set(ENGINE[1:3])


def test_the_package_names_are_the_modules_own() -> None:
    """Every name :mod:`core.replay` exports, asked for first in a fresh process (the package
    loads its module then), is the object its module defines; ``compare`` stays the function
    after its submodule of the same name has loaded."""
    code = """
import importlib, sys
import core.replay as package
wrong = []
for name in package.__all__:
    value = getattr(package, name)
    module = importlib.import_module(package._ON_FIRST_USE.get(name, "core.replay.compare"))
    if getattr(module, name) is not value:
        wrong.append(name)
from core.replay import compare
if not callable(compare) or compare.__module__ != "core.replay.compare":
    wrong.append("compare")
print(",".join(wrong))
"""
    assert run_python(code).strip() == ""
