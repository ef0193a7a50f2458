"""The one place that knows every summariser: pick one from a policy's LLM settings."""

from __future__ import annotations

from core.llm.protocol import Summarizer
from core.policy import LLMConfig


def make_summarizer(config: LLMConfig, *, context_limit_tokens: int | None = None) -> Summarizer:
    """The summariser ``config`` describes. The live client (and the ``openai`` SDK) is imported
    only when it is asked for; ``context_limit_tokens`` bounds what the offline mock accepts (a
    live endpoint knows its own limit)."""
    if config.provider == "mock":
        from core.llm.mock import MockSummarizer

        return MockSummarizer(context_limit_tokens=context_limit_tokens)
    from core.llm.live import OpenAISummarizer

    return OpenAISummarizer(config)
