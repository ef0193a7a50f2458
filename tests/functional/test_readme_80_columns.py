"""Every command the README lists that prints a table fits 80 columns with no number cut.

The README's "Command line" table is read here: a command it lists is either run below at
``COLUMNS=80`` on the samples (each way the README shows it) or named as one that prints no table,
so a command added to the README without an 80-column run fails. ``breakdown``, ``compactions``
and ``fleet`` were not run at 80 columns by any test before.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.functional.test_cli_80_columns import COMPACTED, PI, SAMPLES
from tests.support.paths import REPO
from tui.cli.main import cli

README = REPO / "README.md"
OVERFLOW = SAMPLES / "claude-code" / "overflow.jsonl"

RUNS: dict[str, list[tuple[str, ...]]] = {
    "analyze": [("analyze", str(COMPACTED)), ("analyze", str(OVERFLOW), "--margin", "0.2")],
    "replay": [("replay", str(COMPACTED)), ("replay", str(PI), "--all-calls")],
    "compare": [("compare", str(COMPACTED)), ("compare", str(PI), "-p", "seed", "-p", "pi")],
    "breakdown": [("breakdown", str(COMPACTED)), ("breakdown", str(PI), "--call", "3")],
    "compactions": [("compactions", str(COMPACTED)), ("compactions", str(PI))],
    "fidelity": [("fidelity", str(SAMPLES)), ("fidelity", str(SAMPLES), "--learn")],
    "policy": [("policy", "list"), ("policy", "show", "claude-code")],
    "sessions": [("sessions",), ("sessions", "--limit", "5")],
    "fleet": [("fleet", str(SAMPLES), "--no-cache")],
}
"""Each table-printing command of the README, run as the README shows it."""

NO_TABLE = {
    "open": "the terminal UI (its screens have their own tests at 80x24)",
    "truncate": "a stdin → stdout filter: its output is the input, cut as asked",
    "convert": "writes JSONL",
    "mock-llm": "a server: it prints its address",
    "export": "writes Parquet tables, prints one line per table",
    "report": "writes an HTML page",
    "serve": "a server: it prints its address",
}


def _readme_commands() -> set[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    found = set()
    for row in re.findall(r"^\| `ctxscope ([^`]*)`", section, flags=re.M):
        word = row.split()[0] if row.split() else ""
        found.add("open" if not word or word.startswith("[") else word)
    return found


def test_every_readme_command_is_run_at_80_columns_or_prints_no_table() -> None:
    commands = _readme_commands()
    assert {"analyze", "breakdown", "fleet"} <= commands, commands  # (the table was read)
    assert commands <= set(RUNS) | set(NO_TABLE), sorted(commands - set(RUNS) - set(NO_TABLE))


@pytest.mark.skipif(not COMPACTED.exists(), reason="samples not generated")
@pytest.mark.parametrize(
    "args",
    [args for runs in RUNS.values() for args in runs],
    ids=lambda args: " ".join(Path(a).name if "/" in a else a for a in args),
)
def test_the_readme_command_fits_80_columns(
    args: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # (sessions and fleet: no machine's sessions)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"}, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.strip(), "nothing printed"
    assert_fits(result.stdout)


CUT_FIGURE = re.compile(r"(?<![\w/:.\-])\d[\d,.]*…")
"""A figure cut short (``400…``, ``12,3…``): digits standing alone, not the end of a word, a
date or a path of the session's own text that ``compactions`` quotes shortened in its middle
(``2026-03-14T09…``)."""


def assert_fits(text: str) -> None:
    """No line past 80 columns, no figure of ctxscope's cut (``400…``, ``12,3…``)."""
    for line in text.splitlines():
        assert len(line) <= 80, line
        assert not CUT_FIGURE.search(line), line
