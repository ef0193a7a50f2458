"""Run ``ctxscope ARGS...`` with the output module paused at one stage of a write.

``python tests/support/paused_write.py STAGE MARKER ARGS...``: when the output module reaches ``STAGE``
(``created``: the temporary file exists; ``written``: it is complete and about to be renamed),
the temporary file's name is written to ``MARKER`` and the process waits for a signal. The test
that started it sends the signal once the marker exists: no timing, no race.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import core.output_file as output_file
from tui.cli.main import main


def _pause_at(stage: str, marker: Path) -> None:
    def hook(reached: str, temporary: Path) -> None:
        if reached == stage:
            # written beside it and renamed, so the test never reads a marker still empty
            ready = marker.with_name(marker.name + ".part")
            ready.write_text(str(temporary))
            ready.rename(marker)
            while True:
                signal.pause()

    output_file.STAGE_HOOK = hook


if __name__ == "__main__":
    _pause_at(sys.argv[1], Path(sys.argv[2]))
    sys.argv = ["ctxscope", *sys.argv[3:]]
    main()
