"""The offline summariser: deterministic, fast, and faithful to the template in use.

:class:`MockSummarizer` writes a summary without any model. It reads the ``## `` headings of
the template from the prompt (so it follows ``t12``, ``anchored``, ``pi`` or any custom template),
reads the head from the transcript compaction sent (the labelled layout of
:mod:`core.llm.summary_templates`; plain chat messages work too), and fills each section from the head
itself:

* **goal** sections: the first user request (slash commands, their output and what the agent
  injects as a user message are not requests; a command's own words are, ``/goal fix the
  parser``);
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

Speed: what each transcript entry says (its facts: user request, finding, decision, files,
command, error lines) depends on that entry alone, so a summariser caches it by the entry's text
in a bounded LRU (``cache_chars``); a head that overlaps an earlier one — replay re-running after
a limit change — only reads its new entries. The entry split uses ``str.find`` instead of a
multi-line regex, and the keyword searches answer from ``str.find`` on ASCII text (the regex
itself decides for any other text), both tested against the regexes they stand for.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import starmap
from typing import Any

import orjson

from core.llm.mock_entries import piece_entries, raw_entries
from core.llm.mock_words import DECISION, FINDING, INSTRUCTION_LINE
from core.llm.protocol import (
    ChatMessage,
    ContextOverflowError,
    DeltaCallback,
    LLMUsage,
    SizedRequest,
    SummaryResult,
)
from core.llm.summary_templates import (
    CONVERSATION_CLOSE,
    CONVERSATION_OPEN,
    LABEL_ASSISTANT,
    LABEL_TOOL_CALL,
    LABEL_TOOL_ERROR,
    LABEL_TOOL_RESULT,
    LABEL_USER,
    T12,
    extract_previous_summary,
    section_headings,
    split_sections,
    transcript_entries,
)
from core.model.session import Provenance
from core.model.tokens import estimate_chars4, length_rule

MOCK_MODEL = "mock"
NONE_TEXT = "(none)"
CHUNK_CHARS = 256
"""Size of each piece handed to ``on_delta`` when streaming."""

_RULE = length_rule("chars/4")
assert _RULE is not None
_LENGTH, _TOKENS = _RULE
"""How the mock sizes a request: characters / 4 (UTF-16 units, as opencode counts them) of each
message, from its length (:func:`core.model.tokens.length_rule`), so that the size of a request
known only by the lengths of its messages is the same figure."""
FACTS_CACHE_CHARS = 32_000_000
"""Default bound of a summariser's cache of what each transcript entry says, in characters of
entry text (plus a fixed weight per entry): a few tens of megabytes at most."""

_MAX_BULLETS = 20
_MAX_BULLET_CHARS = 300
_MAX_FILES = 40

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


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_PATH_KEYS = ("path", "file_path", "filePath", "filepath", "filename", "file", "notebook_path")
_PATCH_KEYS = ("input", "patch", "content")
_ANY_PATH_KEY = frozenset((*_PATH_KEYS, "paths", *_PATCH_KEYS))
"""Every key :func:`_paths_in` reads (arguments with none of them name no path)."""
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


def _one_line(text: str, limit: int = _MAX_BULLET_CHARS) -> str:
    """``text`` folded onto one line and cut to ``limit`` characters with an ellipsis."""
    if len(text) > 2 * limit:
        # A long text's first 2 * limit characters fold to the start of the whole text's
        # folding (its words, the last perhaps cut short): when that is over the limit, it
        # holds the cut (a summary folds every user message of the head, most of them long).
        folded = " ".join(text[: 2 * limit].split())
        if len(folded) > limit:
            return folded[: limit - 1].rstrip() + "…"
    folded = " ".join(text.split())
    if len(folded) <= limit:
        return folded
    return folded[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    folded = " ".join(text.split())
    parts = _SENTENCE_END.split(folded, maxsplit=1)
    return _one_line(parts[0]) if parts else ""


_Part = str | tuple[str, str]
"""A piece of a request the facts are read from: an entry as :func:`core.llm.summary_templates.
build_transcript` joined it (a string, which may hold several entries), or an entry already
split into ``(label, body)``."""


def _request_parts(messages: Sequence[ChatMessage], *, split: bool = False) -> list[_Part]:
    """The transcript entries of a summary request, whatever shape its messages have.

    A transcript :func:`core.llm.summary_templates.build_transcript` just built comes back as the entries it
    joined (unless ``split``): the same entries splitting its text gives, since each starts with
    its label on a line of its own and the blank lines between them are stripped from bodies
    anyway. Anything else is split here.
    """
    parts: list[_Part] = []
    for message in messages:
        content = message.content
        if message.role == "system" and CONVERSATION_OPEN not in content:
            continue
        pieces = None if split else transcript_entries(content)
        if pieces is not None:
            parts.extend(pieces)
            continue
        start = content.find(CONVERSATION_OPEN)
        if start >= 0:
            end = content.rfind(CONVERSATION_CLOSE)
            inner = content[start + len(CONVERSATION_OPEN) : end if end > start else len(content)]
            parts.extend(raw_entries(inner))
            continue
        parsed = raw_entries(content)
        if parsed:
            parts.extend(parsed)
        elif message.role == "user":
            parts.append((LABEL_USER, content))
        else:
            parts.append((LABEL_ASSISTANT, content))
    return parts


def _paths_in(arguments: Any) -> list[str]:
    """File paths named in a tool call's arguments."""
    paths: list[str] = []
    if isinstance(arguments, dict):
        if arguments.keys().isdisjoint(_ANY_PATH_KEY):
            return paths
        for key in _PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                paths.append(value.strip())
        many = arguments.get("paths")
        if isinstance(many, list):
            paths.extend(p for p in many if isinstance(p, str) and p.strip())
        for key in _PATCH_KEYS:
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


