"""Run ``ctxscope ARGS...`` with the output module paused at one stage of a write.

``python tests/support/paused_write.py STAGE MARKER ARGS...``: when the output module reaches ``STAGE``
(``created``: the temporary file exists; ``written``: it is complete and about to be renamed),
the temporary file's name is written to ``MARKER`` and the process waits for a signal. The test
that started it sends the signal once the marker exists: no timing, no race.

The cleanup signals are blocked before the marker appears, so a signal the test sends at once
stays pending until :func:`signal.sigwait` takes it: none can arrive between the marker and the
wait and be lost (``signal.pause()`` there missed one, about 1 run in 30 with both cores busy:
its handler was due but the process then slept in ``pause`` for good). The signal taken is then
raised again with the mask restored, so the product's own handler runs it exactly as it would
have run the signal the test sent.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import core.output_file as output_file
from tui.cli.main import main


def _pause_at(stage: str, marker: Path) -> None:
    def hook(reached: str, temporary: Path) -> None:
        if reached != stage:
            return
        waited = set(output_file.CLEANUP_SIGNALS)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, waited)
        try:
            # written beside it and renamed, so the test never reads a marker still empty
            ready = marker.with_name(marker.name + ".part")
            ready.write_text(str(temporary))
            ready.rename(marker)
            received = signal.sigwait(waited)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        signal.raise_signal(received)  # the product's handler ends the process from here

    output_file.STAGE_HOOK = hook


if __name__ == "__main__":
    _pause_at(sys.argv[1], Path(sys.argv[2]))
    sys.argv = ["ctxscope", *sys.argv[3:]]
    main()
