"""``ctxscope convert``: write any supported session as ctxscope JSONL.

The input format is detected (Claude Code, Codex, pi, opencode export / storage / database,
ctxscope JSONL) unless ``--from`` names it. The output goes to standard output, or to ``-o``:

* written to a temporary file beside the target, then renamed over it (a reader never sees half
  a file); the temporary file is removed on any failure, on Ctrl-C and on SIGTERM/SIGHUP;
* an existing ``-o`` is replaced only with ``--force``, and keeps its mode; a new file gets the
  mode ``>`` would give it (0666 less the umask);
* a symbolic link given as ``-o`` is never replaced: without ``--force`` it is refused, with it
  the file it points to is written (the link stays); anything but a regular file (a FIFO, a
  device, a folder, a loop of links) is refused either way.

Unusable input or output exits with status 2 and one line on standard error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from core.file_kind import kind_of, unreadable_reason
from core.formats import LoadError, load_session
from core.formats.ctxscope_jsonl import write_session
from core.models import Session, SourceFormat
from core.units import counted

TARGETS = ("ctxscope",)
"""Formats ``convert`` can write."""
CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that remove the temporary file before the process ends as the signal says."""


def _fail(message: str) -> NoReturn:
    click.echo(f"ctxscope convert: {message}", err=True)
    sys.exit(2)


@click.command(name="convert")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--to",
    "target",
    type=click.Choice(TARGETS),
    default="ctxscope",
    show_default=True,
    help="Output format (ctxscope JSONL, the canonical format ctxscope reads back losslessly).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write to this file instead of standard output (never over an existing file without "
    "--force).",
)
@click.option(
    "-f",
    "--force",
    is_flag=True,
    help="Replace an existing -o file (its mode is kept); for a symbolic link, write the file it "
    "points to.",
)
@click.option(
    "--from",
    "source_format",
    type=click.Choice([f.value for f in SourceFormat]),
    default=None,
    help="Input format, when detection should be skipped.",
)
def convert(
    path: Path, target: str, output: Path | None, force: bool, source_format: str | None
) -> None:
    """Convert the session at PATH to ctxscope JSONL.

    PATH is a transcript file, an opencode storage folder or opencode.db; append
    '#<session id>' to pick one session of a database or folder (default: the newest).
    """
    destination = _destination(output, force) if output is not None else None
    try:
        session = load_session(path, format=source_format)
    except LoadError as exc:
        _fail(str(exc))
    if destination is not None:
        assert output is not None
        source = Path(str(path).partition("#")[0])
        if destination.resolve() == source.resolve():
            _fail(f"{output}: refusing to overwrite the input session")
        _write_file(session, output, destination)
        click.echo(
            f"wrote {counted(len(session.messages), 'message')}, "
            f"{counted(len(session.compactions), 'compaction')} to {output}",
            err=True,
        )
        return
    try:
        write_session(session, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        sys.stderr.close()  # a closed pipe (| head) is not an error worth a traceback
        sys.exit(0)


def _destination(output: Path, force: bool) -> Path:
    """The file ``-o`` makes us write: ``output`` itself, or with ``--force`` the file a symbolic
    link ``output`` points to. Exits with status 2 for anything that must not be replaced."""
    try:
        info = os.lstat(output)
    except FileNotFoundError:
        return output
    except OSError as exc:
        _fail(f"{output}: cannot write ({(exc.strerror or str(exc)).lower()})")
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(output)
        if not force:
            _fail(
                f"{output}: is a symbolic link (to {target}); pass --force to write the file it "
                "points to"
            )
        reason = unreadable_reason(output)
        if reason is not None and not reason.startswith("broken symbolic link"):
            _fail(f"{output}: {reason}; refusing to write through it")
        return Path(os.path.realpath(output))
    if not stat.S_ISREG(info.st_mode):
        _fail(f"{output}: not a regular file ({kind_of(info.st_mode)}); refusing to replace it")
    if not force:
        _fail(f"{output}: already exists; pass --force to replace it")
    return output


def _write_file(session: Session, output: Path, destination: Path) -> None:
    """Write ``session`` to ``destination`` through a temporary file beside it."""
    try:
        mode = stat.S_IMODE(os.stat(destination).st_mode)  # a replaced file keeps its mode
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        fd, temp_name = tempfile.mkstemp(
            prefix=f".{destination.name}.", suffix=".tmp", dir=destination.parent
        )
    except OSError as exc:
        _fail(f"{output}: cannot write ({(exc.strerror or str(exc)).lower()})")
    try:
        with _removed_on_signals(temp_name):
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                write_session(session, handle)
            os.replace(temp_name, destination)
    except OSError as exc:
        _fail(f"{output}: cannot write ({(exc.strerror or str(exc)).lower()})")


def _umask() -> int:
    """The process's umask (reading it means setting it: put straight back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


class _Signalled(BaseException):
    """A cleanup signal arrived while the temporary file existed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _removed_on_signals(temp_name: str) -> Iterator[None]:
    """Remove ``temp_name`` when the block fails or a cleanup signal arrives (then end the
    process as that signal would have); leave it alone once it was renamed into place."""
    previous: dict[signal.Signals, Any] = {}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise _Signalled(signum)

    if threading.current_thread() is threading.main_thread():
        for cleanup in CLEANUP_SIGNALS:
            previous[cleanup] = signal.signal(cleanup, on_signal)
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        if isinstance(exc, _Signalled):
            _end_by(exc.signum)
        raise
    finally:
        for cleanup, handler in previous.items():
            signal.signal(cleanup, handler)


def _end_by(signum: int) -> NoReturn:
    """End the process as ``signum`` would have (its default action, its exit status)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # not reached where the default action ends the process
