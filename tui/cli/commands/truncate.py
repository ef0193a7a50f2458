"""``ctxscope truncate``: T15 as a stdin → stdout filter.

Reads standard input in chunks through :class:`core.algorithms.truncate.StreamingTruncator`, so memory stays
bounded by the limits whatever the input size; writes what the model would see to standard
output and the spill path (or why saving failed) to standard error.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO

import click

from core.algorithms.truncate import StreamingTruncator, TruncateOptions
from core.policy import DEFAULT_HINT

CHUNK_BYTES = 1 << 20
"""Bytes read from standard input at a time."""


def run_filter(source: BinaryIO, sink: BinaryIO, errors: BinaryIO, options: TruncateOptions) -> int:
    """Truncate ``source`` into ``sink``; notes go to ``errors``. Returns the exit code."""
    truncator = StreamingTruncator(options)
    with truncator:
        while True:
            chunk = source.read(CHUNK_BYTES)
            if not chunk:
                break
            truncator.write(chunk)
        result = truncator.finish()
    raw = truncator.passthrough
    sink.write(raw if raw is not None else result.content.encode("utf-8"))
    sink.flush()
    if result.truncated:
        if result.spilled:
            note = f"ctxscope: full output saved to {result.output_path}\n"
        elif result.spill_error:
            note = f"ctxscope: {result.spill_error}\n"
        else:
            note = f"ctxscope: full output not saved (would be {result.output_path})\n"
        errors.write(note.encode("utf-8", "replace"))
        errors.flush()
    return 0


@click.command(name="truncate")
@click.option(
    "--max-lines",
    type=click.IntRange(min=0),
    default=2000,
    show_default=True,
    help="Most lines kept (0: no line limit).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=0),
    default=51200,
    show_default=True,
    help="Most UTF-8 bytes kept.",
)
@click.option(
    "--direction",
    type=click.Choice(["head", "tail", "middle"]),
    default="head",
    show_default=True,
    help="Keep the start, the end, or both ends around an inline marker.",
)
@click.option(
    "--middle-unit",
    type=click.Choice(["tokens", "chars"]),
    default="tokens",
    show_default=True,
    help="Unit of the middle marker (…N tokens truncated… / …N chars truncated…).",
)
@click.option(
    "--spill-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for the full output (default: $XDG_DATA_HOME/ctxscope/tool-output).",
)
@click.option(
    "--no-spill",
    is_flag=True,
    default=False,
    help="Simulate: print the truncated output but write no file.",
)
@click.option(
    "--hint",
    "hint_template",
    default=DEFAULT_HINT,
    help="Hint after the marker; {path} is the spill file ('' for none).",
)
def truncate(
    max_lines: int,
    max_bytes: int,
    direction: str,
    middle_unit: str,
    spill_dir: str | None,
    no_spill: bool,
    hint_template: str,
) -> None:
    """Truncate standard input as T15 would, saving the full output to a spill file.

    \b
    Example:
      seq 100000 | ctxscope truncate --direction tail --max-lines 20
    """
    options = TruncateOptions.model_validate(
        {
            "max_lines": max_lines,
            "max_bytes": max_bytes,
            "direction": direction,
            "middle_unit": middle_unit,
            "spill_dir": spill_dir,
            "spill": not no_spill,
            "hint_template": hint_template,
        }
    )
    try:
        code = run_filter(sys.stdin.buffer, sys.stdout.buffer, sys.stderr.buffer, options)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours. Point stdout at devnull
        # so the interpreter's final flush does not complain.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