def _find_error_word(lowered: str, start: int, words: Sequence[str] = _ERROR_WORDS) -> int | None:
    """Index of the first error word (as a whole word) in ``lowered`` at or after ``start``;
    ``words``: the error words that occur in ``lowered`` at all (:func:`_error_words_in`), when
    known (the others cannot be found).

    Once a word is found, the other words are only looked for before it (``str.find`` with an
    end), as an occurrence after it could not be the first.
    """
    best: int | None = None
    size = len(lowered)
    for word in words:
        # Occurrences that start before ``best`` end before ``best + len(word) - 1``.
        end = size if best is None else best + len(word) - 1
        at = lowered.find(word, start, end)
        while at >= 0:
            before = lowered[at - 1] if at > 0 else " "
            after_index = at + len(word)
            after = lowered[after_index] if after_index < size else " "
            if not before.isalnum() and not after.isalnum():
                best = at
                break
            at = lowered.find(word, at + 1, end)
    return best


@lru_cache(maxsize=1024)  # (a session names few tools, each in many calls)
def _is_edit(tool_name: str) -> bool:
    return any(map(tool_name.lower().__contains__, _EDIT_WORDS))


class _Facts:
    """What one transcript entry tells the mock: a pure function of the entry's label and body,
    so it is computed once per distinct entry and cached (:class:`_FactsCache`)."""

    __slots__ = ("action", "assistant", "command", "decision", "errors", "files", "finding", "user")

    def __init__(self) -> None:
        self.user: str | None = None
        """A user entry's text, stripped (None: not a user entry, or blank)."""
        self.assistant: str | None = None
        """An assistant entry's text, stripped (None: not one, or blank)."""
        self.finding: str | None = None
        """The first sentence of an assistant text that states a finding."""
        self.decision: str | None = None
        """The first of its first six sentences that states a decision."""
        self.errors: tuple[str, ...] = ()
        """Error lines of a tool result (at most two) or the first line of a tool error."""
        self.files: tuple[tuple[str, bool], ...] = ()
        """Paths a tool call names, each with whether the tool edits."""
        self.command = False
        """The tool call ran a shell command."""
        self.action: str | None = None
        """What the tool call did, in a few words."""


_NO_FACTS = _Facts()
"""Shared by every entry that tells nothing (reasoning, system text, a quiet tool result)."""


def _facts_of(label: str, body: str) -> _Facts:
    """The facts of one entry (see :class:`_Facts`), read by the function :data:`_READERS`
    names for its label (other labels tell nothing)."""
    reader = _READERS.get(label)
    return reader(body) if reader is not None else _NO_FACTS


_SLASH_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:[ \t]+|$)")
"""A slash command at the start of a user message (``/model``, ``/compact``, ``/goal …``)."""
_INJECTED_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "<environment_context>",
    "<user_instructions>",
    "<turn_aborted>",
    "Caveat: the messages below were generated by the user while running local commands",
)
"""How the agents mark what they inject as a user message (commands, their output, reminders):
the user's words never start so."""
_MIN_REQUEST_WORDS = 3
"""A slash command followed by at least this many words carries a request (``/goal simplify
this repo``); with fewer (``/model gpt-5``) it is only a command."""


