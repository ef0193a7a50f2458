"""``ctxscope breakdown --json`` end to end, against the cost of parsing the file.

The same files as ``bench/analyze.py`` (Claude Code and Codex, many small messages and big tool
outputs, generated deterministically; ``--keep DIR`` shares a folder with it), and the same
measures: the *floor* (a bare ``orjson.loads`` loop over the file's lines, in this process)
against ``ctxscope breakdown --json FILE > /dev/null`` as a process from its start to its exit
(every call's breakdown and price), alternated, best of each, the ratio the median of the pairs'.
Bound (issue 24): ≤ 5 × the floor at 100 MB, both shapes; CPU time and peak RSS are printed
beside it (RSS is not bounded for this command).

Run: ``.venv/bin/python bench/breakdown.py [--sizes 100] [--runs 2] [--keep DIR] [--quick]``
(``--quick``: 10 MB only, printed for reference). Prints each figure beside its bound and the
load average; exits 1 when a bound is missed. Timing is never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze import (
    BOUNDED_FROM_MB,
    COMMAND,
    SHAPES,
    Run,
    analyze,
    floor,
    load_average,
    private_cache,
    row,
)

FLOOR_RATIO_BOUND = 5.0


def bench_file(path: Path, runs: int) -> tuple[list[str], bool]:
    """The floor and ``breakdown --json`` of one file, alternated ``runs`` times."""
    size = path.stat().st_size
    mb = size / 1e6
    bounded = mb >= BOUNDED_FROM_MB * 0.99
    analyze(path, "breakdown")  # warm: bytecode, page cache, the price memo
    floors: list[tuple[float, float]] = []
    found: list[Run] = []
    for _ in range(runs):
        floors.append(floor(path))
        found.append(analyze(path, "breakdown"))
    best_floor = min(w for w, _ in floors)
    best_floor_cpu = min(c for _, c in floors)
    best = min(r.wall for r in found)
    best_cpu = min(r.cpu for r in found)
    ratio = statistics.median(r.wall / f for (f, _), r in zip(floors, found, strict=True))
    ratio_cpu = statistics.median(r.cpu / c for (_, c), r in zip(floors, found, strict=True))
    rss = min(r.peak_rss_bytes for r in found)
    ok = ratio <= FLOOR_RATIO_BOUND or not bounded
    bound = f"≤ {FLOOR_RATIO_BOUND:.0f} x floor" if bounded else "(from 100 MB)"
    lines = [
        row("    floor (orjson loop), best", f"{best_floor:.3f} s (CPU {best_floor_cpu:.3f} s)", "", None),
        row(
            "    breakdown --json, best; median ratio",
            f"{best:.2f} s; {ratio:.1f} x floor",
            bound,
            ok if bounded else None,
        ),
        row("    CPU, best; median ratio", f"{best_cpu:.2f} s; {ratio_cpu:.1f} x floor CPU", "", None),
        row("    peak RSS", f"{rss / 1e6:.0f} MB = {rss / size:.2f} x file ({mb:.0f} MB)", "", None),
    ]  # fmt: skip
    return lines, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100", help="file sizes in MB (10^6 bytes)")
    parser.add_argument("--runs", type=int, default=2, help="floor/breakdown pairs per file")
    parser.add_argument("--keep", type=Path, help="generate the files here and keep them")
    parser.add_argument("--quick", action="store_true", help="10 MB files only")
    parser.add_argument(
        "--only", choices=("claude-code", "codex"), help="one format (default: both)"
    )
    parser.add_argument(
        "--ctxscope", type=Path, help="the ctxscope command to measure (default: this one's)"
    )
    args = parser.parse_args()
    if args.ctxscope:
        COMMAND.append(str(args.ctxscope))
    sizes = [10] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-breakdown-"))
    folder.mkdir(parents=True, exist_ok=True)
    private_cache(folder)
    ok = True
    print(
        f"ctxscope breakdown --json benchmark (cores: {os.cpu_count()}, python "
        f"{sys.version.split()[0]}, {load_average()})",
        flush=True,
    )
    try:
        for mb in sizes:
            for (fmt, shape), (name, generate) in SHAPES.items():
                if args.only and fmt != args.only:
                    continue
                path = folder / name.format(mb=mb)
                if not path.exists():
                    partial = path.with_name(path.name + ".partial")
                    generate(partial, mb * 1_000_000)
                    partial.rename(path)
                print(f"  {fmt}, {shape} messages, {mb} MB ({load_average()})", flush=True)
                lines, good = bench_file(path, args.runs)
                ok &= good
                print("\n".join(lines), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"  ({load_average()} at the end)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
