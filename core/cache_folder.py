"""Where ctxscope keeps what it caches between runs, and whether it may write there.

Imports nothing of ctxscope's nor any third-party module, so that a command can find the folder
before pydantic is imported (:mod:`tui.cli.code_cache`); :mod:`core.analysis_cache` and the price
memo (:mod:`core.insights.prices`) use the same folder.
"""

from __future__ import annotations

import os
from pathlib import Path

READ_ONLY_ENV = "CTXSCOPE_READ_ONLY"
"""The environment variable that, set to ``1``, keeps every cache of this process and of the
processes it starts from being written."""


def read_only() -> bool:
    """Whether the caches are only read here (``CTXSCOPE_READ_ONLY=1``)."""
    return os.environ.get(READ_ONLY_ENV) == "1"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ctxscope`` (default ``~/.cache/ctxscope``)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "ctxscope"
