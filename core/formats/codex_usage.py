"""How the loader of Codex rollouts (:mod:`core.formats.codex`) reads the usage of an
``event_msg/token_count`` line: the counts it checks, a copy Codex wrote again, and the line
that marks the context as full without a request."""

from __future__ import annotations

from typing import Any

import orjson
from msgspec import Raw

from core.formats.codex_typed import TokenUsage
from core.model.read_numbers import as_int

USAGE_COUNTS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
"""The counts of a ``last_token_usage`` the loader reads (checked where the line is read)."""


def same_usage(a: Any, b: Any) -> bool:
    """Two usage objects are equal, each read the plain way (an object) or typed (a
    :class:`TokenUsage`, or the raw text of a total: parsed when two texts differ, as the
    plain read parses them)."""
    if type(a) is type(b) and (type(a) is not Raw or a == b):
        return bool(a == b)
    return bool(_plain(a) == _plain(b))


def _plain(usage: Any) -> Any:
    """A usage as the plain read holds it (a raw text that does not parse: as it is)."""
    if isinstance(usage, TokenUsage):
        return usage.as_dict()
    if type(usage) is Raw:
        try:
            return orjson.loads(bytes(usage))
        except orjson.JSONDecodeError:
            return usage
    return usage


def marks_full(info: dict[str, Any], last: dict[str, Any]) -> bool:
    """Newer Codex marks a full context with ``last_token_usage`` = the window as input and
    total and nothing else (``fill_to_context_window``): no request was made."""
    window = info.get("model_context_window")
    return (
        type(window) is int
        and window > 0
        and as_int(last.get("input_tokens")) == window
        and as_int(last.get("total_tokens")) == window
        and not as_int(last.get("output_tokens"))
        and not as_int(last.get("cached_input_tokens"))
    )
