"""The offline summariser: deterministic, fast, and faithful to the template in use.

:class:`MockSummarizer` writes a summary without any model. It reads the ``## `` headings of
the template from the prompt (so it follows ``t12``, ``anchored``, ``pi`` or any custom template),
reads the head from the transcript compaction sent (the labelled layout of
:mod:`core.templates`; plain chat messages work too), and fills each section from the head
itself:

* **goal** sections: the first user request;
* **instruction / constraint / requirement** sections: the user's later messages and the
  instruction-like lines of the first one;
* **discovery / context** sections: errors seen (failed tool results, error-looking lines) and the
  assistant's findings;
* **accomplished / progress / work** sections: files changed, commands run, the last actions;
* **decision** sections: the assistant's stated choices;
* **next** sections: the last request and the last action;
* **file** sections: files read and edited, from tool-call arguments (``path``, ``file_path``,
  ``filePath``, patches …).

When the prompt quotes a previous summary, its bullets are kept and the new ones merged in. The
text is cut to ``max_tokens`` (estimated as characters / 4). The same input always gives the same
text. Replay calls this for every compaction of long sessions, so it is linear in the input and
takes milliseconds.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from core.llm import ChatMessage, ContextOverflowError, DeltaCallback, LLMUsage, SummaryResult
from core.models import Provenance
from core.templates import (
    CONVERSATION_CLOSE,
    CONVERSATION_OPEN,
    ENTRY_LABELS,
    LABEL_ASSISTANT,
    LABEL_TOOL_CALL,
    LABEL_TOOL_ERROR,
    LABEL_TOOL_RESULT,
    LABEL_USER,
    T12,
    extract_previous_summary,
    section_headings,
    split_sections,
)
from core.tokens import estimate_chars4

MOCK_MODEL = "mock"
NONE_TEXT = "(none)"
CHUNK_CHARS = 256
"""Size of each piece handed to ``on_delta`` when streaming."""

_MAX_BULLETS = 20
_MAX_BULLET_CHARS = 300
_MAX_FILES = 40

_ENTRY_START = re.compile(
    "^(" + "|".join(re.escape(label) for label in ENTRY_LABELS) + "):[ ]?", re.MULTILINE
)
_ERROR_WORDS = (
    "error",
    "exception",
    "traceback",
    "failed",
    "failure",
    "fatal",
    "panic",
    "denied",
    "not found",
    "no such file",
)
_INSTRUCTION_LINE = re.compile(
    r"\b(must|should|don't|do not|never|always|please|make sure|avoid|prefer|only|instead)\b",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"\b(found|turns out|because|the cause|the issue|the problem|root cause|it seems|appears to)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decided|decide|instead|chose|choose|i will|i'll|we will|let's|going to|plan is)\b",
    re.IGNORECASE,
)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_PATH_KEYS = ("path", "file_path", "filePath", "filepath", "filename", "file", "notebook_path")
_EDIT_WORDS = ("write", "edit", "patch", "create", "replace", "insert", "delete", "move", "rename")
_READ_VERBS = {
    "read": "read",
    "read_file": "read",
    "view": "read",
    "cat": "read",
    "open": "read",
    "grep": "searched",
    "glob": "listed",
    "ls": "listed",
    "list": "listed",
    "find": "searched",
    "search": "searched",
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class _Entry:
    """One message of the transcript: its label, and for tools the name and arguments."""

    __slots__ = ("arguments", "label", "name", "text")

    def __init__(self, label: str, text: str, name: str = "", arguments: Any = None) -> None:
        self.label = label
        self.text = text
        self.name = name
        self.arguments = arguments


def _one_line(text: str, limit: int = _MAX_BULLET_CHARS) -> str:
    """``text`` folded onto one line and cut to ``limit`` characters with an ellipsis."""
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    return folded[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    folded = " ".join(text.split())
    parts = _SENTENCE_END.split(folded, maxsplit=1)
    return _one_line(parts[0]) if parts else ""


def _parse_entries(text: str) -> list[_Entry]:
    """Entries of a labelled transcript (see :mod:`core.templates`)."""
    entries: list[_Entry] = []
    matches = list(_ENTRY_START.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        label = match.group(1)
        body = text[match.end() : end].strip("\n")
        if label == LABEL_TOOL_CALL:
            name, _, raw_args = body.partition(" ")
            arguments: Any = raw_args
            if raw_args.startswith(("{", "[")):
                try:
                    arguments = orjson.loads(raw_args)
                except orjson.JSONDecodeError:
                    arguments = raw_args
            entries.append(_Entry(label, body, name.strip(), arguments))
        elif label in (LABEL_TOOL_RESULT, LABEL_TOOL_ERROR):
            name, _, output = body.partition("\n")
            entries.append(_Entry(label, output, name.strip()))
        else:
            entries.append(_Entry(label, body))
    return entries


def _entries_from_messages(messages: Sequence[ChatMessage]) -> list[_Entry]:
    """The transcript entries of a summary request, whatever shape its messages have."""
    entries: list[_Entry] = []
    for message in messages:
        content = message.content
        if message.role == "system" and CONVERSATION_OPEN not in content:
            continue
        start = content.find(CONVERSATION_OPEN)
        if start >= 0:
            end = content.rfind(CONVERSATION_CLOSE)
            inner = content[start + len(CONVERSATION_OPEN) : end if end > start else len(content)]
            entries.extend(_parse_entries(inner))
        elif _ENTRY_START.search(content):
            entries.extend(_parse_entries(content))
        elif message.role == "user":
            entries.append(_Entry(LABEL_USER, content))
        else:
            entries.append(_Entry(LABEL_ASSISTANT, content))
    return entries


def _paths_in(arguments: Any) -> list[str]:
    """File paths named in a tool call's arguments."""
    paths: list[str] = []
    if isinstance(arguments, dict):
        for key in _PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                paths.append(value.strip())
        many = arguments.get("paths")
        if isinstance(many, list):
            paths.extend(p for p in many if isinstance(p, str) and p.strip())
        for key in ("input", "patch", "content"):
            value = arguments.get(key)
            if isinstance(value, str) and "*** " in value:
                paths.extend(m.strip() for m in _PATCH_FILE.findall(value))
    elif isinstance(arguments, str) and "*** " in arguments:
        paths.extend(m.strip() for m in _PATCH_FILE.findall(arguments))
    return paths


