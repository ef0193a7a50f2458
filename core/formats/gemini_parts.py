"""Gemini-style message parts and usage, as Gemini CLI and Qwen Code (a Gemini CLI fork) record
them: the pieces both loaders read the same way.

A Gemini ``Content`` is ``{role: user|model, parts: [...]}``; a part holds one of ``text``
(``thought: true`` marks reasoning), ``functionCall {id, name, args}`` or ``functionResponse
{id, name, response}``. A message's ``content`` may also be a bare string (Gemini CLI's own
records). Usage is the API's ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``,
``cachedContentTokenCount``, ``thoughtsTokenCount``, ``toolUsePromptTokenCount``,
``totalTokenCount``) or Gemini CLI's summary of it (``tokens {input, output, cached, thoughts,
tool, total}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.formats.base import SessionBuilder, as_str, as_text
from core.model.session import ToolCall, Usage, UsageConvention

STATE_SNAPSHOT_TAG = "<state_snapshot>"
"""What opens the summary Gemini CLI's (and Qwen Code's) compression writes: the first message
of the history that replaces the compressed one."""


def parts_of(content: Any) -> list[dict[str, Any]]:
    """The parts of a message's ``content``: a list of parts, one part, or a bare string."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, dict):
        if isinstance(content.get("parts"), list):
            return [p for p in content["parts"] if isinstance(p, dict)]
        return [content]
    if isinstance(content, list):
        out: list[dict[str, Any]] = []
        for item in content:
            if isinstance(item, str):
                out.append({"text": item})
            elif isinstance(item, dict):
                out.append(item)
        return out
    return []


def visible_text(parts: list[dict[str, Any]]) -> str:
    """The text parts that are not reasoning, joined with blank lines."""
    texts = [
        p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought") is not True
    ]
    return "\n\n".join(t for t in texts if t)


def thought_text(parts: list[dict[str, Any]]) -> str:
    """The reasoning parts (``thought: true``), joined with blank lines."""
    texts = [
        p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought") is True
    ]
    return "\n\n".join(t for t in texts if t)


def is_state_snapshot(parts: list[dict[str, Any]]) -> bool:
    """Whether the parts are a compression's summary (they hold a ``<state_snapshot>``)."""
    return any(STATE_SNAPSHOT_TAG in p["text"] for p in parts if isinstance(p.get("text"), str))


def function_calls(parts: list[dict[str, Any]], fallback_id: str) -> list[ToolCall]:
    """The ``functionCall`` parts as tool calls (a call without an id gets ``fallback_id-N``)."""
    calls: list[ToolCall] = []
    for part in parts:
        call = part.get("functionCall")
        if not isinstance(call, dict):
            continue
        call_id = as_str(call.get("id")) or f"{fallback_id}-{len(calls)}"
        calls.append(
            ToolCall(
                id=call_id, name=as_str(call.get("name")) or "tool", arguments=call.get("args")
            )
        )
    return calls


@dataclass(frozen=True, slots=True)
class FunctionResponse:
    """One ``functionResponse`` part: the result of a tool call as the model is sent it."""

    call_id: str | None
    name: str | None
    output: str
    is_error: bool


def function_responses(parts: list[dict[str, Any]]) -> list[FunctionResponse]:
    """The ``functionResponse`` parts, their output as the text the model reads."""
    found: list[FunctionResponse] = []
    for part in parts:
        response = part.get("functionResponse")
        if not isinstance(response, dict):
            continue
        body = response.get("response")
        output, is_error = response_output(body)
        found.append(
            FunctionResponse(
                call_id=as_str(response.get("id")),
                name=as_str(response.get("name")),
                output=output,
                is_error=is_error,
            )
        )
    return found


def response_output(body: Any) -> tuple[str, bool]:
    """The text of a function response (its ``output``, ``content`` or ``error``, else the whole
    response as JSON) and whether it is an error."""
    if isinstance(body, str):
        return body, False
    if isinstance(body, dict):
        for key in ("output", "content"):
            if isinstance(body.get(key), str):
                return body[key], False
        if isinstance(body.get("error"), str):
            return body["error"], True
    return as_text(body), False


@dataclass(frozen=True, slots=True)
class GeminiTokens:
    """One call's token figures, whichever of the two spellings recorded them."""

    prompt: int
    """The prompt as sent, cached tokens included (``promptTokenCount`` / ``tokens.input``)."""
    output: int
    cached: int
    thoughts: int
    tool: int
    total: int | None


_CLI_KEYS = ("input", "output", "cached", "thoughts", "tool", "total")
_API_KEYS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "cachedContentTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
    "totalTokenCount",
)
_TELEMETRY_KEYS = (
    "input_token_count",
    "output_token_count",
    "cached_content_token_count",
    "thoughts_token_count",
    "tool_token_count",
    "total_token_count",
)


def read_tokens(builder: SessionBuilder, line: int | None, record: Any) -> GeminiTokens | None:
    """The token figures of ``record`` (Gemini CLI's ``tokens``, the API's ``usageMetadata`` or a
    telemetry ``api_response`` event), each checked; None when it holds none."""
    if not isinstance(record, dict):
        return None
    for keys in (_CLI_KEYS, _API_KEYS, _TELEMETRY_KEYS):
        if keys[0] in record:
            prompt, output, cached, thoughts, tool, total = (
                builder.optional_count(line, key, record.get(key)) for key in keys
            )
            return GeminiTokens(
                prompt=prompt or 0,
                output=output or 0,
                cached=min(cached or 0, prompt or 0),
                thoughts=thoughts or 0,
                tool=tool or 0,
                total=total,
            )
    return None


def usage_of(tokens: GeminiTokens) -> Usage:
    """A :class:`Usage` in the Gemini convention: the prompt before the reply is the context.

    ``output`` holds everything generated: the Gemini API counts thoughts apart from the
    candidates (``total = prompt + candidates + thoughts + tool``); an OpenAI-compatible
    provider behind Qwen Code already counts them in the output (``total = prompt + output``),
    which the total tells apart.
    """
    generated = tokens.output
    if tokens.total is None or tokens.total >= tokens.prompt + tokens.output + tokens.thoughts:
        generated += tokens.thoughts
    return Usage(
        input=tokens.prompt - tokens.cached,
        cache_read=tokens.cached,
        output=generated,
        reasoning=tokens.thoughts,
        total=tokens.total or None,
        convention=UsageConvention.GEMINI,
    )
