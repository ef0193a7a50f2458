"""What the mock LLM server reads from a request and the error answers it gives: the chat
messages of a request body, and the 400 of a context overflow (in the style of each kind of
server), the 429 and the 500 of its faults. :mod:`core.llm.mock_server` serves them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.llm.protocol import ChatMessage, ChatRole

if TYPE_CHECKING:
    from core.llm.mock_server import MockServerConfig, OverflowStyle


class Fault(Exception):
    """An error answer: status, JSON body and extra headers."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


def error_answer(
    status: int, message: str, kind: str, code: str | None = None, param: str | None = None
) -> Fault:
    return Fault(
        status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
    )


def overflow_fault(style: OverflowStyle, limit: int, tokens: int, max_tokens: int) -> Fault:
    """The 400 a server of ``style`` answers when the request exceeds its context."""
    if style == "anthropic":
        return Fault(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": f"prompt is too long: {tokens} tokens > {limit} maximum",
                },
            },
        )
    if style == "llamacpp":
        return Fault(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": tokens,
                    "n_ctx": limit,
                }
            },
        )
    if style == "vllm":
        return Fault(
            400,
            {
                "object": "error",
                "message": (
                    f"This model's maximum context length is {limit} tokens. However, you requested "
                    f"{tokens + max_tokens} tokens ({tokens} in the messages, {max_tokens} in the "
                    "completion). Please reduce the length of the messages or completion."
                ),
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        )
    if style == "openrouter":
        return Fault(
            400,
            {
                "error": {
                    "message": (
                        f"This endpoint's maximum context length is {limit} tokens. However, you "
                        f"requested about {tokens} tokens ({tokens} of text input). Please reduce "
                        "the length of either one."
                    ),
                    "code": 400,
                }
            },
        )
    return error_answer(
        400,
        f"This model's maximum context length is {limit} tokens. However, your messages resulted "
        f"in {tokens} tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        code="context_length_exceeded",
        param="messages",
    )


def status_fault(fault: str, config: MockServerConfig) -> Fault:
    """The 429 (with ``Retry-After``) or the 500 of a ``fail_429`` / ``fail_500`` fault."""
    if fault == "fail_500":
        return error_answer(
            500, "The server had an error while processing your request (mock).", "server_error"
        )
    wait = config.retry_after_s
    headers = {
        "Retry-After": str(max(0, math.ceil(wait))),
        "retry-after-ms": str(round(wait * 1000)),
    }
    body = error_answer(
        429, "Rate limit reached for requests (mock).", "requests", "rate_limit_exceeded"
    ).body
    return Fault(429, body, headers)


def content_text(content: Any) -> str:
    """A message's text, whether ``content`` is a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    raise ValueError("message content must be a string or a list of parts")


ROLES: dict[str, ChatRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "assistant",
    "function": "assistant",
}


def chat_messages(raw: Any) -> list[ChatMessage]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("'messages' must be a non-empty list")
    messages = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"messages[{index}] must be an object")
        role = ROLES.get(str(item.get("role")))
        if role is None:
            raise ValueError(f"messages[{index}].role {item.get('role')!r} is not supported")
        messages.append(ChatMessage(role=role, content=content_text(item.get("content"))))
    return messages


def split_prompt(messages: list[ChatMessage]) -> tuple[list[ChatMessage], str]:
    """(head, prompt): the last user message is the prompt, every other message the head."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[:index] + messages[index + 1 :], messages[index].content
    return messages, ""


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]
