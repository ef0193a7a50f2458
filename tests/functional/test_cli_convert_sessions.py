"""``ctxscope convert`` and ``ctxscope sessions`` through the real command line group."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats import load_session
from tests.support.paths import TESTS
from tests.unit.test_formats_opencode import _export, write_db
from tui.cli.main import cli

FIXTURES = TESTS / "fixtures"
PI_FIXTURE = FIXTURES / "pi" / "v3-tree.jsonl"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_convert_to_stdout(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["convert", str(PI_FIXTURE), "--to", "ctxscope"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["schema"] == "ctxscope"
    out = tmp_path / "out.jsonl"
    out.write_text(result.stdout)
    assert load_session(out) == load_session(PI_FIXTURE)


def test_convert_to_file(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "session.jsonl"
    export = FIXTURES / "opencode" / "export.json"
    result = runner.invoke(cli, ["convert", str(export), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    original = load_session(export)
    assert load_session(out) == original
    assert f"{len(original.messages)} messages" in result.stderr


def test_convert_database_session(runner: CliRunner, tmp_path: Path) -> None:
    db = write_db([_export()], tmp_path / "opencode.db")
    sid = _export()["info"]["id"]
    result = runner.invoke(cli, ["convert", f"{db}#{sid}"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.splitlines()[0])["id"] == sid


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\x01binary", b"hello world\n", b'{"a": 1}\n{"b": 2}\n', b"[1, 2, 3]\n"],
    ids=["empty", "binary", "text", "unknown-json", "json-array"],
)
def test_convert_unusable_input_exits_2_with_one_line(
    runner: CliRunner, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    result = runner.invoke(cli, ["convert", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert str(path) in result.stderr


def test_convert_missing_file_and_newer_db(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["convert", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2 and "no such file" in result.stderr
    import sqlite3

    db = tmp_path / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE session_message (id TEXT, data TEXT)")
    conn.commit()
    conn.close()
    result = runner.invoke(cli, ["convert", str(db), "--from", "opencode"])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_convert_refuses_to_overwrite_its_input(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(PI_FIXTURE, path)
    before = path.read_bytes()
    result = runner.invoke(cli, ["convert", str(path), "-o", str(path)])
    assert result.exit_code == 2 and path.read_bytes() == before


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for name in (
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "PI_CODING_AGENT_DIR",
        "PI_CODING_AGENT_SESSION_DIR",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    folder = home / ".pi" / "agent" / "sessions" / "--home-dev-shop--"
    folder.mkdir(parents=True)
    for n in range(3):
        path = folder / f"s{n}.jsonl"
        shutil.copyfile(PI_FIXTURE, path)
        os.utime(path, (1_000 + n, 1_000 + n))
    return home


def test_sessions_json(runner: CliRunner, fake_home: Path) -> None:
    result = runner.invoke(cli, ["sessions", "--json", "--limit", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [Path(r["path"]).name for r in rows] == ["s2.jsonl", "s1.jsonl"]
    assert {r["format"] for r in rows} == {"pi"}
    assert rows[0]["project"] == "/home/dev/shop"
    assert rows[0]["title"] == "add a discount field to the cart"
    assert rows[0]["size_bytes"] == PI_FIXTURE.stat().st_size
    assert rows[0]["modified_epoch"] == 1_002


def test_sessions_table(runner: CliRunner, fake_home: Path) -> None:
    result = runner.invoke(cli, ["sessions"], env={"COLUMNS": "250"})  # paths unfolded
    assert result.exit_code == 0, result.output
    assert result.stdout.count("s0.jsonl") == 1 and "pi" in result.stdout
    assert result.stdout.index("s2.jsonl") < result.stdout.index("s0.jsonl")


def test_sessions_none_found(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(cli, ["sessions"])
    assert result.exit_code == 0 and "No sessions found" in result.stdout
    assert json.loads(runner.invoke(cli, ["sessions", "--json"]).stdout) == []
