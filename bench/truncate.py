"""Benchmark of T15 truncation (core/algorithms/truncate.py and ``ctxscope truncate``).

Figures and bounds:
  * truncating a 100 MB tool output (80-character lines) with spill, head / tail / middle,
    against ``Path(spill).write_text(output, encoding="utf-8")`` of the same output in the same
    run: at most 1.5x that write (median of several interleaved runs);
  * the fast path on a 40 KB output: median under 50 us;
  * ``ctxscope truncate`` (the console script) filtering 1 GB from a generator pipe: peak RSS of
    the filter under 64 MB (``/usr/bin/time -v``, else ``getrusage(RUSAGE_CHILDREN)``).

Run: ``.venv/bin/python bench/truncate.py`` (about a minute). Prints a table; exit 1 if a bound fails.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.algorithms.truncate import TruncateOptions, truncate  # noqa: E402

LINE_CHARS = 80
BIG_BYTES = 100 * 1024 * 1024
FAST_BYTES = 40 * 1024
STREAM_BYTES = 1024 * 1024 * 1024
RUNS = 5
FAST_RUNS = 5000


def make_output(total_bytes: int) -> str:
    """``total_bytes`` of 80-character numbered lines (81 bytes with the newline)."""
    filler = "abcdefghijklmnopqrstuvwxyz0123456789" * 3
    count = total_bytes // (LINE_CHARS + 1)
    return "\n".join(f"{i:09d} {filler[: LINE_CHARS - 10]}" for i in range(count))


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_big(folder: Path) -> list[tuple[str, str, str, bool]]:
    output = make_output(BIG_BYTES)
    baseline_file = folder / "baseline.txt"
    spill_dir = folder / "spill"
    times: dict[str, list[float]] = {"write_text": [], "head": [], "tail": [], "middle": []}
    options = {
        direction: TruncateOptions(direction=direction, spill_dir=str(spill_dir))
        for direction in ("head", "tail", "middle")
    }
    for _ in range(RUNS):  # interleaved, so cache and load drift hit every variant alike
        times["write_text"].append(
            timed(lambda: baseline_file.write_text(output, encoding="utf-8"))
        )
        baseline_file.unlink()
        for direction, option in options.items():
            result = truncate(output, option)
            assert result.truncated and result.spilled, result.explain()
            spilled = Path(result.output_path or "")
            assert spilled.stat().st_size == result.total_bytes == len(output), "spill size"
            spilled.unlink()
            times[direction].append(timed(partial(truncate, output, option)))
            shutil.rmtree(spill_dir)
    baseline = statistics.median(times["write_text"])
    rows = [
        (
            f"write_text of {len(output) / 1e6:.0f} MB (baseline)",
            "-",
            f"{baseline * 1000:.0f} ms",
            True,
        )
    ]
    for direction in ("head", "tail", "middle"):
        median = statistics.median(times[direction])
        ratio = median / baseline
        rows.append(
            (
                f"truncate {direction} + spill, {len(output) / 1e6:.0f} MB",
                "<= 1.5x write_text",
                f"{median * 1000:.0f} ms ({ratio:.2f}x)",
                ratio <= 1.5,
            )
        )
    # Simulation (spill=False) on the same output: what replay pays per huge tool output.
    simulate = TruncateOptions(direction="tail", spill=False)
    sim = statistics.median(timed(lambda: truncate(output, simulate)) for _ in range(RUNS))
    rows.append(
        (
            f"simulate tail (no spill), {len(output) / 1e6:.0f} MB",
            "info",
            f"{sim * 1000:.1f} ms",
            True,
        )
    )
    return rows


def bench_fast_path() -> list[tuple[str, str, str, bool]]:
    output = make_output(FAST_BYTES)
    options = TruncateOptions()
    assert not truncate(output, options).truncated
    samples = []
    for _ in range(FAST_RUNS):
        start = time.perf_counter_ns()
        truncate(output, options)
        samples.append(time.perf_counter_ns() - start)
    median_us = statistics.median(samples) / 1000
    non_ascii = output.replace("a", "é", 1000)
    samples = []
    for _ in range(FAST_RUNS // 5):
        start = time.perf_counter_ns()
        truncate(non_ascii, options)
        samples.append(time.perf_counter_ns() - start)
    other_us = statistics.median(samples) / 1000
    return [
        (
            f"fast path, {len(output) / 1024:.0f} KB ASCII (median)",
            "< 50 us",
            f"{median_us:.1f} us",
            median_us < 50,
        ),
        (
            f"fast path, {len(non_ascii.encode()) / 1024:.0f} KB with accents",
            "info",
            f"{other_us:.1f} us",
            True,
        ),
    ]


def ctxscope_command() -> list[str]:
    script = ROOT / ".venv" / "bin" / "ctxscope"
    if script.exists():
        return [str(script)]
    found = shutil.which("ctxscope")
    if found:
        return [found]
    return [sys.executable, "-c", "from tui.cli.main import main; main()"]


GENERATOR = f"""
import sys
line = b"{"z" * (LINE_CHARS - 1)}\\n"
block = (line * ((1 << 20) // len(line) + 1))[: 1 << 20]
out = sys.stdout.buffer
for _ in range({STREAM_BYTES} >> 20):
    out.write(block)
"""


def bench_stream(folder: Path, direction: str) -> tuple[str, str, str, bool]:
    spill_dir = folder / f"stream-{direction}"
    command = [
        *ctxscope_command(),
        "truncate",
        "--direction",
        direction,
        "--spill-dir",
        str(spill_dir),
    ]
    time_bin = shutil.which("time") or (
        "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
    )
    if time_bin:
        command = [time_bin, "-v", *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    generator = subprocess.Popen([sys.executable, "-c", GENERATOR], stdout=subprocess.PIPE)
    assert generator.stdout is not None
    filt = subprocess.run(
        command,
        stdin=generator.stdout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    generator.stdout.close()
    generator.wait()
    elapsed = time.perf_counter() - start
    report = filt.stderr.decode(errors="replace")
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    if match:
        peak_mb = int(match.group(1)) / 1024
        how = "time -v"
    else:  # ru_maxrss of the largest child so far (the generator is small too)
        peak_mb = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
        how = "getrusage"
    spilled = sum(path.stat().st_size for path in spill_dir.iterdir()) if spill_dir.exists() else 0
    shutil.rmtree(spill_dir, ignore_errors=True)
    ok = filt.returncode == 0 and spilled == STREAM_BYTES and peak_mb < 64
    figure = f"{peak_mb:.1f} MB ({how}; {elapsed:.1f} s, {STREAM_BYTES / elapsed / 1e6:.0f} MB/s)"
    if spilled != STREAM_BYTES:
        figure += f" spill {spilled} bytes!"
    return (
        f"ctxscope truncate --direction {direction}, 1 GiB stdin: max RSS",
        "< 64 MB",
        figure,
        ok,
    )


def main() -> int:
    started = time.perf_counter()
    rows: list[tuple[str, str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="ctxscope-bench-") as tmp:
        folder = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(folder / "xdg")  # never touch the real data folder
        rows += bench_fast_path()
        rows += bench_big(folder)
        for direction in ("head", "tail", "middle"):
            rows.append(bench_stream(folder, direction))
    width = max(len(row[0]) for row in rows)
    bound_width = max(len(row[1]) for row in rows)
    value_width = max(len(row[2]) for row in rows)
    print(
        f"{'figure'.ljust(width)}  {'bound'.ljust(bound_width)}  {'measured'.ljust(value_width)}  result"
    )
    for name, bound, value, ok in rows:
        verdict = "info" if bound in ("-", "info") else ("pass" if ok else "FAIL")
        print(
            f"{name.ljust(width)}  {bound.ljust(bound_width)}  {value.ljust(value_width)}  {verdict}"
        )
    print(
        f"(total {time.perf_counter() - started:.0f} s, python {sys.version.split()[0]}, {os.cpu_count()} cpus)"
    )
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
