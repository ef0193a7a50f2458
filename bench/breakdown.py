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
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze import (
    COMMAND,
    SHAPES,
    bench_file,
    generated,
    load_average,
    private_cache,
)

FLOOR_RATIO_BOUND = 5.0


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
                path = generated(folder, name, mb, generate)
                print(f"  {fmt}, {shape} messages, {mb} MB ({load_average()})", flush=True)
                lines, good = bench_file(
                    path, args.runs, "breakdown", FLOOR_RATIO_BOUND, rss_bounded=False
                )
                ok &= good
                print("\n".join(lines), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"  ({load_average()} at the end)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
