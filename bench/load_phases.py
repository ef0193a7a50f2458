"""Where a Claude Code or Codex load spends its CPU: one figure per step.

* read     — the file read in chunks and split into lines;
* decode   — each line decoded (Claude Code: the typed read of ``core.formats.claude_typed``,
             which also makes the line's entry; Codex: the typed structs of
             ``core.formats.codex_typed``; other lines: orjson);
* per-line — what the loader does with each line (Claude Code: the plain read of the lines the
             typed read leaves; Codex: every record handler, typed or plain, through the walk
             ``codex.load`` takes, :func:`core.formats.codex_typed_read.walk_lines`);
* finish   — the session made from what was read (Claude Code: the active branch, the
             assembly of the messages, the build);
* window   — the window resolved (``load_session``'s last step).

Each figure is the best CPU time (user + sys of this process) of ``--runs`` runs of the steps
up to it, minus the one before it, with the garbage collector paused as ``load_session`` pauses
it; the window's is its own, timed on the session ``finish`` made (a difference of two whole
loads counts the state the loads before it left the heap in — a second load of the Claude Code
small-message file in one process took 0.2 s longer than the first — not the step's 0.03 s).
``load`` is the sum. Run: ``.venv/bin/python bench/load_phases.py [FILE ...] [--runs 3] [--mb 100] [--keep DIR]``;
without files it measures the four shapes ``bench/analyze.py`` generates (Claude Code and Codex,
small messages and big outputs), as ``make bench`` runs it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.agents.window_evidence import resolve_window  # noqa: E402
from core.formats import (  # noqa: E402
    claude_code,
    codex,
    codex_typed,
    codex_typed_read,
    detect_format,
    jsonl,
)
from core.formats.base import SessionBuilder  # noqa: E402
from core.formats.claude_typed import read as typed_read  # noqa: E402
from core.gc_pause import gc_paused  # noqa: E402
from core.model.session import Session, SourceFormat  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyze import SHAPES, generated, load_average  # noqa: E402
from analyze_phases import shape_arguments  # noqa: E402


def best(step: Callable[..., Any], runs: int, setup: Callable[[], Any] | None = None) -> float:
    """The least CPU seconds of ``runs`` calls of ``step`` (each given what ``setup`` made,
    untimed, when there is a ``setup``)."""
    least = float("inf")
    for _ in range(runs):
        with gc_paused():
            given = () if setup is None else (setup(),)
            start = time.process_time()
            result = step(*given)
            least = min(least, time.process_time() - start)
        del result, given
    return least


Step = tuple[str, Callable[..., Any], Callable[[], Any] | None]
"""A step's name, its run and its setup (None: the run does the work of the steps before it;
else the run is the step alone, given what the setup made)."""


def steps(path: Path, fmt: SourceFormat) -> list[Step]:
    """Each step: its run doing the work of those before it too, or (the window) alone."""
    claude = fmt is SourceFormat.CLAUDE_CODE

    def read() -> int:
        chunks = jsonl._Chunks(path, jsonl.CHUNK_BYTES, None)
        # (Codex reads views of its ASCII chunks: read_jsonl_raw's ``views``)
        views = None if claude else jsonl.Lines(SessionBuilder(fmt, path), None, 0)
        try:
            return sum(len(batch) for batch in jsonl._complete_lines(chunks, [], views))
        finally:
            chunks.close()

    def decode() -> int:
        typed = (
            (lambda raw, line, offset: typed_read(raw, line, offset) is not None)
            if claude
            else (lambda raw, line, offset: codex_typed.decode(raw) is not None)
        )
        return sum(1 for _ in jsonl.read_jsonl_raw(path, SessionBuilder(fmt, path), typed=typed))

    def per_line() -> object:
        if claude:
            reader = claude_code._Reader(SessionBuilder(fmt, path))
            for line_no, offset, _raw, obj in jsonl.read_jsonl_raw(
                path, reader.builder, walk=reader.walk
            ):
                reader.line(line_no, offset, obj)
            return reader
        loader = codex._Loader(path)
        for line_no, offset, raw, obj in jsonl.read_jsonl_raw(
            path, loader.builder, walk=partial(codex_typed_read.walk_lines, loader), views=True
        ):
            loader.line(line_no, offset, raw, obj)
        return loader

    def finish() -> Session:
        return claude_code.load(path) if claude else codex.load(path)

    def window(session: Session) -> Session:
        resolve_window(session, None)
        return session

    return [
        ("read", read, None),
        ("decode", decode, None),
        ("per-line", per_line, None),
        ("finish", finish, None),
        ("window", window, finish),
    ]


def main() -> int:
    args = shape_arguments(__doc__.splitlines()[0]).parse_args()
    if args.files:
        return measure(args.files, args.runs)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-load-phases-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        print(f"load phases, CPU seconds, best of {args.runs} ({load_average()})", flush=True)
        files = [generated(folder, name, args.mb, make) for name, make in SHAPES.values()]
        return measure(files, args.runs)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def measure(files: list[Path], runs: int) -> int:
    """Print each file's figure per step."""
    for path in files:
        fmt = detect_format(path)
        if fmt not in (SourceFormat.CLAUDE_CODE, SourceFormat.CODEX):
            print(f"{path.name}: {fmt.value} (only Claude Code and Codex are measured)")
            continue
        before = 0.0  # (the steps up to the last, with the work of those before it)
        alone = 0.0  # (the steps timed alone)
        figures = []
        for name, step, setup in steps(path, fmt):
            total = best(step, runs, setup)
            if setup is None:
                figures.append(f"{name} {max(0.0, total - before):.3f}")
                before = total
            else:
                figures.append(f"{name} {total:.3f}")
                alone += total
        print(
            f"{path.name} ({fmt.value}, {path.stat().st_size / 1e6:.0f} MB): {', '.join(figures)}; load {before + alone:.3f} s CPU"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
