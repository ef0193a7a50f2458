"""The summariser protocol: what compaction asks of an LLM, and the errors it can get back.

Both implementations depend on this module and nothing else of the package:

* :class:`core.llm.mock.MockSummarizer` — offline and deterministic (the default); it builds the
  template's sections from the head itself.
* :class:`core.llm.live.OpenAISummarizer` — any OpenAI-compatible chat-completions endpoint,
  through the ``openai`` SDK.

Only :func:`core.llm.factory.make_summarizer` knows them both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from core.model.session import Provenance

ChatRole = Literal["system", "user", "assistant"]


class ChatMessage(BaseModel):
    """One message of a summary request (plain chat format: the head is serialised as text)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    role: ChatRole
    content: str


class LLMUsage(BaseModel):
    """Tokens a summary request cost."""

    model_config = ConfigDict(defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    provenance: Provenance = Provenance.RECORDED
    """``recorded`` when the server reported usage, else ``counted``/``estimated`` here."""


class SummaryResult(BaseModel):
    """What a summariser returns: the summary text and what it cost."""

    model_config = ConfigDict(defer_build=True)

    text: str
    usage: LLMUsage
    model: str
    """Model that wrote it (``mock`` for the offline summariser)."""
    duration_s: float = 0.0
    """Wall time of the request(s)."""
    retries: int = 0
    """Requests retried after 429/5xx or a dropped stream."""


DeltaCallback = Callable[[str], None]
"""Called with each piece of text as a streamed summary arrives."""


@runtime_checkable
class Summarizer(Protocol):
    """Writes a summary of ``messages`` following ``prompt``.

    ``messages`` is the serialised head (and any previous summary); ``prompt`` is the template
    the summary must follow, sent as the last user message. Implementations are async and
    cancellable (cancelling the awaiting task abandons the request) and raise :class:`LLMError`
    subclasses with a one-line message the UI can show as it is.
    """

    name: str
    # An implementation may also say ``needs_event_loop = False`` (a class attribute): it awaits
    # nothing a loop must complete, so a replay runs its compactions without making one (an
    # absent attribute reads True).

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult: ...


class SizedRequest(Protocol):
    """A summary request whose size is known without building it."""

    def content_lengths(self, length: Callable[[str], int]) -> Sequence[int]:
        """``length`` of the content of each message of the request, in order (``length``
        adds up over joined text: characters, UTF-16 units or UTF-8 bytes)."""
        ...


@runtime_checkable
class OverflowProbe(Protocol):
    """A summariser that can tell, without being sent a request, that it would refuse it with
    :class:`ContextOverflowError` (the offline mock: its limit is a figure of the request's
    size). Once a request is refused, compaction asks it before each shorter head instead of
    building every request, and its refusal of the shortest head allowed is the error."""

    def refusal(self, request: SizedRequest, prompt: str) -> ContextOverflowError | None:
        """The :class:`ContextOverflowError` that :meth:`Summarizer.summarize` of ``request``
        and ``prompt`` would raise (the same words), or None when it would not (and do nothing
        else). A refusal follows the lengths: a request none of whose lengths is shorter than
        those of one refused is refused too (so a floor of a request's lengths refused says the
        request would be)."""
        ...


class LLMError(Exception):
    """A summary request failed; ``str(error)`` is one line, safe to show (no secrets)."""


class ContextOverflowError(LLMError):
    """The request did not fit the model's context window (compaction drops head messages and retries)."""


class AuthError(LLMError):
    """The endpoint refused the credentials."""


class ModelNotFoundError(LLMError):
    """The endpoint does not serve the requested model."""


class UnreachableError(LLMError):
    """The endpoint could not be reached (connection refused, DNS, timeout)."""


class MalformedResponseError(LLMError):
    """The endpoint answered with something that is not a chat completion."""


class RateLimitError(LLMError):
    """Still rate-limited (429) after every retry."""


class ServerError(LLMError):
    """Still failing with 5xx after every retry."""


class AnswerTooLargeError(MalformedResponseError):
    """The answer grew past the configured cap (``LLMConfig.max_answer_bytes``)."""


class StoppedCallingError(LLMError):
    """Not sent: the run's earlier summary requests failed too many times in a row
    (``LLMConfig.max_consecutive_failures``)."""
