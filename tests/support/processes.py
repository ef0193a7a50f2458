"""Code run by this interpreter in a fresh process: what a test checks of a process's start
(the modules it imports, what it reads from its cache folder) cannot be seen in pytest's own."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_python(code: str, *, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> str:
    """The standard output of ``python -c code`` (``env``: the process's whole environment,
    this one's by default); a run that fails raises :class:`subprocess.CalledProcessError`
    with its output."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=cwd
    )
    return done.stdout
