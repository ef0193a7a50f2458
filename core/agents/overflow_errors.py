"""Recognise a provider's "the request did not fit the context window" error from its text.

Providers say it in different words; overflow recovery (compact, or drop the oldest head
message, then retry) must fire on all of them and on nothing else. In particular a rate limit
that talks about "tokens per minute" is not an overflow. Pure standard library, so the replay
engine can use it without loading the ``openai`` SDK.
"""

from __future__ import annotations

import re
from functools import cache

# Error codes servers put in ``error.code`` for an overflow (OpenAI, OpenRouter, some proxies).
OVERFLOW_CODES = frozenset({"context_length_exceeded", "context_window_exceeded"})

_OVERFLOW_PATTERNS = (
    # OpenAI ("This model's maximum context length is 8192 tokens"), vLLM (same words, then
    # "However, you requested N tokens"), OpenRouter ("This endpoint's maximum context length
    # is N tokens"), and the bare phrase some OpenRouter upstreams use.
    r"maximum context length",
    r"however,? you requested \d+ tokens",
    # The code spelled out in a message: "context_length_exceeded", "context length exceeded".
    r"context[_ ]length[_ ]exceeded",
    r"context[_ ]window[_ ]exceeded",
    # OpenAI Responses API and several proxies.
    r"exceeds? the (?:model'?s? )?context window",
    r"input exceeds the context window",
    # Anthropic and Anthropic-compatible proxies.
    r"prompt is too long",
    # llama.cpp server ("the request exceeds the available context size, try increasing it").
    r"exceeds the available context size",
    # Gemini, xAI, Mistral, Ollama.
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"too large for model with \d+ maximum context length",
    r"input length exceeds the context length",
    r"requested tokens? \(\d+\) exceed(?:s)? context window",
)
# Throughput limits mention tokens too; they must never be taken for an overflow.
_RATE_LIMIT = r"rate limit|tokens per (?:min|minute|day)|\bTPM\b|\bRPM\b|requests per|quota"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The overflow and rate-limit expressions, compiled on the first error text (most sessions
    hold none, and their reading should not pay for it)."""
    overflow = re.compile("|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS), re.IGNORECASE)
    return overflow, re.compile(_RATE_LIMIT, re.IGNORECASE)


def is_context_overflow_message(text: str) -> bool:
    """True when ``text`` (an error message or body) says the request exceeded the context window.

    Recognises the usual wording of OpenAI (``maximum context length is N tokens``, code
    ``context_length_exceeded``), Anthropic-compatible proxies (``prompt is too long``),
    llama.cpp (``exceeds the available context size``), vLLM (``This model's maximum context
    length is ... However, you requested ...``), OpenRouter (``maximum context length``,
    ``context length exceeded``) and a few others. Rate-limit messages are never overflows.
    """
    if not text:
        return False
    overflow, rate_limit = _patterns()
    if rate_limit.search(text):
        return False
    return overflow.search(text) is not None


def is_context_overflow_code(code: object) -> bool:
    """True when an error's ``code`` field names a context overflow (``context_length_exceeded``)."""
    return isinstance(code, str) and code.strip().lower() in OVERFLOW_CODES


# The limit a provider names in its overflow error, when it names one: Anthropic ("prompt is too
# long: 210097 tokens > 200000 maximum"), OpenAI and vLLM ("maximum context length is 8192
# tokens"), OpenRouter ("This endpoint's maximum context length is N tokens"), Mistral ("too large
# for model with N maximum context length"), xAI ("maximum prompt length is N").
_STATED_LIMITS = (
    r"prompt is too long:\s*\d+\s*tokens?\s*>\s*(\d+)\s*maximum",
    r"maximum context length is (\d+)\s*tokens",
    r"too large for model with (\d+) maximum context length",
    r"maximum prompt length is (\d+)",
    r"context window of (\d+)\s*tokens",
)


def stated_limit(text: str | None) -> int | None:
    """The context limit an overflow error states, in tokens (None: it states none)."""
    if not text or not is_context_overflow_message(text):
        return None
    for pattern in _STATED_LIMITS:  # (only overflow errors get here: re's cache compiles once)
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            value = int(match.group(1))
            return value if value > 0 else None
    return None
