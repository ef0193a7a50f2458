"""``ctxscope convert``: write any supported session as ctxscope JSONL.

The input format is detected (Claude Code, Codex, pi, opencode export / storage / database,
ctxscope JSONL) unless ``--from`` names it. The output goes to standard output, or to ``-o``
(written atomically). Unusable input exits with status 2 and one line on standard error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from core.formats import LoadError, load_session
from core.formats.ctxscope_jsonl import write_session
from core.models import SourceFormat

TARGETS = ("ctxscope",)
"""Formats ``convert`` can write."""


def _fail(message: str) -> None:
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
    help="Write to this file instead of standard output.",
)
@click.option(
    "--from",
    "source_format",
    type=click.Choice([f.value for f in SourceFormat]),
    default=None,
    help="Input format, when detection should be skipped.",
)
def convert(path: Path, target: str, output: Path | None, source_format: str | None) -> None:
    """Convert the session at PATH to ctxscope JSONL.

    PATH is a transcript file, an opencode storage folder or opencode.db; append
    '#<session id>' to pick one session of a database or folder (default: the newest).
    """
    try:
        session = load_session(path, format=source_format)
    except LoadError as exc:
        _fail(str(exc))
        return
    if output is not None and output.resolve() == Path(str(path).partition("#")[0]).resolve():
        _fail(f"{output}: refusing to overwrite the input session")
        return
    try:
        if output is None:
            write_session(session, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            write_session(session, output)
    except BrokenPipeError:
        sys.stderr.close()  # a closed pipe (| head) is not an error worth a traceback
        sys.exit(0)
    except OSError as exc:
        _fail(f"{output}: cannot write ({exc.strerror or exc})")
        return
    if output is not None:
        click.echo(
            f"wrote {len(session.messages)} messages, {len(session.compactions)} compactions "
            f"to {output}",
            err=True,
        )
