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


WRITES = {
    "convert": lambda out: ["convert", str(SAMPLE), "-o", str(out / "out.jsonl")],
    "report": lambda out: ["report", str(SAMPLE), "-o", str(out / "out.html")],
    "export": lambda out: ["export", str(SAMPLE), "--to", str(out), "-j", "1"],
}
SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP, "SIGINT": signal.SIGINT}


@pytest.mark.parametrize("stage", ["created", "written"])
@pytest.mark.parametrize("sig", list(SIGNALS))
@pytest.mark.parametrize("command", list(WRITES))
def test_a_signal_mid_write_leaves_no_temporary_file(
    tmp_path: Path, command: str, sig: str, stage: str
) -> None:
    """The write is paused (by a hook, not a sleep) right after its temporary file is created or
    right before the rename; the signal then ends it, and nothing is left in the folder."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    marker = tmp_path / "marker"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "support" / "paused_write.py"),
            stage,
            str(marker),
            *WRITES[command](out_dir),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + HANG_S
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)  # polling for the marker, not waiting a fixed time
        assert marker.exists(), process.stderr.read() if process.stderr else ""
        temporary = Path(marker.read_text())
        assert temporary.exists() and temporary.parent == out_dir
        process.send_signal(SIGNALS[sig])
        process.wait(HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if sig == "SIGINT":
        assert process.returncode != 0  # Ctrl-C: KeyboardInterrupt, as before
    else:
        assert process.returncode == -SIGNALS[sig]  # ended as the signal says, after cleaning up
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


def _special_targets(folder: Path, name: str) -> dict[str, Path]:
    """A FIFO, a symbolic link and (when the system lets us make one) a copy of /dev/null, each
    named ``name`` in a folder of its own."""
    made = {}
    fifo = folder / "fifo" / name
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    made["fifo"] = fifo
    link = folder / "link" / name
    link.parent.mkdir()
    (link.parent / "real").write_text("kept\n")
    link.symlink_to("real")
    made["link"] = link
    return made


@pytest.mark.parametrize("command", ["report", "export"])
def test_report_and_export_refuse_what_convert_refuses(tmp_path: Path, command: str) -> None:
    name = "out.html" if command == "report" else "sessions.parquet"
    for kind, target in _special_targets(tmp_path, name).items():
        args = (
            ["report", str(SAMPLE), "-o", str(target), "--force"]
            if command == "report"
            else ["export", str(SAMPLE), "--to", str(target.parent), "--force", "-j", "1"]
        )
        result = CliRunner().invoke(cli, args)
        if kind == "fifo":
            assert result.exit_code == 2, result.output
            assert "not a regular file (a FIFO)" in result.stderr
            assert stat.S_ISFIFO(os.lstat(target).st_mode)
        else:  # with --force the file the link points to is written; the link stays
            assert result.exit_code == 0, result.output
            assert target.is_symlink() and os.readlink(target) == "real"
            assert (target.parent / "real").read_bytes() != b"kept\n"
        assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_report_force_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    out = tmp_path / "out.html"
    out.write_text("old")
    out.chmod(0o600)
    result = CliRunner().invoke(cli, ["report", str(SAMPLE), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_report_refuses_a_symbolic_link_without_force(tmp_path: Path) -> None:
    (tmp_path / "real.html").write_text("kept")
    (tmp_path / "out.html").symlink_to("real.html")
    result = CliRunner().invoke(cli, ["report", str(SAMPLE), "-o", str(tmp_path / "out.html")])
    assert result.exit_code == 2 and "is a symbolic link (to real.html)" in result.stderr
    assert (tmp_path / "real.html").read_text() == "kept"


def test_export_to_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user that writes anywhere")
        result = CliRunner().invoke(cli, ["export", str(SAMPLE), "--to", str(folder), "-j", "1"])
    finally:
        folder.chmod(0o700)
    assert result.exit_code == 2
    assert "cannot write" in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
