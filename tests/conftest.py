"""Gives every test a cache folder and a config folder of its own, so nothing reads or writes
the user's analysis cache and no user keymap changes what a test presses or a snapshot draws.
(The helpers the tests share are the package tests/support.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ctxscope", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ctxscope")
"""Hypothesis's time limits off for every property test: the suite must pass with both cores
busy, and a slow draw or example on a loaded machine says nothing about the code under test."""


@pytest.fixture(autouse=True)
def _private_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$XDG_CACHE_HOME`` in the test's own folder (the picker and ``fleet`` cache there)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(autouse=True)
def _private_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$XDG_CONFIG_HOME`` in the test's own folder: the app reads its ``[keymap]`` there, and a
    developer's own ``~/.config/ctxscope/config.toml`` must not remap the keys the tests press."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
