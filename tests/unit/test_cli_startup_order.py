"""A one-shot command reads the code click generates as it loads (its named tuples, regular
expressions …) from the cache folder too: the cache is in place before click is imported. Any
other start (the UI, ``--help``) does not read it.

Each case runs in a child process, as the console script starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

START = """
import sys
sys.argv = ["ctxscope", *sys.argv[1:]]
import tui.cli.main
cache = sys.modules.get("tui.cli.code_cache")
used = sorted(key[0] for key in cache._used) if cache is not None else []
print(cache is not None and cache._state["installed"], len(used))
"""


def _start(cache: Path, *args: str) -> list[str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    result = subprocess.run(
        [sys.executable, "-c", START, *args],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=Path(__file__).resolve().parents[2],
    )
    return result.stdout.split()


@pytest.mark.parametrize("command", ["analyze", "replay", "breakdown", "policy"])
def test_a_one_shot_command_compiles_click_through_the_cache(tmp_path: Path, command: str) -> None:
    installed, used = _start(tmp_path, command, "--json", "x.jsonl")
    assert installed == "True"
    assert int(used) > 0  # click's generated code went through it


@pytest.mark.parametrize("args", [(), ("--help",), ("session.jsonl",), ("mock-llm",)])
def test_other_starts_do_not_read_the_cache(tmp_path: Path, args: tuple[str, ...]) -> None:
    assert _start(tmp_path, *args) == ["False", "0"]
