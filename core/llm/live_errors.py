"""The pieces of the live summariser that need no client: the signals its attempts raise
(a failure worth retrying, a parameter the server refused), what a failure's cause chain says,
``Retry-After``, and how a URL or a server's message is shown (never a password or a key).
:mod:`core.llm.live` uses them."""

from __future__ import annotations

import email.utils
import ipaddress
import re
import time
from typing import Any, Literal
from urllib.parse import urlsplit

MAX_DETAIL_CHARS = 240
REDACTED = "[redacted]"

# Exception class names (anywhere in the cause chain) meaning "never reached the server".
UNREACHABLE_CAUSES = frozenset(
    {"ConnectError", "ConnectTimeout", "gaierror", "ConnectionRefusedError", "UnsupportedProtocol"}
)
# Exception class names (anywhere in the MRO) of a transport failure while reading a body, in
# httpx, httpx2, httpcore and anyio alike.
TRANSPORT_ERRORS = frozenset(
    {
        "RequestError",
        "TransportError",
        "NetworkError",
        "ProtocolError",
        "TimeoutException",
        "EndOfStream",
        "BrokenResourceError",
        "ClosedResourceError",
        "SSLError",
    }
)
# Looks like a secret key; redacted from server messages even when it is not ours.
KEY_LIKE_RE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-*]{8,}|\bBearer\s+\S+", re.IGNORECASE)

RetryKind = Literal["rate_limit", "server", "dropped"]


class Retryable(Exception):
    """An attempt failed in a way worth retrying (429, 5xx, a dropped connection)."""

    def __init__(
        self,
        kind: RetryKind,
        detail: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind: RetryKind = kind
        self.detail = detail
        self.status = status
        self.retry_after_s = retry_after_s


class ParameterRejected(Exception):
    """The server refused one optional parameter; the request is adapted and resent once."""

    def __init__(self, parameter: str, detail: str) -> None:
        super().__init__(detail)
        self.parameter = parameter


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def safe_url(url: str) -> str:
    """``url`` without any user:password part (never shown)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{parts.scheme}://{netloc}{parts.path}".rstrip("/")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds a server asks to wait, from ``retry-after-ms`` or ``Retry-After`` (seconds or a date)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def cause_names(exc: BaseException) -> set[str]:
    names: set[str] = set()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names.add(type(current).__name__)
        current = current.__cause__ or current.__context__
    return names


def one_line(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    line = " ".join(text.split())
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return line
