"""Special files where a policy is read, a crash that must not pass for success, a
folder nested past the recursion limit, names with glob characters, values too deep for
recursive code, dates no calendar has."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats import LoadError, load_session
from core.formats.jsonl import _split_objects
from core.formats.session_paths import expand_paths
from core.insights.prices import _noon_of
from core.model.deep_json import MAX_DEPTH, bounded, deeper_than, dumps
from core.model.json_text import printable
from core.model.terminal_text import safe
from core.policy import MAX_POLICY_BYTES, PolicyError, load_policy
from tests.support.paths import REPO
from tui.cli.main import cli

SAMPLE = REPO / "sample_sessions" / "pi" / "session.jsonl"
HANG_S = 60.0


def _ctxscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from tui.cli.main import main; main()", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_S,  # /dev/zero grew to 19.5 GB; a FIFO blocked for good
    )


@pytest.mark.parametrize("args", [("policy", "show", "{}"), ("analyze", str(SAMPLE), "-p", "{}")])
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_policy_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, args: tuple[str, ...], kind: str
) -> None:
    target = Path(os.devnull) if kind == "device" else tmp_path / "policy.toml"
    if kind == "fifo":
        os.mkfifo(target)
    done = _ctxscope(*(str(target) if a == "{}" else a for a in args))
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_a_policy_file_over_a_megabyte_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * MAX_POLICY_BYTES + b"\n")
    with pytest.raises(PolicyError, match="larger than 1,000,000 bytes"):
        load_policy(big)


def test_a_policy_nested_too_deep_is_an_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5_000 + "]" * 5_000 + "\n")
    with pytest.raises(PolicyError, match="not valid TOML"):
        load_policy(deep)


def test_fleet_exits_non_zero_when_an_analysis_crashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("core.fleet.survey.load_session", broken)
    result = CliRunner().invoke(cli, ["fleet", str(SAMPLE), "--jobs", "1", "--no-cache"])
    assert result.exit_code == 1, result.output
    assert "a bug in ctxscope" in result.output
    as_json = CliRunner().invoke(cli, ["fleet", str(SAMPLE), "-j", "1", "--no-cache", "--json"])
    assert as_json.exit_code == 1


DEPTH = 1_100


def test_a_folder_nested_1100_deep_is_walked(tmp_path: Path) -> None:
    top = tmp_path / "deep"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(DEPTH):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("s.jsonl", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
            f.write(SAMPLE.read_bytes())
    finally:
        os.close(fd)
    try:
        found, problems = expand_paths([str(top)])
        assert [p.name for p in found] == ["s.jsonl"] and problems == []
    finally:
        _remove_deep(top)  # pytest's own clean-up recurses, and would fail on this tree


def _remove_deep(top: Path) -> None:
    """Remove the chain of ``d`` folders under ``top`` without recursion."""
    fds = [os.open(top, os.O_RDONLY)]
    try:
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        for name in os.listdir(fds[-1]):
            os.unlink(name, dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)
    top.rmdir()


def test_an_unreadable_folder_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "ok.jsonl").write_bytes(SAMPLE.read_bytes())
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "inner").mkdir()
    closed.chmod(0)
    try:
        found, _problems = expand_paths([str(tmp_path)])
    finally:
        closed.chmod(0o700)
    assert [p.name for p in found] == ["ok.jsonl"]


def test_a_name_with_glob_characters_is_taken_literally(tmp_path: Path) -> None:
    odd = tmp_path / "session [1].jsonl"
    odd.write_bytes(SAMPLE.read_bytes())
    found, problems = expand_paths([str(odd)])
    assert found == [odd] and problems == []


def test_values_nested_too_deep_become_their_json_text() -> None:
    text = '{"k":' * 5_000 + "1" + "}" * 5_000
    deep = _split_objects(b"{}" + text.encode())
    assert deep is None  # the stdlib parser's RecursionError is "not two records", not a crash
    value: object = 1
    for _ in range(MAX_DEPTH + 1):
        value = {"k": value}
    assert deeper_than(value, MAX_DEPTH) and bounded(value) == dumps(value)
    assert dumps(value) == '{"k":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)
    assert bounded({"a": [1]}) == {"a": [1]}


def test_a_line_of_a_million_values_is_split_whole() -> None:
    values = _split_objects(b"{} " * 1_000_000)
    assert values is not None and len(values) == 1_000_000
    assert values[-1][:2] == (2_999_997, 2_999_999)


def test_dates_no_calendar_has_price_as_today() -> None:
    assert _noon_of("2026-02-30") is None and _noon_of("0000-00-00") is None
    noon = _noon_of("2026-02-28")
    assert noon is not None and noon.day == 28


def test_names_are_printed_escaped() -> None:
    raw = os.fsdecode(b"/s/\xff-\x1b[2J\x07.jsonl")
    assert printable(raw) == "/s/\\xff-\x1b[2J\x07.jsonl"
    assert safe(raw) == "/s/\\xff-\\x1b[2J\\x07.jsonl"
    assert safe("plain/ünï.jsonl") == "plain/ünï.jsonl"


def _wal_database(tmp_path: Path) -> Path:
    from tests.unit.test_formats_opencode import _export, write_db

    folder = tmp_path / "data"
    folder.mkdir()
    db = write_db([_export()], folder / "opencode.db")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")  # as opencode keeps it
    conn.close()  # a clean close checkpoints and removes -wal and -shm
    assert sorted(p.name for p in folder.iterdir()) == ["opencode.db"]
    return db


def test_reading_an_opencode_database_writes_nothing_beside_it(tmp_path: Path) -> None:
    db = _wal_database(tmp_path)
    before = db.read_bytes()
    session = load_session(db)
    assert session.messages
    listed = CliRunner().invoke(cli, ["analyze", str(db)])
    assert listed.exit_code == 0, listed.output
    assert sorted(p.name for p in db.parent.iterdir()) == ["opencode.db"]  # no -wal, no -shm
    assert db.read_bytes() == before


def test_an_opencode_time_of_9e18_is_no_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import hostile_cases

    data = tmp_path / "home" / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    hostile_cases._opencode_db(data / "opencode.db")
    result = CliRunner().invoke(cli, ["sessions", "--json"])
    assert result.exit_code == 0, result.output
    assert "ses_1" in result.stdout
    plain = CliRunner().invoke(cli, ["sessions"])
    assert plain.exit_code == 0, plain.output


@pytest.mark.parametrize("lead_bytes", [10_000, 140_000])
def test_zeros_after_a_session_do_not_make_it_binary(tmp_path: Path, lead_bytes: int) -> None:
    """A 10 KB session followed by 4 KB of zeros was "binary"; after 132 KB it loaded."""
    path = tmp_path / "s.jsonl"
    lines = SAMPLE.read_bytes()
    body = (lines * (lead_bytes // len(lines) + 1))[:lead_bytes]
    body = body[: body.rindex(b"\n") + 1]
    path.write_bytes(body + b"\x00" * 4096)
    session = load_session(path)
    assert session.messages


def test_a_file_that_starts_with_zeros_is_binary(tmp_path: Path) -> None:
    path = tmp_path / "z.jsonl"
    path.write_bytes(b"\x00" * 4096 + SAMPLE.read_bytes())
    with pytest.raises(LoadError, match="not a session"):
        load_session(path)


def test_fleet_says_a_missing_path_once(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["fleet", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stderr.count("no such file or directory") == 1, result.stderr
