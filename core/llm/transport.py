"""Reading an answer off the wire: bytes counted against a cap, lines split here, failures named.

The live summariser reads every response body through :class:`CappedBody`, never through the
SDK's ``read()`` or ``iter_lines()``: those hold a whole body (or a whole line) before anyone can
look at its size, and a server that sends 100 MB would have it all in memory first. Here each
chunk is counted as it arrives and the read stops as soon as the total passes the cap
(:class:`AnswerTooLarge`); the count also says how far an answer got when its connection drops.

:func:`transport_reason` turns the exception chain of a failed connection into the few words a
person needs ("connection refused", "connection reset by peer", "the server closed the
connection before the end of the answer"), skipping exceptions that were merely being handled
nearby when it happened.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any


class AnswerTooLarge(Exception):
    """The body passed the cap; ``received`` bytes had arrived when the read stopped."""

    def __init__(self, received: int, cap: int) -> None:
        super().__init__(f"{received:,} bytes received, more than the cap of {cap:,}")
        self.received = received
        self.cap = cap


class CappedBody:
    """The body of one response, read chunk by chunk with a running byte count."""

    def __init__(self, response: Any, max_bytes: int) -> None:
        self._response = response
        self.max_bytes = max_bytes
        self.received = 0
        """Bytes read so far (after content decoding)."""

    def declared_length(self) -> int | None:
        """The Content-Length the server announced, if any."""
        try:
            value = self._response.headers.get("content-length")
            return int(value) if value is not None else None
        except (AttributeError, TypeError, ValueError):
            return None

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's chunks; raises :class:`AnswerTooLarge` once they pass the cap."""
        declared = self.declared_length()
        if declared is not None and declared > self.max_bytes:
            raise AnswerTooLarge(declared, self.max_bytes)
        async for chunk in self._response.iter_bytes():
            self.received += len(chunk)
            if self.received > self.max_bytes:
                raise AnswerTooLarge(self.received, self.max_bytes)
            yield chunk

    async def read(self, progress: Callable[[], None] | None = None) -> bytes:
        """The whole body (within the cap); ``progress`` is called as each chunk arrives."""
        parts = []
        async for chunk in self.chunks():
            parts.append(chunk)
            if progress is not None:
                progress()
        return b"".join(parts)

    async def lines(self) -> AsyncIterator[str]:
        """The body's lines without their line breaks (``\\r\\n``, ``\\n`` or ``\\r``), decoded as
        UTF-8; a last line without a break is yielded too. Only the new chunk is searched for
        breaks, so a long line costs its length once, not once per chunk."""
        buffer = bytearray()
        after_cr = False
        async for chunk in self.chunks():
            if after_cr and chunk.startswith(b"\n"):
                chunk = chunk[1:]  # the second half of a \r\n split between two chunks
            after_cr = chunk.endswith(b"\r")
            buffer += chunk
            last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
            if last < 0:
                continue
            cut = len(buffer) - len(chunk) + last + 1
            complete = bytes(buffer[:cut])
            del buffer[:cut]
            for line in complete.splitlines():
                yield line.decode("utf-8", "replace")
        if buffer:
            yield bytes(buffer).decode("utf-8", "replace")


# -- naming a transport failure ----------------------------------------------------------------

_CLOSED_EARLY = (
    "peer closed connection",
    "incomplete chunked read",
    "server disconnected",
    "connection closed",
)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first: its ``__cause__``, else an exception it wraps
    as an argument, else its ``__context__`` when that is a failure of the same family (an
    ``OSError`` or a transport error). Any other implicit context (an exception that was merely
    being handled when this one happened, such as the ``RuntimeError`` of a
    ``get_running_loop()`` probe) is no cause."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        context = None if current.__suppress_context__ else current.__context__
        wrapped = next((arg for arg in current.args if isinstance(arg, BaseException)), None)
        if current.__cause__ is not None:
            current = current.__cause__
        elif wrapped is not None:  # httpcore wraps the socket's error: ConnectError(OSError(…))
            current = wrapped
        elif isinstance(context, OSError) or _is_transport(context):
            current = context
        else:
            current = None
    return chain


def _is_transport(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TransportError", "NetworkError", "ProtocolError", "TimeoutException"})


def _os_reason(exc: OSError) -> str | None:
    if isinstance(exc, ssl.SSLError):  # its errno is OpenSSL's, not the system's (1 ≠ EPERM)
        return _tls_reason(exc)
    if isinstance(exc, socket.gaierror):
        return f"the host name could not be resolved ({exc.strerror or exc})"
    if isinstance(exc, TimeoutError) or exc.errno is None:
        return None
    try:
        text = os.strerror(exc.errno)
    except ValueError:
        return None
    return text[:1].lower() + text[1:] if text else None


def _tls_reason(exc: ssl.SSLError) -> str:
    """What a TLS failure means, in a few words (``wrong version number``: the other end does
    not speak TLS, e.g. plain HTTP or garbage on an https:// URL)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = exc.verify_message or exc.reason or "verification failed"
        return f"the server's TLS certificate was refused ({detail})"
    reason = str(exc.reason or "").replace("_", " ").lower()
    if "wrong version number" in reason or "record layer failure" in reason:
        return f"the TLS handshake failed: the server does not speak TLS ({reason})"
    return f"the TLS handshake failed ({reason or exc.__class__.__name__})"


def transport_reason(exc: BaseException) -> str:
    """A few words for why a connection failed: the operating system's reason when one is in
    the chain ("connection refused"), else what the HTTP layer said, else the error's class."""
    chain = _chain(exc)
    for link in reversed(chain):  # innermost first: the socket error, when there is one
        if isinstance(link, OSError):
            reason = _os_reason(link)
            if reason:
                return reason
    for link in reversed(chain):
        text = " ".join(str(link).split())
        lowered = text.lower()
        if any(marker in lowered for marker in _CLOSED_EARLY):
            return "the server closed the connection before the end of the answer"
        if "timed out" in lowered or "timeout" in type(link).__name__.lower():
            return "timed out"
    for link in reversed(chain):
        text = " ".join(str(link).split())
        if text and not isinstance(link, RuntimeError):
            return text
    return type(chain[-1]).__name__