def _command_in(arguments: Any) -> str | None:
    """The shell command of a tool call, when it has one."""
    if not isinstance(arguments, dict):
        return None
    for key in ("command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            words = [str(v) for v in value]
            # Codex wraps commands as ["bash", "-lc", "<script>"]; the script is what ran.
            if len(words) == 3 and words[1] in ("-c", "-lc"):
                return words[2]
            return " ".join(words)
    return None


def _find_error_word(lowered: str, start: int) -> int | None:
    """Index of the first error word (as a whole word) in ``lowered`` at or after ``start``."""
    best: int | None = None
    for word in _ERROR_WORDS:
        at = lowered.find(word, start)
        while at >= 0 and (best is None or at < best):
            before = lowered[at - 1] if at > 0 else " "
            after_index = at + len(word)
            after = lowered[after_index] if after_index < len(lowered) else " "
            if not before.isalnum() and not after.isalnum():
                best = at
                break
            at = lowered.find(word, at + 1)
    return best


def _is_edit(tool_name: str) -> bool:
    lowered = tool_name.lower()
    return any(word in lowered for word in _EDIT_WORDS)


class _Digest:
    """What the mock learned from the head, gathered in one pass."""

    def __init__(self, entries: Iterable[_Entry]) -> None:
        self.user_texts: list[str] = []
        self.assistant_texts: list[str] = []
        self.errors: list[str] = []
        self.findings: list[str] = []
        self.decisions: list[str] = []
        self.actions: list[str] = []
        self.files: dict[str, str] = {}  # path -> "read" | "edited"
        self.commands = 0
        for entry in entries:
            self._take(entry)

    def _take(self, entry: _Entry) -> None:
        if entry.label == LABEL_USER:
            if entry.text.strip():
                self.user_texts.append(entry.text.strip())
        elif entry.label == LABEL_ASSISTANT:
            text = entry.text.strip()
            if text:
                self.assistant_texts.append(text)
                if _FINDING.search(text):
                    self.findings.append(_first_sentence(text))
                for sentence in _SENTENCE_END.split(" ".join(text.split()))[:6]:
                    if _DECISION.search(sentence):
                        self.decisions.append(_one_line(sentence))
                        break
        elif entry.label == LABEL_TOOL_CALL:
            self._take_call(entry)
        elif entry.label == LABEL_TOOL_ERROR:
            line = next((ln.strip() for ln in entry.text.splitlines() if ln.strip()), "")
            self.errors.append(
                _one_line(f"`{entry.name or 'tool'}` failed: {line or '(no output)'}")
            )
        elif entry.label == LABEL_TOOL_RESULT:
            # str.find on the lowered text is far faster than a case-insensitive regex here.
            text = entry.text
            lowered = text.lower()
            position = 0
            for _ in range(2):
                found = _find_error_word(lowered, position)
                if found is None:
                    break
                start = text.rfind("\n", 0, found) + 1
                end = text.find("\n", found)
                end = len(text) if end < 0 else end
                self.errors.append(_one_line(f"{entry.name or 'tool'}: {text[start:end].strip()}"))
                position = end

    def _take_call(self, entry: _Entry) -> None:
        name = entry.name or "tool"
        command = _command_in(entry.arguments)
        paths = _paths_in(entry.arguments)
        edit = _is_edit(name)
        for path in paths:
            if edit:
                self.files[path] = "edited"
            else:
                self.files.setdefault(path, "read")
        if command is not None:
            self.commands += 1
            self.actions.append(f"ran `{_one_line(command, 160)}`")
        elif paths:
            verb = "edited" if edit else _READ_VERBS.get(name.lower(), f"used `{name}` on")
            self.actions.append(
                f"{verb} `{paths[0]}`" + (f" (+{len(paths) - 1})" if len(paths) > 1 else "")
            )
        else:
            self.actions.append(f"called `{name}`")

    # --- section contents -----------------------------------------------------------------------

    def goal(self) -> list[str]:
        if not self.user_texts:
            return []
        first = next(line for line in self.user_texts[0].splitlines() if line.strip())
        return [_one_line(first, 500)]

    def instructions(self) -> list[str]:
        bullets: list[str] = []
        if self.user_texts:
            # The first line is the goal; instruction-like lines after it are instructions.
            later_lines = self.user_texts[0].splitlines()[1:]
            bullets.extend(
                _one_line(line.strip().lstrip("-*").strip())
                for line in later_lines
                if line.strip() and _INSTRUCTION_LINE.search(line)
            )
        bullets.extend(_one_line(text) for text in self.user_texts[1:])
        return bullets

    def discoveries(self) -> list[str]:
        return [*self.errors, *self.findings]

    def progress(self) -> list[str]:
        bullets: list[str] = []
        edited = [p for p, how in self.files.items() if how == "edited"]
        if edited:
            shown = ", ".join(f"`{p}`" for p in edited[:8])
            more = f" and {len(edited) - 8} more" if len(edited) > 8 else ""
            bullets.append(f"Changed {shown}{more}")
        if self.commands:
            bullets.append(f"Ran {self.commands} command{'s' if self.commands != 1 else ''}")
        bullets.extend(f"Then {action}" for action in self.actions[-8:])
        if self.assistant_texts:
            bullets.append("Last reported: " + _first_sentence(self.assistant_texts[-1]))
        return bullets

    def next_steps(self) -> list[str]:
        bullets: list[str] = []
        if len(self.user_texts) > 1:
            bullets.append("Finish the latest request: " + _one_line(self.user_texts[-1], 200))
        elif self.user_texts:
            bullets.append("Continue the task: " + _one_line(self.user_texts[0], 200))
        if self.actions:
            bullets.append("Pick up after the last action (" + self.actions[-1] + ")")
        return bullets

    def file_lines(self) -> list[str]:
        return [f"`{path}` ({how})" for path, how in list(self.files.items())[:_MAX_FILES]]

    def for_heading(self, heading: str) -> list[str]:
        """The bullets of the section called ``heading`` (matched by keyword)."""
        key = heading.lower()
        if any(w in key for w in ("goal", "objective", "original request", "task")):
            return self.goal()
        if "file" in key:
            return self.file_lines()
        if any(w in key for w in ("instruction", "constraint", "preference", "requirement")):
            return self.instructions()
        if "decision" in key:
            return self.decisions
        if "next" in key:
            return self.next_steps()
        if any(w in key for w in ("accomplish", "progress", "done", "work state", "status")):
            return self.progress()
        if any(w in key for w in ("discover", "context", "finding", "learn", "error", "note")):
            return self.discoveries()
        return []


def _bullet_lines(body: str) -> list[str]:
    """The items of a previous summary's section (bullets without their marker)."""
    items: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped == NONE_TEXT:
            continue
        if stripped.startswith(("- ", "* ")):
            stripped = stripped[2:].strip()
        if stripped and stripped != NONE_TEXT:
            items.append(stripped)
    return items


def _merge(previous: list[str], new: list[str], keep_oldest: bool) -> list[str]:
    """Previous items then new ones, without duplicates, capped (goal keeps its oldest items)."""
    merged = list(dict.fromkeys([*previous, *new]))
    if len(merged) > _MAX_BULLETS:
        merged = merged[:_MAX_BULLETS] if keep_oldest else merged[-_MAX_BULLETS:]
    return merged


def _render(sections: list[tuple[str, list[str]]]) -> str:
    blocks = []
    for heading, bullets in sections:
        body = "\n".join(f"- {b}" for b in bullets) if bullets else NONE_TEXT
        blocks.append(f"## {heading}\n{body}")
    return "\n\n".join(blocks)


def _fit(sections: list[tuple[str, list[str]]], max_chars: int) -> str:
    """Render ``sections`` within ``max_chars``: drop the oldest bullets of the longest section first."""
    text = _render(sections)
    while len(text) > max_chars:
        candidates = [
            (sum(len(b) + 3 for b in bullets), i)
            for i, (_, bullets) in enumerate(sections)
            if len(bullets) > 1
        ]
        if not candidates:
            break
        _, index = max(candidates)
        heading, bullets = sections[index]
        sections[index] = (heading, bullets[1:])
        text = _render(sections)
    if len(text) > max_chars:
        text = text[: max(max_chars - 1, 0)].rstrip() + "…" if max_chars > 0 else ""
    return text


class MockSummarizer:
    """Offline, deterministic :class:`core.llm.Summarizer`.

    ``context_limit_tokens``: when set, a request whose estimated size (characters / 4 of every
    message plus the prompt) is larger raises :class:`core.llm.ContextOverflowError`, as a real
    model would; compaction's head-drop retry and the mock HTTP server rely on it.
    """

    name = "mock"

    def __init__(self, context_limit_tokens: int | None = None) -> None:
        self.context_limit_tokens = context_limit_tokens
        """Largest request (estimated tokens) accepted; None: no limit."""
        self.calls = 0
        """Number of summaries written (for tests and diagnostics)."""

    def request_tokens(self, messages: Sequence[ChatMessage], prompt: str) -> int:
        """Estimated size of a request: characters / 4 of every message and the prompt."""
        return sum(estimate_chars4(m.content) for m in messages) + estimate_chars4(prompt)

    def write(self, messages: Sequence[ChatMessage], prompt: str, max_tokens: int) -> str:
        """The summary text for a request (synchronous core of :meth:`summarize`)."""
        previous, template_part = extract_previous_summary(prompt)
        headings = section_headings(template_part) or T12.headings
        digest = _Digest(_entries_from_messages(messages))
        previous_sections = split_sections(previous) if previous else {}
        previous_by_key = {h.lower(): body for h, body in previous_sections.items()}
        sections: list[tuple[str, list[str]]] = []
        for heading in headings:
            new = digest.for_heading(heading)
            old = _bullet_lines(previous_by_key.get(heading.lower(), ""))
            is_goal = any(w in heading.lower() for w in ("goal", "objective"))
            if is_goal and old and new:
                new = [] if new[0] in old else [f"Then: {new[0]}"]
            sections.append(
                (heading, _merge(old, [_one_line(b) for b in new], keep_oldest=is_goal))
            )
        return _fit(sections, max(max_tokens, 1) * 4)

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> SummaryResult:
        """Write the summary; stream it to ``on_delta`` in chunks when given."""
        started = time.perf_counter()
        input_tokens = self.request_tokens(messages, prompt)
        if self.context_limit_tokens is not None and input_tokens > self.context_limit_tokens:
            raise ContextOverflowError(
                f"summary request of about {input_tokens:,} tokens exceeds the mock model's "
                f"context limit of {self.context_limit_tokens:,} tokens"
            )
        text = self.write(messages, prompt, max_tokens)
        if on_delta is not None:
            for start in range(0, len(text), CHUNK_CHARS):
                on_delta(text[start : start + CHUNK_CHARS])
                await asyncio.sleep(0)  # a cancellation point between chunks
        self.calls += 1
        return SummaryResult(
            text=text,
            usage=LLMUsage(
                input_tokens=input_tokens,
                output_tokens=estimate_chars4(text),
                provenance=Provenance.ESTIMATED,
            ),
            model=MOCK_MODEL,
            duration_s=time.perf_counter() - started,
        )


__all__ = ["MOCK_MODEL", "MockSummarizer"]