def _user_request(text: str) -> str | None:
    """What the user asked in a user entry: None for a command or injected text (not a goal nor
    an instruction); a slash command's own words when it carries a request."""
    if text.startswith(_INJECTED_TAGS):
        return None
    command = _SLASH_COMMAND.match(text)
    if command is None:
        return text
    rest = text[command.end() :].strip()
    first_line = rest.split("\n", 1)[0]
    return rest if len(first_line.split()) >= _MIN_REQUEST_WORDS else None


def _user_facts(body: str) -> _Facts:
    request = _user_request(body.strip())
    if not request:
        return _NO_FACTS
    facts = _Facts()
    facts.user = request
    return facts


def _assistant_facts(body: str) -> _Facts:
    text = body.strip()
    if not text:
        return _NO_FACTS
    facts = _Facts()
    facts.assistant = text
    lowered = text.lower() if text.isascii() else None
    if FINDING.search(text, lowered=lowered):
        facts.finding = _first_sentence(text)
    if lowered is not None and DECISION.none_in_folded(lowered):
        return facts  # (no decision word in any sentence: the text is not folded)
    # Only the first six sentences are looked at: split no further than that. A decision
    # word that is nowhere in the text is in none of its sentences.
    folded = " ".join(text.split())
    words = DECISION.present(folded)
    if words is None or words:
        for sentence in _SENTENCE_END.split(folded, maxsplit=6)[:6]:
            if DECISION.search(sentence, words):
                facts.decision = _one_line(sentence)
                break
    return facts


def _tool_call_facts(body: str) -> _Facts:
    raw_name, _, raw_args = body.partition(" ")
    arguments: Any = raw_args
    if raw_args.startswith(("{", "[")):
        try:
            arguments = orjson.loads(raw_args)
        except orjson.JSONDecodeError:
            arguments = raw_args
    facts = _Facts()
    _call_facts(facts, raw_name.strip() or "tool", arguments)
    return facts


def _tool_error_facts(body: str) -> _Facts:
    raw_name, _, text = body.partition("\n")
    name = raw_name.strip() or "tool"
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    facts = _Facts()
    facts.errors = (_one_line(f"`{name}` failed: {line or '(no output)'}"),)
    return facts


