"""The context window of a session, from evidence, with where it came from.

A wrong window makes every verdict built on it confidently wrong: a session reported as
overflowing where its calls succeeded, a compaction called "missed" because the threshold was
worked out for the wrong model. So the window is taken from the best evidence there is, and then
checked against what the recording shows:

1. ``--window N`` (``user``);
2. what the session records: Codex writes its window into the rollout (``recorded``), a provider's
   overflow error often states the limit ("prompt is too long: 210097 tokens > 200000 maximum");
3. the table of :mod:`core.agents.windows`, by provider, agent and model (``table``);
4. the recording itself: a call that went through with a larger prompt than the table's figure
   means the table's window is not the one the session had. (A recorded compaction's own count is
   not evidence: the replay is scored on those compactions, so nothing it uses may read them.)
   The smallest window the evidence allows is used instead — the model's larger variant when it
   has one (Claude's 1M, GPT-5's opt-in window), else the smallest common window that holds what
   was recorded — and ``window_source`` becomes ``inferred``;
5. a model the table does not know never stops loading: the window is inferred from the largest
   prompt recorded, with a warning; with no usage at all it stays unknown.

``Session.window_evidence`` says in one sentence why the window is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.agents.overflow_errors import is_context_overflow_message, stated_limit
from core.agents.windows import (
    ONE_MILLION,
    ModelLimits,
    lookup_limits,
    normalize_provider,
    prompt_window,
)
from core.model.read_numbers import MAX_COUNT
from core.model.session import (
    Diagnostic,
    Role,
    Session,
    Severity,
    SourceFormat,
    WindowSource,
)

COMMON_WINDOWS = (
    8_192,
    16_384,
    32_768,
    65_536,
    128_000,
    131_072,
    200_000,
    256_000,
    262_144,
    272_000,
    400_000,
    1_000_000,
    1_048_576,
    1_050_000,
    2_000_000,
)
"""Context windows models are sold with: an inferred window is the smallest of these that holds
what the recording shows (or the evidence itself, above them all)."""

_AGENTS = {
    SourceFormat.CLAUDE_CODE: "claude-code",
    SourceFormat.CODEX: "codex",
    SourceFormat.PI: "pi",
    SourceFormat.OPENCODE: "opencode",
    SourceFormat.GEMINI_CLI: "gemini-cli",
    SourceFormat.QWEN_CODE: "qwen-code",
}


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the recording says about the window, whatever table row is guessed."""

    largest_prompt: int = 0
    """The largest prompt of a call that went through (no overflow error, no length stop)."""
    largest_prompt_at: str = ""
    """Where that call is (``at line N`` of the file, else ``at message N``)."""
    stated: int | None = None
    """The limit a provider's overflow error states."""
    stated_message: int | None = None
    """The index of the message whose error states that limit (shown as ``at message N``)."""
    refused: int | None = None
    """The smallest request a provider refused as too long without naming its limit (at least
    the context of the call before it: the request held that and more)."""
    refused_at: str = ""
    """Where that refused request is, written as ``largest_prompt_at`` is."""
    larger_after_refusal: int = 0
    """The largest prompt that went through after that refusal."""

    @property
    def lower_bound(self) -> int:
        """The window is at least this large."""
        return self.largest_prompt

    @property
    def upper_bound(self) -> int | None:
        """The window is at most this large: the smallest request refused as too long, unless a
        larger one went through after it (then the refusal bounds nothing). None: no bound."""
        if self.refused is None or self.larger_after_refusal > self.refused:
            return None
        return self.refused

    def bounds_text(self) -> str:
        """Both bounds in words: "between 371,312 (…) and 371,566 (…)"."""
        upper = self.upper_bound
        below = f"at least {self.lower_bound:,} ({self.lower_bound_text()})"
        if upper is None:
            return below
        return (
            f"{below} and at most {upper:,} (the provider refused a request of at least "
            f"{upper:,} tokens {self.refused_at} as too long)"
        )

    def lower_bound_text(self) -> str:
        """Where the lower bound comes from, in words."""
        return (
            f"a call {self.largest_prompt_at} sent {self.largest_prompt:,} tokens and went through"
        )


