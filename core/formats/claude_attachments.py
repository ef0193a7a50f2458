"""What the model is sent for a Claude Code ``attachment`` line.

Claude Code records the context it injects around a turn (files mentioned with ``@``, hook
output, tool and agent listings, reminders, the date …) as ``attachment`` lines. Before each
request it turns most of them into meta user messages wrapped in ``<system-reminder>`` (its
``normalizeAttachmentForAPI``); the others are for the UI only. Its own context estimate (the
auto-compact check) counts the model-visible ones, so the loader does too.

:func:`attachment_text` gives the text the model saw: the recorded ``rendered`` copy when the
line has one (written by builds from about 2.1.28x on), else a rendering of the attachment's
fields. The renderings keep the payload the model was sent (file contents, listings, hook
output) with a short header; the agent's own boilerplate sentences are not reproduced word for
word, so a rendering can be a few dozen characters shorter or longer than the real one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.formats.base import as_text

__all__ = ["HIDDEN_TYPES", "attachment_text", "is_known"]

Attachment = dict[str, Any]

HIDDEN_TYPES = frozenset(
    {
        # Sent to the model as nothing: bookkeeping for the UI, the permission system or hooks.
        "already_read_file",
        "command_permissions",
        "edited_image_file",
        "hook_cancelled",
        "hook_error_during_execution",
        "hook_non_blocking_error",
        "hook_system_message",
        "hook_permission_decision",
        "structured_output",
        "dynamic_skill",
        # Model-visible, but the recording holds no text: the agent builds it from its settings.
        "auto_mode",
        "plan_mode",
        # Removed from the agent long ago; resumed old sessions still hold them.
        "autocheckpointing",
        "background_task_status",
        "todo",
        "task_progress",
        "ultramemory",
        # Newer bookkeeping that carries no model text of its own.
        "deferred_tools_record",
        "prompt_snapshot",
        "batching_reminder_sent",
    }
)
"""Attachment types the model is not sent (or whose text the recording does not hold)."""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _lines(value: Any) -> str:
    """A list of strings (``addedLines`` …) joined one per line; anything else as ''."""
    if not isinstance(value, list):
        return ""
    return "\n".join(item for item in value if isinstance(item, str))


def _sections(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


def _numbered(content: str, start: int) -> str:
    """File text as the Read tool shows it: a right-aligned line number and a tab per line."""
    return "\n".join(f"{start + k:>6}\t{line}" for k, line in enumerate(content.split("\n")))


def _file(att: Attachment) -> str:
    """A file mentioned with ``@`` (or re-read after a compaction): sent as a Read result."""
    name = _str(att.get("filename"))
    content = att.get("content")
    if not isinstance(content, dict):
        return f"Read {name}" if name else ""
    kind = content.get("type")
    file = content.get("file")
    if kind == "text" and isinstance(file, dict):
        start = file.get("startLine")
        text = _numbered(_str(file.get("content")), start if type(start) is int else 1)
        return f"Read {name}\n{text}"
    if kind == "image":
        return f"Read {name}\n[image]"
    if kind == "pdf":
        return f"Read {name}\n[document]"
    return f"Read {name}\n{as_text(file if file is not None else content)}"


def _edited_text_file(att: Attachment) -> str:
    name = _str(att.get("filename"))
    return f"Note: {name} was modified (by the user or a linter). The changes:\n" + _str(
        att.get("snippet")
    )


def _compact_file_reference(att: Attachment) -> str:
    name = _str(att.get("filename"))
    return f"Note: {name} was read before the conversation was summarized; it is too large to include. Read it again if needed."


def _pdf_reference(att: Attachment) -> str:
    name = _str(att.get("filename"))
    return f"PDF file: {name} ({as_text(att.get('pageCount'))} pages). Read it a few pages at a time with the pages parameter."


def _selected_lines(att: Attachment) -> str:
    content = _str(att.get("content"))[:2000]
    return (
        f"The user selected lines {as_text(att.get('lineStart'))} to "
        f"{as_text(att.get('lineEnd'))} of {_str(att.get('filename'))}:\n{content}"
    )


def _plan_file_reference(att: Attachment) -> str:
    return f"A plan file exists at {_str(att.get('planFilePath'))}.\n\nPlan contents:\n\n{_str(att.get('planContent'))}"


def _invoked_skills(att: Attachment) -> str:
    skills = att.get("skills")
    if not isinstance(skills, list):
        return ""
    bodies = [
        f"### Skill: {_str(s.get('name'))}\nPath: {_str(s.get('path'))}\n\n{_str(s.get('content'))}"
        for s in skills
        if isinstance(s, dict)
    ]
    if not bodies:
        return ""
    return "Skills invoked in this session; keep following them:\n\n" + "\n\n---\n\n".join(bodies)


def _task_items(att: Attachment, number_key: str | None) -> str:
    items = att.get("content")
    if not isinstance(items, list):
        return ""
    lines = []
    for k, item in enumerate(items, 1):
        if not isinstance(item, dict):
            continue
        label = as_text(item.get(number_key)) if number_key else str(k)
        text = _str(item.get("subject")) or _str(item.get("content"))
        lines.append(f"{label}. [{_str(item.get('status'))}] {text}")
    return "\n".join(lines)


_TASK_REMINDER = (
    "The task tools have not been used for a while. If the work would benefit from tracking, "
    "create tasks and keep their status current (in_progress when starting, completed when "
    "done), and clean up a stale list. Only if relevant; never mention this reminder."
)


def _task_reminder(att: Attachment) -> str:
    return _sections(_TASK_REMINDER, _task_items(att, "id"))


def _todo_reminder(att: Attachment) -> str:
    return _sections(_TASK_REMINDER, _task_items(att, None))


def _nested_memory(att: Attachment) -> str:
    content = att.get("content")
    if not isinstance(content, dict):
        return ""
    return f"Contents of {_str(content.get('path'))}:\n\n{_str(content.get('content'))}"


def _relevant_memories(att: Attachment) -> str:
    memories = att.get("memories")
    if not isinstance(memories, list):
        return ""
    return _sections(
        *(
            _sections(_str(m.get("header")), _str(m.get("content")))
            for m in memories
            if isinstance(m, dict)
        )
    )


def _skill_listing(att: Attachment) -> str:
    content = _str(att.get("content"))
    return f"Skills available to the Skill tool:\n\n{content}" if content else ""


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):
        return "\n".join(
            _str(b.get("text")) for b in prompt if isinstance(b, dict) and b.get("type") == "text"
        )
    return as_text(prompt)


def _queued_command(att: Attachment) -> str:
    """A message the user typed while the agent worked: the agent folds it into the turn."""
    return f"The user sent a new message while you were working:\n{_prompt_text(att.get('prompt'))}"


def _async_hook_response(att: Attachment) -> str:
    response = att.get("response")
    if not isinstance(response, dict):
        return ""
    specific = response.get("hookSpecificOutput")
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    return _sections(_str(response.get("systemMessage")), _str(context))


def _hook_success(att: Attachment) -> str:
    # Only the hooks whose output is context for the model: session start and prompt submit.
    if att.get("hookEvent") not in ("SessionStart", "UserPromptSubmit"):
        return ""
    content = _str(att.get("content"))
    return f"{_str(att.get('hookName'))} hook success: {content}" if content else ""


def _hook_additional_context(att: Attachment) -> str:
    content = _lines(att.get("content"))
    return f"{_str(att.get('hookName'))} hook additional context: {content}" if content else ""


def _hook_blocking_error(att: Attachment) -> str:
    error = att.get("blockingError")
    error = error if isinstance(error, dict) else {}
    return (
        f"{_str(att.get('hookName'))} hook blocking error from command "
        f"{_str(error.get('command'))}: {_str(error.get('blockingError'))}"
    )


def _deferred_tools_delta(att: Attachment) -> str:
    added, removed = _lines(att.get("addedLines")), _lines(att.get("removedNames"))
    return _sections(
        f"Deferred tools now available through ToolSearch:\n{added}" if added else "",
        f"Deferred tools no longer available:\n{removed}" if removed else "",
    )


def _agent_listing_delta(att: Attachment) -> str:
    added, removed = _lines(att.get("addedLines")), _lines(att.get("removedTypes"))
    return _sections(
        f"Agent types available to the Agent tool:\n{added}" if added else "",
        f"Agent types no longer available:\n{removed}" if removed else "",
    )


def _mcp_instructions_delta(att: Attachment) -> str:
    blocks = att.get("addedBlocks")
    added = "\n\n".join(b for b in blocks if isinstance(b, str)) if isinstance(blocks, list) else ""
    removed = _lines(att.get("removedNames"))
    return _sections(
        f"# MCP Server Instructions\n\nInstructions from the connected MCP servers:\n\n{added}"
        if added
        else "",
        f"These MCP servers disconnected; their instructions no longer apply:\n{removed}"
        if removed
        else "",
    )


def _mcp_resource(att: Attachment) -> str:
    content = att.get("content")
    items = content.get("contents") if isinstance(content, dict) else None
    texts = [_str(item.get("text")) for item in items or () if isinstance(item, dict)] or [
        "(No content)"
    ]
    return f"MCP resource {_str(att.get('uri'))} of {_str(att.get('server'))}:\n" + "\n".join(texts)


def _task_status(att: Attachment) -> str:
    return (
        f"Task {_str(att.get('taskId'))} ({_str(att.get('status'))}): "
        f"{_str(att.get('description'))} {_str(att.get('deltaSummary'))}".rstrip()
    )


def _field(name: str, template: str) -> Callable[[Attachment], str]:
    """A rendering that puts one field of the attachment into ``template``."""

    def render(att: Attachment) -> str:
        value = att.get(name)
        return template.format(as_text(value)) if value not in (None, "", []) else ""

    return render


_RENDERERS: dict[str, Callable[[Attachment], str]] = {
    "file": _file,
    "edited_text_file": _edited_text_file,
    "compact_file_reference": _compact_file_reference,
    "pdf_reference": _pdf_reference,
    "selected_lines_in_ide": _selected_lines,
    "opened_file_in_ide": _field("filename", "The user opened the file {} in the IDE."),
    "directory": lambda att: f"ls {_str(att.get('path'))}\n{_str(att.get('content'))}",
    "plan_file_reference": _plan_file_reference,
    "invoked_skills": _invoked_skills,
    "task_reminder": _task_reminder,
    "todo_reminder": _todo_reminder,
    "nested_memory": _nested_memory,
    "relevant_memories": _relevant_memories,
    "skill_listing": _skill_listing,
    "queued_command": _queued_command,
    "output_style": _field("style", "{} output style is active; follow its guidelines."),
    "diagnostics": _field("files", "<new-diagnostics>New diagnostic issues:\n{}</new-diagnostics>"),
    "critical_system_reminder": _field("content", "{}"),
    "mcp_resource": _mcp_resource,
    "agent_mention": _field("agentType", 'The user wants the agent "{}" invoked.'),
    "task_status": _task_status,
    "async_hook_response": _async_hook_response,
    "token_usage": lambda att: (
        f"Token usage: {as_text(att.get('used'))}/{as_text(att.get('total'))}; "
        f"{as_text(att.get('remaining'))} remaining"
    ),
    "budget_usd": lambda att: (
        f"USD budget: ${as_text(att.get('used'))}/${as_text(att.get('total'))}; "
        f"${as_text(att.get('remaining'))} remaining"
    ),
    "output_token_usage": lambda att: (
        f"Output tokens: turn {as_text(att.get('turn'))}, session {as_text(att.get('session'))}"
    ),
    "hook_success": _hook_success,
    "hook_additional_context": _hook_additional_context,
    "hook_blocking_error": _hook_blocking_error,
    "hook_stopped_continuation": lambda att: (
        f"{_str(att.get('hookName'))} hook stopped continuation: {_str(att.get('message'))}"
    ),
    "compaction_reminder": lambda att: (
        "Auto-compact is on: when the context window is nearly full, older messages are "
        "summarized automatically, so there is no need to stop or rush."
    ),
    "date_change": _field("newDate", "The date has changed. Today's date is now {}."),
    "ultrathink_effort": _field("level", "The user asked for reasoning effort {} for this turn."),
    "plan_mode_exit": lambda att: "## Exited Plan Mode\n\nYou can now make edits and run tools.",
    "auto_mode_exit": lambda att: "## Exited Auto Mode\n\nAsk before acting on ambiguous choices.",
    "deferred_tools_delta": _deferred_tools_delta,
    "agent_listing_delta": _agent_listing_delta,
    "mcp_instructions_delta": _mcp_instructions_delta,
    # A session token budget the agent counts down (not the context window).
    "total_tokens_reminder": _field("text", "{}"),
}


def is_known(kind: str) -> bool:
    """The loader knows what the model is sent for attachments of type ``kind``."""
    return kind in _RENDERERS or kind in HIDDEN_TYPES


def _rendered(value: Any) -> str | None:
    """The recorded model text (``rendered: [{content}]``), None when the line has none."""
    if not isinstance(value, list):
        return None
    parts: list[str] = []
    for item in value:
        content = item.get("content") if isinstance(item, dict) else item
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(
                _str(b.get("text")) for b in content if isinstance(b, dict) and "text" in b
            )
    return "\n\n".join(p for p in parts if p)


def attachment_text(record: dict[str, Any], attachment: Attachment) -> str:
    """The text the model was sent for one attachment line ('' when it was sent nothing).

    ``record`` is the whole line (it may hold the ``rendered`` copy), ``attachment`` its
    ``attachment`` object. Unknown types give '' (see :func:`is_known`).
    """
    rendered = _rendered(record.get("rendered"))
    if rendered is not None:
        return rendered
    kind = attachment.get("type")
    render = _RENDERERS.get(kind) if isinstance(kind, str) else None
    return render(attachment) if render is not None else ""