def _lower_in_place(text: str) -> str:
    """``text`` in lower case, each character where it was: a position found in the result is
    the same position in ``text`` (a character whose lower case is longer, such as ``İ``, is
    kept as it is)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def _error_words_in(lowered: str) -> tuple[str, ...]:
    """The error words that occur in ``lowered`` anywhere (whole words or not): the only ones
    :func:`_find_error_word` can find there. ``in`` tells it with no argument parsing and no
    position, which is most of the cost of a ``str.find`` that finds nothing in a short text."""
    return tuple(
        filter(lowered.__contains__, _ERROR_WORDS if "fail" in lowered else _NO_FAIL_WORDS)
    )


_NO_FAIL_WORDS = tuple(word for word in _ERROR_WORDS if "fail" not in word)
"""The error words but ``failed`` and ``failure``: where ``fail`` is not, neither is (one
search for the two, in the output of most tool calls)."""


_LOWERS_TO_ONE_ASCII = "\u212a"
"""The one character outside ASCII whose lower case is one ASCII character (the Kelvin sign's
``k``; ``İ``'s is two characters, which :func:`_lower_in_place` keeps as ``İ``)."""


def _no_error_word(text: str) -> bool:
    """No error word is in ``_lower_in_place(text)``, told from the text's ASCII characters
    lowered and every other one a ``?`` (a fraction of lowering the rest: the error words are
    ASCII, and only :data:`_LOWERS_TO_ONE_ASCII` lowers to ASCII); False when it cannot tell."""
    if _LOWERS_TO_ONE_ASCII in text:
        return False
    return not _error_words_in(text.encode("ascii", "replace").decode("ascii").lower())


def _tool_result_facts(body: str) -> _Facts:
    raw_name, _, text = body.partition("\n")
    name = raw_name.strip() or "tool"
    if not text.isascii() and _no_error_word(text):
        return _NO_FACTS  # (most outputs, not lowered whole)
    # str.find on the lowered text is far faster than a case-insensitive regex here.
    lowered = _lower_in_place(text)
    words = _error_words_in(lowered)
    if not words:
        return _NO_FACTS  # (most outputs)
    position = 0
    errors: list[str] = []
    for _ in range(2):
        found = _find_error_word(lowered, position, words)
        if found is None:
            break
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        errors.append(_one_line(f"{name}: {text[start:end].strip()}"))
        position = end
    if not errors:
        return _NO_FACTS
    facts = _Facts()
    facts.errors = tuple(errors)
    return facts


_READERS: dict[str, Callable[[str], _Facts]] = {
    LABEL_USER: _user_facts,
    LABEL_ASSISTANT: _assistant_facts,
    LABEL_TOOL_CALL: _tool_call_facts,
    LABEL_TOOL_RESULT: _tool_result_facts,
    LABEL_TOOL_ERROR: _tool_error_facts,
}
"""The reader of each transcript label that tells the mock something."""


def _call_facts(facts: _Facts, name: str, arguments: Any) -> None:
    command = _command_in(arguments)
    paths = _paths_in(arguments)
    edit = _is_edit(name)
    facts.files = tuple((path, edit) for path in paths)
    if command is not None:
        facts.command = True
        facts.action = f"ran `{_one_line(command, 160)}`"
    elif paths:
        verb = "edited" if edit else _READ_VERBS.get(name.lower(), f"used `{name}` on")
        facts.action = f"{verb} `{paths[0]}`" + (f" (+{len(paths) - 1})" if len(paths) > 1 else "")
    else:
        facts.action = f"called `{name}`"


_ENTRY_OVERHEAD = 256
"""Weight of one cached part besides its characters (key, facts, dict slot)."""


def _part_facts(part: _Part) -> tuple[_Facts, ...] | None:
    """The facts of each entry of ``part`` (None: a joined piece that does not start with a
    label, which splitting the whole text would have read differently)."""
    if not isinstance(part, str):
        return (_facts_of(*part),)
    entries = piece_entries(part)
    return None if entries is None else tuple(starmap(_facts_of, entries))


class _FactsCache:
    """The facts of transcript entries: an LRU bounded by weight.

    Replay compacts the same messages again and again (each run of a changed policy summarises
    heads that overlap the previous run's), so most entries of a head were seen before. A joined
    piece (a string) is keyed by its identity and holds itself, so that its id stays its own
    while it is cached: the pieces of a head come from
    :class:`core.llm.summary_request.EntryCache`, the same string each time a message is
    summarised with the same cap, and a key by text would hash every new piece whole (the
    entries of a big-output head are megabytes at 100 MB) to find it once. An entry already
    split (label and body) is keyed by its text. Either way a hit is exact: the facts are a pure
    function of the text. The weight of a part is its length plus :data:`_ENTRY_OVERHEAD`;
    least recently used parts are evicted past ``max_weight``, so memory stays bounded whatever
    is summarised.
    """

    def __init__(self, max_weight: int) -> None:
        self.max_weight = max_weight
        self._data: OrderedDict[int | tuple[str, str], tuple[_Part, tuple[_Facts, ...]]] = (
            OrderedDict()
        )
        self._weight = 0
        self._lock = threading.Lock()

    @staticmethod
    def _weight_of(part: _Part) -> int:
        return (len(part) if isinstance(part, str) else len(part[1])) + _ENTRY_OVERHEAD

    def facts(self, parts: Iterable[_Part]) -> list[_Facts] | None:
        """The facts of each entry, in order (read for the parts not cached yet); None when a
        joined piece cannot be read on its own (split the request instead)."""
        data = self._data
        out: list[_Facts] = []
        with self._lock:
            for part in parts:
                # (a cached string is held by its entry: no other object has its id meanwhile)
                key = id(part) if isinstance(part, str) else part
                held = data.get(key)
                if held is not None:
                    data.move_to_end(key)
                    facts = held[1]
                else:
                    found = _part_facts(part)
                    if found is None:
                        return None
                    facts = found
                    weight = self._weight_of(part)
                    if weight <= self.max_weight:
                        data[key] = (part, facts)
                        self._weight += weight
                        while self._weight > self.max_weight:
                            _key, (old, _facts) = data.popitem(last=False)
                            self._weight -= self._weight_of(old)
                out.extend(facts)
        return out

    def __len__(self) -> int:
        return len(self._data)


class _Digest:
    """What the mock learned from the head, gathered in one pass over the entries' facts."""

    def __init__(self, facts: Iterable[_Facts]) -> None:
        self.user_texts: list[str] = []
        self.assistant_texts: list[str] = []
        self.errors: list[str] = []
        self.findings: list[str] = []
        self.decisions: list[str] = []
        self.actions: list[str] = []
        self.files: dict[str, str] = {}  # path -> "read" | "edited"
        self.commands = 0
        files = self.files
        for fact in facts:
            if fact is _NO_FACTS:
                continue
            if fact.user is not None:
                self.user_texts.append(fact.user)
            elif fact.assistant is not None:
                self.assistant_texts.append(fact.assistant)
                if fact.finding is not None:
                    self.findings.append(fact.finding)
                if fact.decision is not None:
                    self.decisions.append(fact.decision)
            elif fact.action is not None:
                for path, edit in fact.files:
                    if edit:
                        files[path] = "edited"
                    else:
                        files.setdefault(path, "read")
                if fact.command:
                    self.commands += 1
                self.actions.append(fact.action)
            else:
                self.errors.extend(fact.errors)

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
                if line.strip() and INSTRUCTION_LINE.search(line)
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

    ``cache_chars`` bounds the summariser's cache of what each transcript entry says (keyed by
    the entry's label and text, so a hit gives exactly what reading it again would; least
    recently used entries go first). Replay keeps one summariser per session and policy LLM, so
    heads that overlap earlier ones — every re-run after a limit change — cost little.
    """

    name = "mock"
    needs_event_loop = False
    """It awaits only bare yields (between streamed chunks): a replay steps it without a loop."""

    def __init__(
        self,
        context_limit_tokens: int | None = None,
        *,
        cache_chars: int = FACTS_CACHE_CHARS,
    ) -> None:
        self.context_limit_tokens = context_limit_tokens
        """Largest request (estimated tokens) accepted; None: no limit."""
        self.calls = 0
        """Number of summaries written (for tests and diagnostics)."""
        self._facts = _FactsCache(cache_chars)

    def request_tokens(self, messages: Sequence[ChatMessage], prompt: str) -> int:
        """Estimated size of a request: characters / 4 of every message and the prompt."""
        return self._tokens_of([_LENGTH(m.content) for m in messages], prompt)

    @staticmethod
    def _tokens_of(lengths: Iterable[int], prompt: str) -> int:
        """:meth:`request_tokens` of messages of these :data:`_LENGTH` lengths."""
        return sum(map(_TOKENS, lengths)) + _TOKENS(_LENGTH(prompt))

    def refusal(self, request: SizedRequest, prompt: str) -> ContextOverflowError | None:
        """The error :meth:`summarize` of ``request`` would raise: its :meth:`request_tokens`,
        from the lengths of its messages, are over the limit (None: they are not)."""
        if self.context_limit_tokens is None:
            return None
        tokens = self._tokens_of(request.content_lengths(_LENGTH), prompt)
        return self._overflow(tokens) if self._refuses(tokens) else None

    def _refuses(self, input_tokens: int) -> bool:
        """A request of ``input_tokens`` is over the limit."""
        limit = self.context_limit_tokens
        return limit is not None and input_tokens > limit

    def _overflow(self, input_tokens: int) -> ContextOverflowError:
        """The error refusing a request of ``input_tokens``. (Made here and raised by the
        caller: an error held by a local of the frame that raises it would keep that frame, and
        the request it holds, alive until the cycle is collected.)"""
        return ContextOverflowError(
            f"summary request of about {input_tokens:,} tokens exceeds the mock model's "
            f"context limit of {self.context_limit_tokens:,} tokens"
        )

    def write(self, messages: Sequence[ChatMessage], prompt: str, max_tokens: int) -> str:
        """The summary text for a request (synchronous core of :meth:`summarize`)."""
        previous, template_part = extract_previous_summary(prompt)
        headings = section_headings(template_part) or T12.headings
        facts = self._facts.facts(_request_parts(messages))
        if facts is None:
            facts = self._facts.facts(_request_parts(messages, split=True))
            assert facts is not None  # split entries are always readable
        digest = _Digest(facts)
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
        if self._refuses(input_tokens):
            raise self._overflow(input_tokens)
        text = self.write(messages, prompt, max_tokens)
        if on_delta is not None:
            import asyncio  # (only a streamed summary yields: a replay's steps without it)

            for start in range(0, len(text), CHUNK_CHARS):
                on_delta(text[start : start + CHUNK_CHARS])
                await asyncio.sleep(0)  # a cancellation point between chunks
        self.calls += 1
        # (made with ``model_construct``: fields of the right types, nothing to validate; a mock
        # replay builds no pydantic validator, see :func:`core.llm.summary_request.build_request`)
        return SummaryResult.model_construct(
            text=text,
            usage=LLMUsage.model_construct(
                input_tokens=input_tokens,
                output_tokens=estimate_chars4(text),
                provenance=Provenance.ESTIMATED,
            ),
            model=MOCK_MODEL,
            duration_s=time.perf_counter() - started,
        )


__all__ = ["MOCK_MODEL", "MockSummarizer"]
