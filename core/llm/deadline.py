"""The deadline of one summary request: the request's own (``timeout_s``) or, when less is left,
what remains of the run's budget for failing requests (``max_failing_s``).

The run's budget bounds the request in flight, not only the next one: once the failures in a
row have taken ``max_failing_s`` the run stops calling, so a request that would still be waiting
past that point is ended there. Whatever an endpoint does (never answers, drips one byte a
second, sends headers without end, fails slowly with retries, streamed or not), the requests of
a run fail for at most ``max_failing_s`` (30 s by default) before the run stops calling it; the
message names the deadline that ended the request.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.llm.budget import FailureBudget
from core.llm.protocol import UnreachableError
from core.policy import LLMConfig


@dataclass(frozen=True)
class RequestDeadline:
    """How long one request may take, and which setting said so."""

    seconds: float
    run_budget: bool
    """True when the run's budget (``max_failing_s``) is the binding limit, not ``timeout_s``."""
    failing_s: float = 0.0
    """Seconds the failures in a row before this request had taken."""

    def passed(self, where: str, progress: str) -> UnreachableError:
        """The error for a request that reached this deadline; ``progress`` says how far the
        answer got."""
        if not self.run_budget:
            return UnreachableError(
                f"{where}: no complete answer within {self.seconds:g}s "
                f"(timeout_s, --llm-timeout: the request's deadline; {progress})"
            )
        before = (
            f", {self.failing_s:.1f}s of it spent by the failures before this one"
            if self.failing_s > 0
            else ""
        )
        budget = self.seconds + self.failing_s
        return UnreachableError(
            f"{where}: no complete answer within {self.seconds:g}s (max_failing_s, "
            f"--llm-max-failing: the run's failing requests may take {budget:g}s together"
            f"{before}; {progress})"
        )


def request_deadline(config: LLMConfig, budget: FailureBudget) -> RequestDeadline:
    """The deadline of the next request: ``config.timeout_s``, or what is left of the run's
    failure budget when that is less."""
    left = budget.time_left()
    if left is not None and left < config.timeout_s:
        return RequestDeadline(max(left, 0.0), run_budget=True, failing_s=budget.failing_s)
    return RequestDeadline(config.timeout_s, run_budget=False)
