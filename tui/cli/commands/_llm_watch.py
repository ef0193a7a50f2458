"""What a command says on standard error while a live LLM writes its summaries, and its exit.

:class:`LLMWatch` listens to the live summariser's log (``ctxscope.llm``) while a replay runs:
each summary request, its outcome and a stopped run become one line on standard error
(``ctxscope replay: summary request 3: asking …``), so a long run against a slow endpoint shows
where it is. Afterwards, :meth:`LLMWatch.exit_if_nothing_written` ends the command with
:data:`EXIT_LLM_FAILED` and one line saying why when requests were made and none of them returned
a summary: a replay whose every compaction failed is not a result to trust.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

import click

from core.policy import Policy

if TYPE_CHECKING:
    import logging

EXIT_LLM_FAILED = 3
"""Exit status of a replay whose summary requests all failed (README, "Command line")."""

_LOGGER = "ctxscope.llm"


class LLMWatch:
    """Progress lines on standard error and a tally of outcomes, while a replay runs (only a
    live LLM logs: a replay with the mock summariser, the usual one, never imports logging)."""

    def __init__(self, command: str, policy: Policy) -> None:
        self.command = command
        self.live = policy.llm.provider != "mock"
        self.succeeded = 0
        self.failed = 0
        self.refused = 0
        self.last_error: str | None = None
        self.stopped: str | None = None
        self._saved_level = 0  # logging.NOTSET
        self._handler: logging.Handler | None = None

    def __enter__(self) -> LLMWatch:
        if self.live:
            import logging

            logger = logging.getLogger(_LOGGER)
            self._saved_level = logger.level
            logger.setLevel(logging.INFO)
            self._handler = _relay(self)
            logger.addHandler(self._handler)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._handler is not None:
            import logging

            logger = logging.getLogger(_LOGGER)
            logger.removeHandler(self._handler)
            logger.setLevel(self._saved_level)
            self._handler = None

    def emit(self, record: logging.LogRecord) -> None:
        """Count one record of the live summariser's log and say it on standard error."""
        event = getattr(record, "llm_event", None)
        message = record.getMessage()
        if event == "succeeded":
            self.succeeded += 1
        elif event == "failed":
            self.failed += 1
            self.last_error = getattr(record, "llm_error", message)
        elif event == "stopped":
            self.stopped = message
        click.echo(f"ctxscope {self.command}: {' '.join(message.split())}", err=True)
        sys.stderr.flush()

    def exit_if_nothing_written(self) -> None:
        """Exit with :data:`EXIT_LLM_FAILED` when summary requests were made and every one of them
        failed (one line on standard error); return otherwise."""
        if not self.live or self.succeeded or not self.failed:
            return
        why = f"every summary request failed ({self.failed}"
        why += " request)" if self.failed == 1 else " requests)"
        if self.stopped:
            why += ", then the run stopped calling the LLM"
        click.echo(
            f"ctxscope {self.command}: no compaction could be made: {why}; "
            f"last: {self.last_error or 'unknown error'}",
            err=True,
        )
        sys.exit(EXIT_LLM_FAILED)


def _relay(watch: LLMWatch) -> logging.Handler:
    """A handler of the LLM's log that hands each record to ``watch``."""
    import logging

    class Relay(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            watch.emit(record)

    return Relay(level=logging.INFO)
