"""Summarisers for tests that wrap the offline mock."""

from __future__ import annotations

from collections.abc import Sequence

from core.llm.mock import MockSummarizer
from core.llm.protocol import ChatMessage, DeltaCallback, SummaryResult


class Forwarding:
    """Hands every request to ``inner`` (a fresh mock by default) and has none of the mock's other
    attributes — no overflow probe, no ``needs_event_loop`` — so compaction and replay treat it as
    they treat a live endpoint. :meth:`before` runs ahead of each request (nothing here)."""

    name = "mock"

    def __init__(self, inner: MockSummarizer | None = None) -> None:
        self.inner = inner if inner is not None else MockSummarizer()

    async def before(self) -> None:
        """Called before each request is handed on."""

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        await self.before()
        return await self.inner.summarize(messages, prompt, max_tokens, on_delta=on_delta)
