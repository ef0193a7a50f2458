"""Pydantic's plugins are none of ctxscope's business: the one-shot commands and the TUI tell
pydantic to look for none, which spares each process the plugin lookup (it imports
``importlib.metadata`` and reads every installed package's entry points when the first model's
validator is built: in the TUI, inside the first replay)."""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any

PLUGIN_LOADER = "pydantic.plugin._loader"
"""Pydantic's module that looks for plugins when a model's validator is first built: it imports
``importlib.metadata`` (email, zipfile, csv, socket …), 2.6 % of a 2.4 MB session's analyze."""


def no_pydantic_plugins() -> None:
    """Tell pydantic to load no plugin (``PYDANTIC_DISABLE_PLUGINS=1``, its documented setting,
    unless the environment sets it already) and, when it loads none, stand in for its plugin
    loader: a module whose ``get_plugins`` returns none and which imports the real loader for
    anything else asked of it."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "1")
    if os.environ["PYDANTIC_DISABLE_PLUGINS"] not in ("__all__", "1", "true"):
        return
    if PLUGIN_LOADER in sys.modules:
        return
    stand_in = types.ModuleType(PLUGIN_LOADER)

    def get_plugins() -> tuple[()]:
        return ()

    def real(name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module
            raise AttributeError(name)
        del sys.modules[PLUGIN_LOADER]
        return getattr(importlib.import_module(PLUGIN_LOADER), name)

    stand_in.get_plugins = get_plugins  # type: ignore[attr-defined]
    stand_in.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[PLUGIN_LOADER] = stand_in