def gather(session: Session) -> Evidence:
    """The window evidence of ``session``: prompts that went through, limits stated by overflow
    errors, requests refused as too long (never the recorded compactions' own counts).

    A session none of whose calls records an error (nearly all) has no stated limit and no
    refusal: its evidence is its largest prompt, found over a column of the calls' prompts;
    the others are read call by call (:func:`gather_each`, the same evidence)."""
    assistant = Role.ASSISTANT
    calls = [m for m in session.messages if m.role is assistant and not m.sidechain]
    if any(m.error for m in calls):
        return gather_each(session)
    # Each call's prompt, 0 for a call that did not go through or records no usage (no such
    # call can be the largest: the largest is above 0).
    prompts = [
        usage.prompt_tokens if (usage := m.usage) is not None and m.stop_reason != "length" else 0
        for m in calls
    ]
    largest = max(prompts, default=0)
    if largest <= 0:
        return Evidence()
    first = calls[prompts.index(largest)]
    return Evidence(largest, _where(first.source_line, first.index))


def gather_each(session: Session) -> Evidence:
    """:func:`gather`, call by call: overflow errors, the limits they state and the requests
    refused, in order."""
    largest, largest_at = 0, ""
    stated, stated_at = None, None
    refused: int | None = None
    refused_at = ""
    after_refusal = 0
    previous = 0  # the context after the last call that went through
    for message in session.messages:
        if message.role is not Role.ASSISTANT or message.sidechain:
            continue
        limit = stated_limit(message.error)
        if limit is not None and stated is None:
            stated, stated_at = limit, message.index
        overflowed = is_context_overflow_message(message.error or "")
        usage = message.usage
        asked = max(previous, usage.prompt_tokens if usage is not None and overflowed else 0)
        if overflowed and limit is None and asked and (refused is None or asked < refused):
            refused, refused_at = asked, _where(message.source_line, message.index)
            after_refusal = 0
        if usage is None or overflowed or message.stop_reason == "length":
            continue
        prompt = usage.prompt_tokens
        previous = usage.context_after_reply
        if refused is not None:
            after_refusal = max(after_refusal, prompt)
        if prompt > largest:
            largest, largest_at = prompt, _where(message.source_line, message.index)
    return Evidence(
        largest,
        largest_at,
        stated,
        stated_at,
        refused,
        refused_at,
        after_refusal,
    )


def _where(line: int | None, message_index: int) -> str:
    return f"at line {line}" if line is not None else f"at message {message_index}"


def resolve_window(session: Session, user_window: int | None = None) -> None:
    """Set ``session``'s window, its source and the sentence that explains it (see the module
    docstring); also the output and input limits the table knows for the model.

    A ``user_window`` below 1 is refused (``ValueError``); a recorded window below 1 is no
    window at all: it is set aside with a warning and the window found as if none was recorded.
    """
    if user_window is not None and user_window < 1:
        raise ValueError(
            f"a context window must be a positive number of tokens, not {user_window:,}"
        )
    _set_aside_impossible(session)
    agent = _AGENTS.get(session.format)
    row, wants_1m = lookup_limits(session.model, session.provider, agent, session.agent_version)
    _fill_limits(session, row)
    if user_window is not None:  # (no evidence read: the window is given)
        _set(session, user_window, "user", "given with --window")
        return
    evidence = gather(session)
    if session.window_source == "recorded" and session.context_window:
        if evidence.lower_bound > session.context_window:
            session.window_evidence = (
                f"recorded by the agent; note that {evidence.lower_bound_text()}, more than it"
            )
        return
    if evidence.stated is not None:
        _set(
            session,
            evidence.stated,
            "recorded",
            f"stated by the provider's overflow error at message {evidence.stated_message}",
        )
        return
    if row is not None:
        if wants_1m and row.supports_1m:
            why = f"the model id {session.model} asks for the 1M-token context"
            _from_table(session, row, ONE_MILLION, evidence, why)
        else:
            _from_table(session, row, prompt_window(row), evidence)
        return
    _without_table(session, evidence)


def _set_aside_impossible(session: Session) -> None:
    """A window of 0 or less (a damaged header) would make every call "overflow": drop it."""
    window = session.context_window
    if window is None or window >= 1:
        return
    _note(
        session,
        Severity.WARNING,
        f"the session records a context window of {window:,} tokens, which no model has; "
        "it was ignored",
    )
    session.context_window = None
    session.window_source = "unknown"
    session.window_evidence = None


def _fill_limits(session: Session, row: ModelLimits | None) -> None:
    if row is None:
        return
    if session.max_output_tokens is None:
        session.max_output_tokens = row.max_output_tokens
    if row.input_limit is not None and "input_limit" not in session.metadata:
        session.metadata["input_limit"] = row.input_limit


