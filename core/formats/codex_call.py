"""The model call a Codex rollout is read into: the model-side items of one response
(:class:`ModelCall`), emitted as one assistant message when the next input closes it."""

from __future__ import annotations

import msgspec

from core.model.session import ToolCall


def joined(texts: list[str]) -> str:
    """The non-empty ``texts`` joined by blank lines (one text, the usual case: as it is; none,
    as often: the empty string without a comprehension's call)."""
    if len(texts) == 1:
        return texts[0]
    if not texts:
        return ""
    return "\n\n".join([t for t in texts if t])


class ModelCall(msgspec.Struct, gc=False):
    """The model-side items of one response, until the next input closes it.

    A struct (made in one C call, once per model call), untracked by the garbage collector (its
    lists hold strings and tool calls, never a cycle)."""

    id: str
    line: int
    offset: int
    timestamp: str | None
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    server_calls: set[str] | None = None
    """The ids of the calls the server runs (no output expected); None: none."""
    reasoning_tokens: int = 0
    """Codex's estimate of this call's encrypted reasoning items."""
    redacted: int = 0
    """Reasoning items whose encrypted content was redacted from the file."""
