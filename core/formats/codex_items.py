"""What a Codex history item says, read from its Responses-API shape: the text of a message or
of a tool output, whether the tool failed, a tool call's name and arguments, and whether a
user-role message is context Codex injected rather than the user's words."""

from __future__ import annotations

from typing import Any

import orjson

from core.formats.base import as_text

# User-role messages Codex injects itself (context, not typed by the user).
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<INSTRUCTIONS>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "<personality_spec>",
    "<turn_aborted>",
    "<user_shell_command>",
)


def content_text(content: Any) -> str:
    """Text of a Responses-API ``content`` list (input_text / output_text / images)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    if len(content) == 1:  # the usual case: one text item
        item = content[0]
        if isinstance(item, dict) and item.get("type") in ("input_text", "output_text"):
            text = item.get("text")
            if isinstance(text, str):
                return text
    parts: list[str] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("input_text", "output_text", "text", "refusal"):
            text = item.get("text", item.get("refusal"))
            if isinstance(text, str):
                parts.append(text)
        elif kind in ("input_image", "image"):
            parts.append("[image]")
        elif kind == "input_file":
            parts.append("[file]")
    return "\n\n".join(parts)


def output_text(output: Any) -> tuple[str, bool]:
    """The text a ``*_call_output`` gave the model, and whether it reported failure."""
    if isinstance(output, str):
        return output, False
    if isinstance(output, list):
        return content_text(output), False
    if isinstance(output, dict):  # older FunctionCallOutputPayload {content, success}
        content = output.get("content")
        text = content if isinstance(content, str) else content_text(content)
        return text, output.get("success") is False
    return as_text(output), False


def custom_output_error(text: str) -> bool:
    """apply_patch & co. wrap their output as ``{"output":…,"metadata":{"exit_code":N}}``."""
    if not text.startswith('{"output"'):
        return False
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    meta = parsed.get("metadata") if isinstance(parsed, dict) else None
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    return isinstance(code, int) and code != 0


def is_context_message(text: str) -> bool:
    if text[:1].isspace():
        text = text[:200].lstrip()
    return text.startswith(_CONTEXT_PREFIXES)


def function_call(name: Any, namespace: Any, arguments: Any) -> tuple[Any, Any]:
    """A ``function_call`` item's tool name (``namespace.name`` when both are strings) and
    arguments (its JSON string parsed; kept as the string when it does not parse), from the
    values the item holds (left out: None). The one rule of both reads: the plain one
    (:func:`name_and_arguments`) and the typed one (``codex_typed_read``)."""
    if type(namespace) is str and type(name) is str:  # (the file's values: never a subclass)
        name = f"{namespace}.{name}"
    if type(arguments) is str:
        try:  # noqa: SIM105 (a context manager costs more, once per call)
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            pass  # kept as the string
    return name, arguments


def name_and_arguments(kind: str, payload: dict[str, Any]) -> tuple[Any, Any]:
    """The tool name (not checked: a missing name is not a str) and arguments of a call item."""
    if kind == "function_call":
        get = payload.get
        return function_call(get("name"), get("namespace"), get("arguments"))
    if kind == "custom_tool_call":
        return payload.get("name"), payload.get("input")
    return kind.removesuffix("_call"), payload.get("arguments", payload.get("action"))
