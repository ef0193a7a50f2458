"""One streamed summary request's plumbing for :mod:`core.llm.live`: the attempt across its
retries, the first-byte and stall deadlines of a streamed answer, and the relay that passes
streamed text on without repeating what a retry sends again."""

from __future__ import annotations

import asyncio
from typing import Any

from core.llm.protocol import DeltaCallback
from core.llm.transport import CappedBody


class Attempt:
    """One summary request across its attempts: the delta relay, the retries so far and the body
    being read (for how far an answer got when the deadline passed)."""

    def __init__(self, relay: DeltaRelay) -> None:
        self.relay = relay
        self.retries = 0
        self.body: CappedBody | None = None
        self.out_of_time = False
        """The request ended because its deadline passed (or a retry's wait would pass it)."""

    def start(self, response: Any, max_bytes: int) -> CappedBody:
        """The body of a new response (headers received)."""
        self.body = CappedBody(response, max_bytes)
        return self.body

    def progress(self) -> str:
        """How far the last attempt got, in a few words."""
        if self.body is None:
            return "no answer had started"
        return f"{self.body.received:,} bytes of the answer had arrived"


class StreamGuard:
    """The deadlines of one attempt: the first byte (the response's headers) within
    ``first_byte_s`` of sending, then each line (or, for an answer not streamed, each chunk of
    the body) within ``stall_s`` of the one before. Entered (``async with guard``) around the
    request; one :class:`asyncio.Timeout` (:attr:`timeout`) ends it, and :meth:`reason` says
    which deadline passed. ``first_byte_s`` None: no first-byte deadline (a server answering in
    one piece sends its headers only once the answer is written, so only the request's deadline
    bounds the wait for them).

    A line only notes the time it came (:meth:`progress`, a streamed summary's hundreds of
    lines): a watchdog wakes when the stall deadline of the last line it knew of is due, and
    either sets it again from the latest line or, when none came since, lets the timeout
    pass. Moving the timeout at every line would cancel and make a timer each time (a sixth of
    a streamed request's client time)."""

    def __init__(self, first_byte_s: float | None, stall_s: float) -> None:
        self.first_byte_s = first_byte_s
        self.stall_s = stall_s
        self.timeout = asyncio.timeout(first_byte_s)
        self.started = False
        """The headers came: the stall deadline is the one running."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last = 0.0
        """The loop's time of the last line (of the headers, before the first line)."""
        self._watchdog: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> StreamGuard:
        await self.timeout.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        await self.timeout.__aexit__(*exc_info)

    def first_byte(self) -> None:
        """The response's headers arrived: the first-byte deadline ends, the stall one starts."""
        self.started = True
        loop = self._loop = asyncio.get_running_loop()
        self._last = loop.time()
        self.timeout.reschedule(None)
        self._watchdog = loop.call_at(self._last + self.stall_s, self._wake)

    def progress(self) -> None:
        """A line of the answer arrived: the stall deadline counts from now."""
        assert self._loop is not None, "progress before first_byte"
        self._last = self._loop.time()

    def _wake(self) -> None:
        """The stall deadline of the last line known is due: set it again from the latest line,
        or, when no line came since, let the timeout pass (at the deadline it names)."""
        assert self._loop is not None
        due = self._last + self.stall_s
        if due <= self._loop.time():
            self._watchdog = None
            self.timeout.reschedule(due)  # (in the past: the timeout passes now)
        else:
            self._watchdog = self._loop.call_at(due, self._wake)

    def reason(self, attempt: Attempt) -> str:
        """Which deadline ended the attempt, in one line."""
        if not self.started:
            return (
                f"no answer began within {self.first_byte_s or 0:g}s of the request "
                "(first_byte_timeout_s, --llm-first-byte-timeout)"
            )
        return (
            f"the answer stalled: nothing new for {self.stall_s:g}s "
            f"(stall_timeout_s, --llm-stall-timeout; {attempt.progress()})"
        )


class CallbackError(Exception):
    """``on_delta`` raised: passed to the caller as it is, never taken for a transport failure."""

    def __init__(self, original: Exception) -> None:
        super().__init__(str(original))
        self.original = original


class DeltaRelay:
    """Passes streamed pieces on, without repeating text already shown when a retry resends it.

    After a dropped stream the retried request usually writes the same words again; only what
    goes beyond the text already shown is passed on. If the retry diverges from what was shown,
    nothing more is passed on and the caller must show :attr:`SummaryResult.text` (always the
    complete answer of the attempt that succeeded).
    """

    def __init__(self, callback: DeltaCallback | None) -> None:
        self._callback = callback
        self._shown: list[str] = []
        self._shown_len = 0
        self._shown_text: str | None = ""
        self._attempt_len = 0
        self._diverged = False

    def start_attempt(self) -> None:
        self._attempt_len = 0
        self._diverged = False

    def _shown_str(self) -> str:
        if self._shown_text is None:
            self._shown_text = "".join(self._shown)
        return self._shown_text

    def feed(self, piece: str) -> None:
        if self._callback is None or not piece or self._diverged:
            self._attempt_len += len(piece)
            return
        start = self._attempt_len
        self._attempt_len += len(piece)
        if start >= self._shown_len:  # the common case: beyond everything shown so far
            self._emit(piece)
            return
        shown = self._shown_str()
        overlap = shown[start : start + len(piece)]
        if not piece.startswith(overlap):
            self._diverged = True
            return
        rest = piece[len(overlap) :]
        if rest:
            self._emit(rest)

    def _emit(self, text: str) -> None:
        assert self._callback is not None
        self._shown.append(text)
        self._shown_len += len(text)
        self._shown_text = None
        try:
            self._callback(text)
        except Exception as exc:
            raise CallbackError(exc) from exc
