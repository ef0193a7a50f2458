"""The price of one recorded model call (:mod:`core.insights.cost`): a module of its own, so
that ``ctxscope analyze``, which builds none (its report's cost leaves ``per_call`` empty),
does not create its class."""

# (No ``from __future__ import annotations``: tests/unit/test_model_annotations.py.)

from core.model.fastmodel import Documented


class CallCost(Documented):
    """The price of one recorded model call."""

    call_index: int | None
    """The call (None: a call that is not in the conversation's numbering — a compaction's
    summary call, a sub-agent's)."""
    message_index: int
    """Its assistant message."""
    model: str | None
    """The model recorded for it."""
    input_tokens: int = 0
    """Uncached prompt tokens billed."""
    cache_read_tokens: int = 0
    """Prompt tokens read from the cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the cache."""
    output_tokens: int = 0
    """Generated tokens billed (reasoning included)."""
    input_usd: float | None = None
    """Cost of the uncached prompt tokens."""
    cache_read_usd: float | None = None
    """Cost of the cache reads."""
    cache_write_usd: float | None = None
    """Cost of the cache writes."""
    output_usd: float | None = None
    """Cost of the output."""
    total_usd: float | None = None
    """The call's cost (None: unknown — ``unknown_reason`` says why)."""
    unknown_reason: str | None = None
    """Why the call could not be priced."""
