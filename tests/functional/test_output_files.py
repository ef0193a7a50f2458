"""Files ctxscope writes: ``convert -o`` never replaces silently, keeps a replaced file's mode,
never replaces a symbolic link, and leaves no temporary file behind a SIGTERM or SIGHUP; the
folders a new ``--spill-dir`` needs are created 0700 whatever the umask."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from core.formats import load_session
from tests.support.paths import REPO
from tui.cli.main import cli

CTXSCOPE = [sys.executable, "-c", "from tui.cli.main import main; main()"]
SAMPLE = REPO / "sample_sessions" / "pi" / "session.jsonl"
HANG_S = 60.0


def convert(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["convert", str(SAMPLE), *args])
    return result.exit_code, result.stderr


def test_an_existing_file_is_replaced_only_with_force_and_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    out.chmod(0o644)
    code, err = convert("-o", str(out))
    assert code == 2
    assert err == f"ctxscope convert: {out}: already exists; pass --force to replace it\n"
    assert out.read_text() == "precious\n"

    code, err = convert("-o", str(out), "--force")
    assert code == 0, err
    assert load_session(out).id == load_session(SAMPLE).id
    assert stat.S_IMODE(out.stat().st_mode) == 0o644  # not the temporary file's 0600
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    out = tmp_path / "new.jsonl"
    previous = os.umask(0o027)
    try:
        code, err = convert("-o", str(out))
    finally:
        os.umask(previous)
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_a_symbolic_link_is_refused_or_written_through_with_force(tmp_path: Path) -> None:
    target = tmp_path / "target.jsonl"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    code, err = convert("-o", str(link))
    assert code == 2 and "is a symbolic link (to target.jsonl)" in err and "--force" in err
    assert target.read_text() == "old\n"

    code, err = convert("-o", str(link), "--force")
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == "target.jsonl"  # the link stays a link
    assert load_session(target).id == load_session(SAMPLE).id  # its target was written
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_what_is_not_a_regular_file_is_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(tmp_path / "loop.jsonl")
    code, err = convert("-o", str(fifo), "--force")
    assert code == 2 and "not a regular file (a FIFO)" in err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    code, err = convert("-o", str(loop), "--force")
    assert code == 2 and "symbolic link loop" in err
    assert loop.is_symlink()


def test_the_input_is_never_the_output(tmp_path: Path) -> None:
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(SAMPLE.read_bytes())
    result = CliRunner().invoke(cli, ["convert", str(copy), "-o", str(copy), "--force"])
    assert result.exit_code == 2 and "refusing to overwrite the input session" in result.stderr
    assert copy.read_bytes() == SAMPLE.read_bytes()


def _big_input(path: Path, messages: int = 60_000) -> None:
    """A ctxscope JSONL session of many small messages (slow enough to write to be caught)."""
    lines = [
        orjson.dumps(
            {
                "type": "session",
                "schema": "ctxscope",
                "version": 1,
                "id": "big",
                "format": "ctxscope",
            }
        )
    ]
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(
            orjson.dumps(
                {
                    "type": "message",
                    "index": i,
                    "id": f"m{i}",
                    "role": role,
                    "text": f"line {i} " * 8,
                }
            )
        )
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_mid_write_leaves_no_temporary_file(tmp_path: Path, sig: signal.Signals) -> None:
    source = tmp_path / "in" / "big.jsonl"
    source.parent.mkdir()
    _big_input(source)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "out.jsonl"
    process = subprocess.Popen(
        [*CTXSCOPE, "convert", str(source), "-o", str(out)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + HANG_S
        temps: list[Path] = []
        while not temps and process.poll() is None and time.monotonic() < deadline:
            temps = [p for p in out_dir.iterdir() if p.name.endswith(".tmp")]
            time.sleep(0.001)
        assert temps, "the write never started (or finished before it could be caught)"
        process.send_signal(signal.SIGSTOP)  # hold it mid-write
        if not temps[0].exists() or out.exists():
            pytest.skip("the write finished before the signal: nothing to clean up")
        process.send_signal(sig)
        process.send_signal(signal.SIGCONT)
        process.wait(HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -sig  # ended as the signal says, after cleaning up
    assert list(out_dir.iterdir()) == []  # no partial .tmp file, and no output


def test_spill_dir_parents_are_created_0700_whatever_the_umask(tmp_path: Path) -> None:
    spill = tmp_path / "a" / "b" / "spill"
    done = subprocess.run(
        [*CTXSCOPE, "truncate", "--max-lines", "1", "--spill-dir", str(spill)],
        cwd=REPO,
        input=b"one\ntwo\nthree\n",
        capture_output=True,
        umask=0,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr
    for folder in (tmp_path / "a", tmp_path / "a" / "b", spill):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
