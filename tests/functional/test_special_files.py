"""FIFOs, devices, sockets and symbolic-link loops: named in one line, never opened, never a hang.

Opening a FIFO for reading blocks until a writer comes, so every check here runs where a hang
can be caught: in a thread joined with a timeout, or in a subprocess with one. Whatever reader
the old code left blocked is let go at the end (a writer opens and closes the FIFO).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.formats import LoadError, load_session
from core.formats.file_kind import open_regular, unreadable_reason
from core.formats.session_paths import expand_paths
from tests.support.hang import within
from tests.support.paths import REPO

SAMPLE = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"
HANG_S = 20.0


def _let_readers_go(fifo: Path) -> None:
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """One path of each kind that is not a regular file."""
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    sock_path = tmp_path / "socket.jsonl"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    loop = tmp_path / "loop.jsonl"
    (tmp_path / "loop-b.jsonl").symlink_to(loop)
    loop.symlink_to(tmp_path / "loop-b.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.symlink_to(tmp_path / "missing.jsonl")
    try:
        yield {
            "fifo": fifo,
            "device": Path(os.devnull),
            "socket": sock_path,
            "loop": loop,
            "broken": broken,
        }
    finally:
        server.close()
        _let_readers_go(fifo)


REASONS = {
    "fifo": "not a regular file (a FIFO)",
    "device": "not a regular file (a character device)",
    "socket": "not a regular file (a socket)",
    "loop": "symbolic link loop",
    "broken": "broken symbolic link",
}


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_load_session_names_the_kind_before_opening_anything(
    specials: dict[str, Path], kind: str
) -> None:
    path = specials[kind]
    try:
        with pytest.raises(LoadError) as caught:
            within(HANG_S, lambda: load_session(path))
    finally:
        _let_readers_go(specials["fifo"])
    assert str(caught.value).startswith(f"{path}: {REASONS[kind]}")


def test_unreadable_reason_accepts_files_and_folders_only_when_asked(tmp_path: Path) -> None:
    file = tmp_path / "a.jsonl"
    file.write_text("{}\n")
    assert unreadable_reason(file) is None
    assert unreadable_reason(tmp_path, directories=True) is None
    assert unreadable_reason(tmp_path) == "not a regular file (a directory)"
    assert unreadable_reason(tmp_path / "nope") == "no such file or directory"


def test_open_regular_refuses_a_fifo_without_blocking(specials: dict[str, Path]) -> None:
    with pytest.raises(OSError, match="a FIFO"):
        within(HANG_S, lambda: open_regular(specials["fifo"]))
    with open_regular(SAMPLE) as handle:
        assert handle.read(1) == b"{"


def test_expand_paths_names_a_loop_and_skips_special_files(
    specials: dict[str, Path], tmp_path: Path
) -> None:
    found, problems = expand_paths([str(specials["loop"]), str(specials["fifo"])])
    assert found == []
    assert problems == [
        f"{specials['loop']}: symbolic link loop (the link leads back to itself)",
        f"{specials['fifo']}: not a regular file (a FIFO)",
    ]
    real = tmp_path / "real.jsonl"
    real.write_bytes(SAMPLE.read_bytes())
    found, problems = within(HANG_S, lambda: expand_paths([str(tmp_path)]))
    assert found == [real]
    assert problems == [  # each named once, in name order (loop-b leads into the loop)
        f"{tmp_path / 'broken.jsonl'}: {unreadable_reason(specials['broken'])}, skipped",
        f"{specials['fifo']}: not a regular file (a FIFO), skipped",
        f"{tmp_path / 'loop-b.jsonl'}: symbolic link loop (the link leads back to itself), skipped",
        f"{specials['loop']}: symbolic link loop (the link leads back to itself), skipped",
        f"{specials['socket']}: not a regular file (a socket), skipped",
    ]


@pytest.mark.parametrize("command", ["fleet", "fidelity", "export"])
def test_special_files_in_a_folder_are_named_when_skipped(tmp_path: Path, command: str) -> None:
    """Issue 26: a FIFO, a socket, a device node named like a session inside a folder given to
    a command over many sessions: one line each on stderr, the name escaped, the rest done."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "real.jsonl").write_bytes(SAMPLE.read_bytes())
    fifo = folder / "evil\x1b[2J.jsonl"
    os.mkfifo(fifo)
    if os.geteuid() == 0:  # a device node needs root
        os.mknod(folder / "null.jsonl", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "socket.jsonl"))
    args = {
        "fleet": ["fleet", "--no-cache", "-j", "1", str(folder)],
        "fidelity": ["fidelity", str(folder)],
        "export": ["export", str(folder), "--to", str(tmp_path / "out")],
    }[command]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from tui.cli.main import main; main()", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    finally:
        server.close()
        _let_readers_go(fifo)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "\x1b" not in out, out
    skipped = [line for line in done.stderr.splitlines() if line.endswith(", skipped")]
    names = [
        "evil\\x1b[2J.jsonl: not a regular file (a FIFO)",
        "socket.jsonl: not a regular file (a socket)",
    ]
    if os.geteuid() == 0:
        names.append("null.jsonl: not a regular file (a character device)")
    assert len(skipped) == len(names), done.stderr
    for name in names:
        assert any(name in line for line in skipped), (name, done.stderr)


def test_a_fifo_under_claude_projects_never_hangs_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    (project / "real.jsonl").write_bytes(SAMPLE.read_bytes())
    fifo = project / "stray.jsonl"
    os.mkfifo(fifo)
    (home / ".codex" / "sessions" / "2026" / "03" / "01").mkdir(parents=True)
    os.mkfifo(home / ".codex" / "sessions" / "2026" / "03" / "01" / "rollout-x.jsonl")
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "c"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from tui.cli.main import main; main()", "sessions", "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
        )
    finally:
        _let_readers_go(fifo)
    assert done.returncode == 0, done.stderr
    listed = [entry["path"] for entry in json.loads(done.stdout)]
    assert listed == [str(project / "real.jsonl")]
