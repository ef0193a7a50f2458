"""Fidelity of the agents' own presets on the real sessions in ../shared/samples: a prediction.

Replays every real session there under the preset of the agent that recorded it (its rule for
the recorded version; no threshold is taken from the compactions scored) and prints the report's
total line ("automatic compactions reproduced at the same call: N/M"), with the leave-one-out
figure of thresholds learned from the other sessions of the same agent version, provider and
model; one line per automatic compaction that was not reproduced, and the time it took. Exits 1
below 100%. Skipped (exit 0, with a message) when ../shared/samples is not there.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.reports.fidelity import fidelity_report

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def main() -> int:
    if not SAMPLES.is_dir():
        print(f"skipped: {SAMPLES} is not here")
        return 0
    start = time.perf_counter()
    report = fidelity_report([str(SAMPLES)], learn=True)
    seconds = time.perf_counter() - start
    print(f"load average {os.getloadavg()[0]:.2f}; {report.sessions} sessions in {seconds:.1f} s")
    for entry in report.entries:
        row = entry.row
        if row.automatic and row.outcome not in ("same", "untestable"):
            name = Path(entry.file).name
            print(
                f"  not predicted: {name} #{row.recorded_index} {row.outcome} (checked "
                f"{row.check_tokens}, threshold {row.threshold}; {row.note})"
            )
    for error in report.errors:
        print(f"  unreadable: {error.file}: {error.error}")
    print(report.total_line())
    return 0 if report.reproduced == report.automatic else 1


if __name__ == "__main__":
    raise SystemExit(main())
