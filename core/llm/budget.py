"""The failure budget of a run: after N summary requests in a row have failed, stop calling.

A replay against an endpoint that hangs, refuses or answers garbage would otherwise try again at
every compaction: 16 compactions × a 60 s deadline is a quarter of an hour of nothing. The live
summariser keeps one :class:`FailureBudget` (the replay engine keeps one summariser per LLM
setting, so a run shares it); once it is spent, :meth:`FailureBudget.check` raises
:class:`~core.llm.protocol.StoppedCallingError` without sending anything, naming the last failure.
A success resets the count. Context-length errors do not count: compaction answers them by
sending less, they say nothing about the endpoint's health.

The time failed requests took counts too: once the failures in a row have taken ``max_s``
seconds together (``max_failing_s``), the budget is spent however few they were, and the message
names that limit.
"""

from __future__ import annotations

import threading

from core.llm.protocol import LLMError, StoppedCallingError


class FailureBudget:
    """Consecutive failures of one summariser, and whether it should stop calling."""

    def __init__(self, limit: int, where: str, max_s: float | None = None) -> None:
        self.limit = max(1, limit)
        """Failures in a row after which no more requests are sent."""
        self.max_s = max_s
        """Seconds the failures in a row may take together before no more requests are sent."""
        self.failing_s = 0.0
        """Seconds the failures since the last success took."""
        self.where = where
        """The endpoint, for the error message."""
        self.succeeded = 0
        """Summary requests that returned a summary."""
        self.failed = 0
        """Summary requests that failed (after their retries)."""
        self.refused = 0
        """Summary requests not sent because the budget was spent."""
        self.consecutive = 0
        """Failures since the last success."""
        self.last_error: str | None = None
        """The one-line message of the last failure."""
        self._lock = threading.Lock()

    @property
    def spent(self) -> bool:
        """No more requests will be sent."""
        return self.consecutive >= self.limit or self._out_of_time

    @property
    def _out_of_time(self) -> bool:
        return self.max_s is not None and self.consecutive > 0 and self.failing_s >= self.max_s

    def time_left(self) -> float | None:
        """Seconds the failures in a row may still take (None: no time limit). A request is
        given no more than this (see :mod:`core.llm.deadline`)."""
        if self.max_s is None:
            return None
        with self._lock:
            return self.max_s - self.failing_s

    def check(self) -> None:
        """Raise :class:`StoppedCallingError` when the budget is spent (the request is not sent)."""
        with self._lock:
            if not self.spent:
                return
            self.refused += 1
            last = self.last_error or "unknown error"
            why = (
                f"the last {self.consecutive} summary requests failed "
                f"(max_consecutive_failures = {self.limit})"
                if self.consecutive >= self.limit
                else f"the summary requests that failed in a row took {self.failing_s:.1f}s "
                f"(max_failing_s = {self.max_s:g})"
            )
        raise StoppedCallingError(
            f"{self.where}: not asked: {why}, so this run stopped calling it; last error: {last}"
        )

    def record_success(self) -> None:
        with self._lock:
            self.succeeded += 1
            self.consecutive = 0
            self.failing_s = 0.0

    def record_failure(self, error: LLMError, seconds: float = 0.0) -> bool:
        """Count ``error`` (a request that took ``seconds``); True when it spent the budget."""
        with self._lock:
            was_spent = self.spent
            self.failed += 1
            self.consecutive += 1
            self.failing_s += seconds
            self.last_error = str(error)
            return self.spent and not was_spent
