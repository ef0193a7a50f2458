"""core is a library with no UI: importing it must load neither textual nor rich."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.processes import run_python

CORE_MODULES = [
    "core",
    "core.model.session",
    "core.model.tokens",
    "core.policy",
    "core.llm",
    "core.llm.protocol",
    "core.llm.factory",
    "core.llm.mock",
    "core.algorithms.truncate",
    "core.algorithms.prune",
    "core.algorithms.split",
    "core.llm.summary_templates",
    "core.algorithms.compact",
    "core.algorithms.overflow",
    "core.replay",
    "core.insights.diagnosis",
    "core.reports.analyze",
    "core.formats",
    "core.agents.windows",
    "core.formats.discovery",
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


ANALYZE_JSON = """
import contextlib, io, sys
from tui.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    cli.main(args=[{command!r}, "--json", {path!r}], standalone_mode=False)
assert out.getvalue().lstrip().startswith("{{")
unused = {{"textual", "rich", "openai", "asyncio", "concurrent", "multiprocessing", "sqlite3"}}
other_loaders = {{
    f"core.formats.{{name}}"
    for name in ("claude_code", "codex", "opencode", "gemini_cli", "qwen_code", "copilot",
                 "ctxscope_jsonl")
}}
bad = sorted(
    m for m in sys.modules
    if m.split(".")[0] in unused or m == "core.fleet.survey" or m in other_loaders
)
print(",".join(bad))
"""


def _second_run(code: str, cache: Path) -> str:
    """The output of ``code``'s second run with ``cache`` as its cache folder (the first writes
    the price memo and the start-up code cache, as a machine that has run ctxscope before)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    run_python(code, env=env)
    return run_python(code, env=env)


@pytest.mark.parametrize("command", ["analyze", "breakdown", "replay", "compare"])
def test_analyze_json_imports_no_rendering(tmp_path: Path, command: str) -> None:
    """``ctxscope analyze --json`` (and ``breakdown``, ``replay``, ``compare --json``) prints JSON:
    it starts without Textual, rich's rendering, the LLM client or asyncio (rich is imported only
    for a table, asyncio only for a compaction), nor the fleet's process pool (only for a session
    with sub-agents), nor SQLite (opencode's databases and the fleet's cache) nor the loaders of
    the other agents (the format is told by :mod:`core.formats.sniffers`). The price table (which
    imports asyncio) is read once per model: the second run prices from the memo in the cache
    folder. The sample is one whose replay compacts nowhere (the overflow sample's does: the
    agent's rule fires where the recording overflowed)."""
    sample = REPO / "sample_sessions" / "pi" / "branched.jsonl"
    out = _second_run(ANALYZE_JSON.format(command=command, path=str(sample)), tmp_path)
    if command in ("analyze", "breakdown"):  # (a replay or a comparison prices nothing)
        assert (tmp_path / "ctxscope" / "prices.json").is_file()
    assert out.strip() == "", f"{command} --json imported {out.strip()}"


COMPACTING_RUN = """
import contextlib, io, sys
from tui.cli.main import cli
from core.llm.mock import MockSummarizer
written = []
summarize = MockSummarizer.summarize
async def counted(self, *args, **kwargs):
    written.append(1)
    return await summarize(self, *args, **kwargs)
MockSummarizer.summarize = counted
with contextlib.redirect_stdout(io.StringIO()) as out:
    cli.main(args=[{command!r}, "--json", {path!r}], standalone_mode=False)
assert out.getvalue().lstrip().startswith("{{")
print(len(written), "asyncio" in sys.modules)
"""


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_a_replay_that_compacts_with_the_mock_imports_no_asyncio(
    tmp_path: Path, command: str
) -> None:
    """The offline mock awaits nothing a loop must complete: a replay steps its compactions by
    hand, with no event loop made and asyncio not imported (its import and a first loop were
    ~80 M instructions of a 10 MB session's analyze). The overflow sample's replay compacts
    with the mock (the agent's rule fires where the recording overflowed); the second run
    prices from the memo (the price table imports asyncio)."""
    sample = REPO / "sample_sessions" / "claude-code" / "overflow.jsonl"
    summaries, imported = _second_run(
        COMPACTING_RUN.format(command=command, path=str(sample)), tmp_path
    ).split()
    assert int(summaries) >= 1
    assert imported == "False"


CONSOLE_SCRIPT = """
import importlib, sys
module = importlib.import_module({module!r})
loaded = set(sys.modules)
for command in {commands!r}:
    importlib.import_module(module.COMMANDS[command][0])
every = set(sys.modules)
ui = ("textual", "rich.live", "tui.app", "tui.screens", "tui.widgets")
def bad(names):
    return ",".join(sorted(m for m in names if m.startswith(ui)))
print(bad(loaded) + ";" + bad(every))
"""


def test_the_console_script_loads_no_textual() -> None:
    """The ``ctxscope`` console script's module, and every command it imports when one runs,
    load neither Textual nor rich's live display nor the app: only ``ctxscope [PATH]`` (the UI)
    imports them, when it runs."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    module, _, function = pyproject["project"]["scripts"]["ctxscope"].partition(":")
    assert function == "main"
    from tui.cli.main import COMMANDS

    code = CONSOLE_SCRIPT.format(module=module, commands=sorted(COMMANDS))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    at_import, with_commands = result.stdout.strip().split(";")
    assert at_import == "", f"{module} imported {at_import}"
    assert with_commands == "", f"the commands imported {with_commands}"


def _imported_by_analyze(cache: Path, **env: str) -> set[str]:
    """The modules ``python -m tui analyze --json`` imports (its ``-X importtime`` lines), run
    as the console script runs it, after a first run has written the price memo."""
    sample = REPO / "sample_sessions" / "pi" / "branched.jsonl"
    command = [sys.executable, "-X", "importtime", "-m", "tui", "analyze", "--json", str(sample)]
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    environment.pop("PYDANTIC_DISABLE_PLUGINS", None)
    environment.update(env)
    for _run in range(2):
        result = subprocess.run(command, capture_output=True, text=True, env=environment)
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.lstrip().startswith("{")
    return {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }


def test_analyze_process_starts_lean(tmp_path: Path) -> None:
    """``ctxscope analyze --json`` as a process imports neither the UI, nor the fleet's rows, nor
    what pydantic's plugin lookup needs (``importlib.metadata``: a tenth of its start-up), nor
    logging (only a live LLM logs), nor difflib (only a misspelt command), nor zstandard (only a
    compressed session), nor the per-call breakdown (``breakdown --json``'s), nor the analysis
    cache (the fleet's)."""
    modules = _imported_by_analyze(tmp_path)
    assert "core.reports.analyze" in modules  # (the lines are there to read)
    unused = {"textual", "rich", "difflib", "logging", "zstandard"}
    bad = {m for m in modules if m.split(".")[0] in unused}
    bad |= {"importlib.metadata", "core.fleet.session_rows", "core.fleet.survey"} & modules
    bad |= {"core.insights.breakdown", "core.reports.breakdown", "core.analysis_cache"} & modules
    assert not bad, f"analyze --json imported {sorted(bad)}"


def test_pydantic_plugins_named_by_the_user_are_looked_for(tmp_path: Path) -> None:
    """A ``PYDANTIC_DISABLE_PLUGINS`` that disables some plugins only (by name) leaves pydantic's
    own plugin loader in place: the other plugins still load."""
    modules = _imported_by_analyze(tmp_path, PYDANTIC_DISABLE_PLUGINS="some-plugin")
    assert "importlib.metadata" in modules
