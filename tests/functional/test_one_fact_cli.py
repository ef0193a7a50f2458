"""A misspelt command is named, an error is printed once, the newest
sessions are the newest by their own time."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats.discovery import discover_sessions
from tests.support.paths import REPO
from tests.unit.test_discovery import ENV
from tui.cli.main import cli


def test_a_misspelt_command_is_named_with_the_nearest_one(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text("{}\n")
    result = CliRunner().invoke(cli, ["analyse", str(session)])
    assert result.exit_code == 2
    assert "No such command 'analyse'" in result.output
    assert "Did you mean 'analyze'?" in result.output
    assert "unexpected extra argument" not in result.output


def test_an_existing_path_that_looks_like_a_command_is_still_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.cli.main as cli_module

    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleets").write_text("")
    assert cli_module._nearest_command("fleets") is None
    assert cli_module._nearest_command("flet") == "fleet"
    assert cli_module._nearest_command("xyzzy") is None


def test_fleet_on_a_missing_path_prints_its_error_once(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    result = CliRunner().invoke(cli, ["fleet", "--no-cache", str(missing)])
    assert result.exit_code == 2
    assert result.output.count("no such file or directory") == 1, result.output


def _claude(path: Path, when: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "user",
        "uuid": "u1",
        "cwd": "/w",
        "timestamp": when,
        "message": {"role": "user", "content": "go"},
    }
    path.write_text(json.dumps(record) + "\n")
    os.utime(path, (mtime, mtime))


def test_limit_keeps_the_newest_by_session_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied files: the newest file holds the oldest session; --limit 1 still finds the
    newest session."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    later = datetime(2026, 1, 10, tzinfo=UTC).timestamp()
    folder = tmp_path / ".claude" / "projects" / "-w"
    _claude(folder / "a.jsonl", "2026-01-03T10:00:00Z", later + 300)
    _claude(folder / "b.jsonl", "2026-01-05T10:00:00Z", later + 200)
    _claude(folder / "c.jsonl", "2026-01-04T10:00:00Z", later + 100)
    newest = discover_sessions(limit=1)
    assert [Path(s.path).name for s in newest] == ["b.jsonl"]
    two = discover_sessions(limit=2)
    assert [Path(s.path).name for s in two] == ["b.jsonl", "c.jsonl"]
    assert discover_sessions(limit=0) == []


def test_one_is_singular() -> None:
    from core.fleet.session_rows import FleetRow
    from core.fleet.survey import FleetReport
    from core.model.write_numbers import counted
    from tui.cli.commands.fleet import total_line

    assert counted(1, "compaction") == "1 compaction"
    assert counted(2, "compaction") == "2 compactions"
    assert counted(1_204, "session") == "1,204 sessions"
    line = total_line(FleetReport(rows=[FleetRow(path="a.jsonl")], analysed=1))
    assert line.startswith("1 session (") and "1 sessions" not in line


SAMPLES = REPO / "sample_sessions"
CUT_NUMBER = re.compile(r"\d[\d,.]*…")


def _fits(text: str, width: int) -> None:
    for line in text.splitlines():
        assert len(line) <= width, line
    assert not CUT_NUMBER.search(text), CUT_NUMBER.search(text)


@pytest.mark.skipif(not (SAMPLES / "pi").exists(), reason="samples not generated")
@pytest.mark.parametrize("columns", ["80", None])
def test_fleet_fits_the_terminal_piped_or_not(
    columns: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Piped, fleet follows COLUMNS, else 80; it leaves columns out by priority and says so;
    peak, its share and the session stay, and no number is cut."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    env = {"COLUMNS": columns} if columns else {}
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(cli, ["fleet", "-j", "1", str(SAMPLES / "pi")], env=env)
    assert result.exit_code == 0, result.output
    _fits(result.stdout, 80)
    header = next(line for line in result.stdout.splitlines() if line.startswith("peak"))
    assert header.split()[:2] == ["peak", "%"] and "session" in header
    assert "left out at 80 columns:" in result.stdout
    wide = CliRunner().invoke(
        cli, ["fleet", "-j", "1", str(SAMPLES / "pi")], env={"COLUMNS": "250"}
    )
    assert "left out" not in wide.stdout and "last message" in wide.stdout


def test_sessions_fits_80_columns_with_long_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    folder = tmp_path / ".claude" / "projects" / ("-very-long-project-name" * 4)
    _claude(folder / ("session-" + "x" * 60 + ".jsonl"), "2026-01-03T10:00:00Z", 1e9)
    result = CliRunner().invoke(cli, ["sessions"])
    assert result.exit_code == 0, result.output
    _fits(result.stdout, 80)
    assert "2026-01-03" in result.stdout and "x" * 20 in result.stdout


@pytest.mark.skipif(not (SAMPLES / "codex").exists(), reason="samples not generated")
def test_the_peak_is_the_prompt_before_the_reply_for_every_agent() -> None:
    """Claude Code records the prompt before the reply, Codex the total after it: the peak is
    the prompt for both (named so), and the text states the figure ``--json`` states."""
    codex = next((SAMPLES / "codex").glob("*.jsonl"))
    claude = SAMPLES / "claude-code" / "compacted.jsonl"
    wide = {"COLUMNS": "120"}
    for path in (codex, claude):
        text = CliRunner().invoke(cli, ["analyze", str(path)], env=wide).stdout
        data = json.loads(CliRunner().invoke(cli, ["analyze", str(path), "--json"]).stdout)
        peak, call = data["session"]["peak_tokens"], data["session"]["peak_call_index"]
        assert "peak prompt, recorded" in text
        assert re.search(rf"peak prompt, recorded\s+{peak:,} \(call {call}\)", text), text
    from core.formats import load_session

    session = load_session(str(codex))
    prompts = [m.usage.prompt_tokens for m in session.messages if m.usage is not None]
    data = json.loads(CliRunner().invoke(cli, ["analyze", str(codex), "--json"]).stdout)
    assert data["session"]["peak_tokens"] == max(prompts)  # not the total after the reply