def _from_table(
    session: Session, row: ModelLimits, table: int, evidence: Evidence, why: str | None = None
) -> None:
    """The table's window, unless the recording shows more than it."""
    lower = evidence.lower_bound
    provider = normalize_provider(session.provider)
    where = f"{session.model}" + (f" on {provider}" if provider else "")
    if lower <= table:
        text = why or f"the table's window for {where} ({row.source})"
        if table < row.context_window:
            text = (
                f"the input limit {session.provider} sets for {session.model} ({row.source}): "
                f"prompts are capped at {table:,} of the model's {row.context_window:,}"
            )
        if evidence.refused is not None and evidence.refused < table:
            _refused(session, table, text, evidence)
            return
        _set(session, table, "table", text)
        return
    upper = evidence.upper_bound
    if upper is not None and upper >= lower:
        # An overflow error bounds the window from above: the smallest common window would
        # be larger than a request the provider refused, so it cannot be the window.
        fits = [w for w in COMMON_WINDOWS if lower <= w <= upper]
        window = fits[-1] if fits else upper
        text = (
            f"the window is {evidence.bounds_text()}; the table's {table:,} for {where} is "
            f"below what went through, so the window is taken as {window:,}"
        )
        _set(session, window, "inferred", text)
        _note(session, Severity.INFO, text)
        return
    larger = row.larger_window or (ONE_MILLION if row.supports_1m else None)
    window = larger if larger is not None and larger >= lower else smallest_window(lower)
    variant = "the model's larger window" if window == larger else "the smallest common window"
    text = (
        f"{evidence.lower_bound_text()}, more than the table's {table:,} for {where}: "
        f"{variant} that holds it is {window:,}"
    )
    _set(session, window, "inferred", text)
    _note(session, Severity.INFO, text)


def _refused(session: Session, table: int, text: str, evidence: Evidence) -> None:
    """A provider refused, as too long, a request smaller than the table's window."""
    refused = evidence.refused or 0
    seen = f"the provider refused a request of at least {refused:,} tokens {evidence.refused_at}"
    if evidence.larger_after_refusal > refused:
        # A larger request went through afterwards: the refusal does not bound the window.
        _set(
            session,
            table,
            "table",
            f"{text}; {seen}, yet a later call sent {evidence.larger_after_refusal:,}, so that "
            "refusal does not bound the window",
        )
        return
    fits = [w for w in COMMON_WINDOWS if evidence.lower_bound <= w <= refused]
    window = fits[-1] if fits else refused
    inferred = (
        f"{seen}, below the table's {table:,}: the window is {evidence.bounds_text()}, taken "
        f"as {window:,}, the largest that holds every request that went through and is under "
        "the refused one"
    )
    _set(session, window, "inferred", inferred)
    _note(session, Severity.INFO, inferred)


def _without_table(session: Session, evidence: Evidence) -> None:
    """No table row: the agent's default, else the recording's own largest prompt."""
    default = session.metadata.get("default_window")
    if isinstance(default, int) and default > 0 and evidence.lower_bound <= default:
        _set(session, default, "table", f"the agent's default window for {session.model}")
        return
    if evidence.lower_bound <= 0:
        session.context_window = None
        session.window_source = "unknown"
        session.window_evidence = (
            f"model {session.model or '(not recorded)'} is not in the table and no call recorded "
            "its usage"
        )
        return
    window = smallest_window(evidence.lower_bound)
    text = (
        f"model {session.model or '(not recorded)'} is not in the table; {evidence.lower_bound_text()}, "
        f"so the window is taken as {window:,}, the smallest common window that holds it"
    )
    upper = evidence.upper_bound
    if upper is not None and evidence.lower_bound <= upper < window:
        fits = [w for w in COMMON_WINDOWS if evidence.lower_bound <= w <= upper]
        window = fits[-1] if fits else upper
        text = (
            f"model {session.model or '(not recorded)'} is not in the table; the window is "
            f"{evidence.bounds_text()}, so it is taken as {window:,}"
        )
    _set(session, window, "inferred", text)
    _note(session, Severity.WARNING, text)


def _note(session: Session, severity: Severity, text: str) -> None:
    """A ``window-inferred`` diagnostic, once (a session written by ``convert`` carries it)."""
    if not any(d.code == "window-inferred" and d.message == text for d in session.diagnostics):
        session.diagnostics.append(
            Diagnostic.model_construct(
                line=None, severity=severity, code="window-inferred", message=text
            )
        )


def smallest_window(tokens: int) -> int:
    """The smallest common window that holds ``tokens`` (``tokens`` itself above them all, up
    to the largest count a session holds: a figure above it is damage, see ``core.model.read_numbers``)."""
    return next((w for w in COMMON_WINDOWS if w >= tokens), min(tokens, MAX_COUNT))


def _set(session: Session, window: int, source: WindowSource, evidence: str) -> None:
    session.context_window = window
    session.window_source = source
    session.window_evidence = evidence
