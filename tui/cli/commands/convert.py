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

import sys
from pathlib import Path
from typing import NoReturn

import click

from core.formats import LoadError, load_session
from core.formats.ctxscope_jsonl import write_session
from core.model.session import Session, SourceFormat
from core.model.terminal_text import safe
from core.model.write_numbers import counted
from core.output_file import (
    OutputRefused,
    destination,
    discard,
    publish,
    removed_on_signals,
    temporary_beside,
)

TARGETS = ("ctxscope",)
"""Formats ``convert`` can write."""


def _fail(message: str) -> NoReturn:
    click.echo(f"ctxscope convert: {safe(message)}", err=True)
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
    target_file = _destination(output, force) if output is not None else None
    try:
        session = load_session(path, format=source_format)
    except LoadError as exc:
        _fail(str(exc))
    if target_file is not None:
        assert output is not None
        source = Path(str(path).partition("#")[0])
        if target_file.resolve() == source.resolve():
            _fail(f"{output}: refusing to overwrite the input session")
        _write_file(session, output, target_file)
        click.echo(
            f"wrote {counted(len(session.messages), 'message')}, "
            f"{counted(len(session.compactions), 'compaction')} to {safe(str(output))}",
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
        return destination(
            output, force, exists_message=f"{output}: already exists; pass --force to replace it"
        )
    except OutputRefused as exc:
        _fail(str(exc))


def _write_file(session: Session, output: Path, target: Path) -> None:
    """Write ``session`` to ``target`` through a temporary file beside it, removed on any
    failure and on a cleanup signal (the handlers are installed before it is created)."""
    try:
        with removed_on_signals():
            temporary = temporary_beside(target)
            try:
                with open(temporary, "wb") as handle:
                    write_session(session, handle)
                publish(temporary, target)
            finally:
                discard(temporary)
    except OSError as exc:
        _fail(f"{output}: cannot write ({(exc.strerror or str(exc)).lower()})")
