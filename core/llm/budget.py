"""The failure budget of a run: after N summary requests in a row have failed, stop calling.

A replay against an endpoint that hangs, refuses or answers garbage would otherwise try again at
every compaction: 16 compactions × a 60 s deadline is a quarter of an hour of nothing. The live
summariser keeps one :class:`FailureBudget` (the replay engine keeps one summariser per LLM
setting, so a run shares it); once it is spent, :meth:`FailureBudget.check` raises
:class:`~core.llm.protocol.StoppedCallingError` without sending anything, naming the last failure.
A success resets the count. Context-length errors do not count: compaction answers them by
sending less, they say nothing about the endpoint's health.
"""

from __future__ import annotations

import threading

from core.llm.protocol import LLMError, StoppedCallingError


class FailureBudget:
    """Consecutive failures of one summariser, and whether it should stop calling."""

    def __init__(self, limit: int, where: str) -> None:
        self.limit = max(1, limit)
        """Failures in a row after which no more requests are sent."""
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
        return self.consecutive >= self.limit

    def check(self) -> None:
        """Raise :class:`StoppedCallingError` when the budget is spent (the request is not sent)."""
        with self._lock:
            if not self.spent:
                return
            self.refused += 1
            last = self.last_error or "unknown error"
        raise StoppedCallingError(
            f"{self.where}: not asked: the last {self.consecutive} summary requests failed "
            f"(max_consecutive_failures = {self.limit}), so this run stopped calling it; "
            f"last error: {last}"
        )

    def record_success(self) -> None:
        with self._lock:
            self.succeeded += 1
            self.consecutive = 0

    def record_failure(self, error: LLMError) -> bool:
        """Count ``error``; True when this failure spent the budget."""
        with self._lock:
            self.failed += 1
            self.consecutive += 1
            self.last_error = str(error)
            return self.consecutive == self.limit
