"""One sub-agent a session started, as its parent's ``analyze`` report lists it: a module of its
own, so that ``ctxscope analyze`` imports it without the fleet's rows
(:mod:`core.fleet.session_rows`)."""

from core.model.fastmodel import Documented


class SubagentInfo(Documented):
    """One sub-agent a session started, with its own figures (loaded and replayed on its own)."""

    id: str | None
    """The sub-agent session's id (None when it could not be loaded)."""
    path: str
    """Where it is: a file, ``<events.jsonl>#<agentId>`` or ``<opencode.db>#<id>``."""
    agent: str | None
    """The format it was loaded as."""
    model: str | None
    """Its main model."""
    calls: int
    """Its own model calls."""
    peak_tokens: int | None
    """Its fullest call's context (recorded, else estimated)."""
    compactions: int
    """Its own recorded compactions."""
    started_at: str | None = None
    """When it started (ISO, UTC)."""
    ended_at: str | None = None
    """When its last message was written (ISO, UTC)."""
    parent_calls: list[int] | None = None
    """The parent's calls it ran between: ``[first, last]`` (0-based call indices)."""
    compaction_of: int | None = None
    """For a Claude Code compaction run (``agent-acompact-*``): the index of the parent's
    compaction it wrote the summary of."""
    compaction_prompt: str | None = None
    """For a compaction run: the instruction it was given (its last user message; the
    conversation it summarised came before it, ``peak_tokens`` in all)."""
    compaction_answer: str | None = None
    """For a compaction run: what it answered (the summary)."""
    error: str | None = None
    """Why it could not be loaded or replayed."""
