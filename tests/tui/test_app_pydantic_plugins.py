"""The TUI looks for no pydantic plugin (as the one-shot commands do): the first replay builds
the first validators of the process, and the plugin lookup would import ``importlib.metadata``
and read every installed package's entry points inside it."""

from __future__ import annotations

import os

from tests.support.paths import REPO
from tests.support.processes import run_python

CODE = """
import sys
from tui.app import CtxscopeApp
CtxscopeApp(None, discover=lambda: [], live=False)
from core.replay.results import ThresholdSpan  # (a model of the replay's, built on first use)
from pydantic import BaseModel
class Probe(BaseModel):
    x: int
Probe(x=1)
print("importlib.metadata" in sys.modules, __import__("os").environ.get("PYDANTIC_DISABLE_PLUGINS"))
"""


def _run(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    environment.update(env)
    return run_python(CODE, env=environment, cwd=REPO).strip()


def test_the_app_builds_validators_without_the_plugin_lookup() -> None:
    assert _run() == "False 1"


def test_plugins_the_user_names_are_still_looked_for() -> None:
    """``PYDANTIC_DISABLE_PLUGINS`` naming some plugins only is the user's: pydantic's own
    loader looks for the others."""
    assert _run(PYDANTIC_DISABLE_PLUGINS="some-plugin") == "True some-plugin"
