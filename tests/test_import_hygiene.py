"""core is a library with no UI: importing it must load neither textual nor rich."""

import subprocess
import sys

import pytest

CORE_MODULES = [
    "core",
    "core.models",
    "core.tokens",
    "core.policy",
    "core.llm",
    "core.llm.protocol",
    "core.llm.factory",
    "core.llm.mock",
    "core.truncate",
    "core.prune",
    "core.split",
    "core.templates",
    "core.compaction",
    "core.overflow",
    "core.replay",
    "core.diagnosis",
    "core.report",
    "core.formats",
    "core.windows",
    "core.discovery",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_loads_no_ui(module: str) -> None:
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich', 'openai'}); "
        "print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "", f"{module} imported {result.stdout.strip()}"
