"""The facts of a stretch of conversation, and whether a text keeps them: no LLM needed.

:func:`extract_facts` reads messages (the head a compaction replaced) and lists what a summary of
them should not lose, each with the message it came from:

===================  ===========================================================================
``file_read``        a path a read tool opened
``file_written``     a path a write, edit or patch tool changed
``command``          a shell command the model ran
``failed_command``   a command (or tool call) that failed, with its error line
``instruction``      a sentence of the user's stating an instruction or a constraint ("don't …",
                     "always …", "make sure …")
``identifier``       a function, a test, a branch or a URL named in the conversation
``decision``         a sentence of the model's stating a decision or a finding ("decided …",
                     "instead of …", "the root cause is …")
``open_task``        a task of the last to-do list (TodoWrite, todowrite, update_plan, ``- [ ]``)
                     not done yet
===================  ===========================================================================

:func:`keeps` says whether a text keeps a fact, on normalised words (lower case, JSON escapes
undone, split at anything that is not a letter, a digit or ``_``): a path, a URL or an identifier
is kept when its words appear in a row (a path by its last two components or its file name); a
command when its program and first arguments all appear; an instruction, a decision, a task or an
error line when most of its content words do. A text that holds the head verbatim keeps every
fact.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any, Literal

from core.insights.identifier_scan import function_names, names_of_tests, occurrences
from core.insights.shell_words import shell_words
from core.model.session import Message, Role, ToolResult
from core.model.tokens import arguments_text, utf8_head, utf8_tail

FactKind = Literal[
    "file_read",
    "file_written",
    "command",
    "failed_command",
    "instruction",
    "identifier",
    "decision",
    "open_task",
]
FACT_KINDS: tuple[FactKind, ...] = (
    "file_read",
    "file_written",
    "command",
    "failed_command",
    "instruction",
    "identifier",
    "decision",
    "open_task",
)

OVERLAP = 0.6
"""Share of a sentence's content words a text must hold to keep it."""

_READ_TOOLS = {"read", "view", "read_file", "readfile", "cat", "notebookread", "open_file"}
_WRITE_TOOLS = {
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "write_file",
    "edit_file",
    "create_file",
    "str_replace_editor",
    "str_replace_based_edit_tool",
}
_PATCH_TOOLS = {"apply_patch", "patch"}
_SHELL_TOOLS = {
    "bash",
    "shell",
    "exec_command",
    "local_shell",
    "local_shell_call",
    "powershell",
    "run_command",
    "run_terminal_cmd",
    "exec",
    "shell_command",
    "terminal",
}
_TODO_TOOLS = {"todowrite", "update_plan", "todo_write"}
_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "filename", "file")
_COMMAND_KEYS = ("command", "cmd", "commands")

_WORD = re.compile(r"[a-z0-9_]+")
_ESCAPES = re.compile(r"\\[nrt\"\\/]")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "not",
        "but",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "you",
        "your",
        "our",
        "its",
        "it's",
        "then",
        "than",
        "them",
        "they",
        "their",
        "there",
        "here",
        "when",
        "what",
        "which",
        "who",
        "will",
        "would",
        "can",
        "could",
        "should",
        "must",
        "also",
        "just",
        "only",
        "all",
        "any",
        "each",
        "every",
        "some",
        "more",
        "most",
        "other",
        "such",
        "use",
        "using",
        "used",
        "make",
        "sure",
        "don't",
        "do",
        "does",
        "did",
        "done",
        "been",
        "being",
        "about",
        "after",
        "before",
        "over",
        "under",
        "again",
    ]
)
_SENTENCE = re.compile(r"\s(?:(?<=[.!?]\s)\s*|(?<=\n)\n*)")
r"""Where sentences split: the blanks after a ``.``, ``!`` or ``?``, else a run of newlines
(``(?<=[.!?])\s+|\n+``, written to start with a blank so that the search skips to the
blanks instead of trying each character)."""
_SENTENCE_CUT = re.compile(f"({_SENTENCE.pattern})")
""":data:`_SENTENCE` kept in the pieces of a split."""
_INSTRUCTION = re.compile(
    r"\b(don'?t|do not|never|always|must|should|shouldn'?t|make sure|ensure|only|avoid|"
    r"without|instead|prefer|keep|remember|important|no need|not allowed|required?)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decided|decision|instead of|root cause|the fix is|the (?:issue|problem|bug) (?:is|was)|"
    r"going with|i'?ll use|we'?ll use|chose|approach is|plan is|switch(?:ed)? to)\b",
    re.IGNORECASE,
)
_MARKER_WORDS = {
    _INSTRUCTION.pattern: (
        "don",
        "do not",
        "never",
        "always",
        "must",
        "should",
        "make sure",
        "ensure",
        "only",
        "avoid",
        "without",
        "instead",
        "prefer",
        "keep",
        "remember",
        "important",
        "no need",
        "not allowed",
        "require",
    ),
    _DECISION.pattern: (
        "deci",
        "instead of",
        "root cause",
        "the fix is",
        "the issue",
        "the problem",
        "the bug",
        "going with",
        "ll use",
        "chose",
        "approach is",
        "plan is",
        "switch",
    ),
}
"""For each marker (by its pattern's text: a compiled pattern's hash is worked out over its
compiled code at every lookup, 2 µs, where its text keeps its hash), pieces of lower-case text
one of which every match of it holds."""
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
"""The characters outside ASCII that a case-blind pattern matches to an ASCII letter (İ ı ſ K)."""
_EXIT_CODE = re.compile(
    r"(?:exit(?:ed)?(?: with)?[ _]code|exit status|process exited with code)[\"':=\s]*(-?\d+)",
    re.IGNORECASE,
)
_ERROR_LINE = re.compile(
    r"\b(error|exception|traceback|failed|failure|fatal|panic|not found|no such file|denied|"
    r"cannot|can't|unable to)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://[^\s\"'<>()\[\]{}`]+")
_TEST = re.compile(r"\b(test_[A-Za-z0-9_]+|Test[A-Z][A-Za-z0-9_]+|[\w/.-]+\.py::[\w:\[\]-]+)")
_BRANCH = re.compile(
    r"git[ \t]+(?:checkout[ \t]+(?:-[bB][ \t]+)?|switch[ \t]+(?:-[cC][ \t]+)?|"
    r"branch[ \t]+(?:-[mMdD][ \t]+)?|"
    # push [options] REMOTE BRANCH: the remote (origin) is no branch; a bare "git push origin"
    # names none, and the word on the next line is not one either.
    r"push(?:[ \t]+-[-\w=]+)*[ \t]+[^\s-]\S*[ \t]+(?:-[-\w=]+[ \t]+)*)([A-Za-z0-9][\w./-]*)"
)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[ \]\s+(.+)$", re.MULTILINE)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_PLAIN = re.compile(r"[\x21\x23-\x26\x28-\x5b\x5d-\x7e \t\r\n]*")
"""A command segment :func:`shell_words` (and :func:`shlex.split`) splits at its blanks alone: printable ASCII and the
blanks shlex knows, without a quote or a backslash."""
_MAX_SENTENCE = 300
_MAX_PER_MESSAGE = 5


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a head: what it is, how it reads, where it came from."""

    kind: FactKind
    text: str
    """The fact as it reads in the conversation (a path, a command, a sentence …)."""
    message_index: int
    """The message it came from (session index)."""
    keys: tuple[str, ...]
    """Normalised word runs; a text keeps the fact when it holds one of them (see
    :func:`keeps`); empty for the facts matched on their content words."""
    detail: str | None = None
    """The error line of a failed command; ``function``, ``test``, ``branch`` or ``url`` for an
    identifier."""

    @property
    def identity(self) -> tuple[str, str]:
        """Two facts with the same identity are one (the first source is kept)."""
        return self.kind, _joined_words(self.text)


# -- normalised text ----------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """``text`` as normalised words (see the module docstring): ``_WORD.findall(_ESCAPES.sub(" ",
    text.lower()))``, read in ASCII (:func:`ascii_lower`) by a table of bytes that lowers the
    letters and blanks every other character, then split at the blanks (a fraction of the
    pattern's cost)."""
    is_ascii = text.isascii()
    if not is_ascii and any(c in text for c in _LOWERS_TO_ASCII):
        return _WORD.findall(_ESCAPES.sub(" ", text.lower()))
    if "\\" in text:  # (an escape is ASCII: replacing the rest with ``?`` first changes none)
        text = _ESCAPES_ANY_CASE.sub(" ", text)
    data = text.encode("ascii") if is_ascii else text.encode("ascii", "replace")
    return data.translate(_WORD_BYTES).decode("ascii").split()


_ESCAPES_ANY_CASE = re.compile(r"\\[nrtNRT\"\\/]")
""":data:`_ESCAPES` before lowering (lowering keeps the length and makes ``\\N`` an ``\\n``)."""
_WORD_BYTES = bytes(
    ord(chr(c).lower()) if c < 128 and (chr(c).isalnum() or c == 95) else 32 for c in range(256)
)
"""For each byte of ASCII: its lower case when :data:`_WORD` reads it as part of a word, else a
blank (``bytes.translate`` reads a byte a step, where the ``str.translate`` of a mapping looked
each distinct character of a text up in it)."""


_LOWERS_TO_ASCII = ("\u0130", "\u212a")
"""The characters outside ASCII whose lower case holds an ASCII letter (İ, K)."""


def ascii_lower(text: str) -> str:
    """``text.lower()`` as :data:`_WORD` (or a search for a piece of ASCII) reads it: every
    character outside ASCII becomes one ``?`` before lowering, which keeps the length and the
    ASCII characters (a character outside ASCII lowers to one character outside ASCII, but for
    :data:`_LOWERS_TO_ASCII`: a text with one of those is lowered as it is). Lowering ASCII
    costs a fraction of lowering the rest."""
    if text.isascii() or any(c in text for c in _LOWERS_TO_ASCII):
        return text.lower()
    return text.encode("ascii", "replace").decode("ascii").lower()


@lru_cache(maxsize=4096)  # (a session runs the same commands and names the same paths again)
def _joined_words(text: str) -> str:
    """:func:`words` of ``text`` joined by spaces (a fact's identity)."""
    return " ".join(words(text))


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (three letters or more, not a stop word)."""
    return {w for w in words(text) if len(w) >= 3 and w not in _STOP}


class NormalisedText:
    """A text prepared for :func:`keeps`: its word run and its set of words."""

    __slots__ = ("joined", "vocabulary")

    def __init__(self, text: str) -> None:
        run = words(text)
        self.joined = " " + " ".join(run) + " "
        self.vocabulary = set(run)

    def has_run(self, key: str) -> bool:
        """The text holds ``key``'s words in a row (a key whose words it does not all hold is
        answered from the set, without scanning the text). The run is searched from its end:
        a summary names files and identifiers in its last sections (a replay's mock summary
        found its keys 10,400 characters in and 400 from its end, on average)."""
        if not key or not self.vocabulary.issuperset(key.split(" ")):
            return False
        return self.joined.rfind(f" {key} ") >= 0

    def overlap(self, text: str) -> float:
        wanted = content_words(text)
        if not wanted:
            return 1.0 if self.has_run(" ".join(words(text))) else 0.0
        return len(wanted & self.vocabulary) / len(wanted)


def keeps(summary: NormalisedText, fact: Fact) -> bool:
    """``summary`` keeps ``fact`` (see the module docstring)."""
    if fact.kind == "command":  # (every word of its keys, sets compared in C)
        return all(map(summary.vocabulary.issuperset, map(str.split, fact.keys)))
    if fact.kind == "failed_command":
        return summary.overlap(fact.detail or fact.text) >= OVERLAP
    if fact.keys:
        return any(summary.has_run(key) for key in fact.keys)
    return summary.overlap(fact.text) >= OVERLAP


# -- extraction ---------------------------------------------------------------------------------


class FactMemo:
    """The facts of each message, found once and reused by every head that holds the message
    (the heads of a session's recorded compactions and of its replay's overlap).

    A message's facts depend on it alone, but for a tool result's, which depend on the call it
    answers (when the head holds that call): those are kept per call. The memo holds the
    messages it has seen, so that their ids stay theirs while it lives; use one per session.
    """

    __slots__ = ("_of",)

    def __init__(self) -> None:
        self._of: dict[tuple[int, int], _MessageFacts] = {}

    def facts(self, message: Message, calls: dict[str, tuple[Message, str, Any]]) -> _MessageFacts:
        """The facts of ``message`` given the calls before it in its head: those of the call a
        tool result answers, when its head holds it."""
        result = message.tool_result
        source = (
            None
            if result is None or message.summary or message.role is not Role.TOOL
            else calls.get(result.call_id)
        )
        key = (id(message), -1 if source is None else id(source[0]))
        found = self._of.get(key)
        if found is None:
            box: list[list[Fact]] = []
            facts = [(f.identity, f) for f in _facts_of(message, calls, box, source)]
            found = self._of[key] = (facts, box[-1] if box else None, message, source)
        return found


_MessageFacts = tuple[
    list[tuple[tuple[str, str], Fact]], list[Fact] | None, Message, tuple[Message, str, Any] | None
]
"""One message's facts with their identities, the to-do list it leaves (None: it leaves the
previous one as it was), and the message and the call it answers (held: their ids key the
memo). A tuple: one made for every message of every head."""


def extract_facts(messages: Iterable[Message], memo: FactMemo | None = None) -> list[Fact]:
    """The facts of ``messages``, each once (its first source), in order of appearance.
    ``memo`` reuses the facts of messages an earlier call has read (one per session)."""
    memo = FactMemo() if memo is None else memo
    facts: dict[tuple[str, str], Fact] = {}
    todos: list[Fact] = []
    calls: dict[str, tuple[Message, str, Any]] = {}
    for message in messages:
        found, left, _message, _source = memo.facts(message, calls)
        for identity, fact in found:
            if identity not in facts:
                facts[identity] = fact
        if left is not None:
            todos = left
        if message.role is Role.ASSISTANT and not message.summary:
            for call in message.tool_calls:
                calls[call.id] = (message, call.name, call.arguments)
    for fact in todos:
        facts.setdefault(fact.identity, fact)
    return list(facts.values())


def _facts_of(
    message: Message,
    calls: dict[str, tuple[Message, str, Any]],
    todos: list[list[Fact]],
    source: tuple[Message, str, Any] | None,
) -> Iterator[Fact]:
    """The facts of one message; each to-do list it states is appended to ``todos`` (the last
    one stands), ``source`` is the call a tool result answers."""
    if message.summary:
        # A previous summary restates the conversation in its own words: its sentences are
        # not the user's instructions (the user's own messages give those).
        yield from _identifiers(message.text, message.index)
        return
    if message.role is Role.USER and message.is_turn_start:
        yield from _sentences(message, "instruction", _INSTRUCTION)
        yield from _identifiers(message.text, message.index)
        _checklist(message, todos)
    elif message.role is Role.ASSISTANT:
        yield from _sentences(message, "decision", _DECISION)
        yield from _identifiers(message.text, message.index, functions=True)
        _checklist(message, todos)
        for call in message.tool_calls:
            yield from _tool_call(message, call.name, call.arguments, todos)
    elif message.role is Role.TOOL and message.tool_result is not None:
        yield from _failure(message, source)


def _may_match(text: str, marker: re.Pattern[str]) -> bool:
    """False when ``marker`` cannot match ``text``: its lower case holds none of the marker's
    words (substring tests, much cheaper than the case-blind search; a text with a character
    that folds to an ASCII letter goes to the search)."""
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return True
    return any(map(text.lower().__contains__, _MARKER_WORDS[marker.pattern]))


_LEAD = {"ll use": 4}
"""Characters a marker's match may start before the piece it holds (``i'll use``, ``we'll
use``); every other piece starts its match."""


def _matches(text: str, marker: re.Pattern[str]) -> bool:
    """``marker.search(text)`` found something: the marker tried only where one of its pieces
    occurs in the lower case (a match starts there, or :data:`_LEAD` characters before), not
    at every character. A text with a character that folds to an ASCII letter (the only ones
    whose lower case differs in length or may match a piece unseen) goes to the search."""
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return marker.search(text) is not None
    lowered = text.lower()
    match = marker.match
    for piece in _MARKER_WORDS[marker.pattern]:
        lead = _LEAD.get(piece, 0)
        at = lowered.find(piece)
        while at >= 0:
            for start in range(max(at - lead, 0), at + 1):
                if match(text, start) is not None:
                    return True
            at = lowered.find(piece, at + 1)
    return False


_SENTENCE_EDGE = " -*#>\t"
"""What a sentence is stripped of at both ends."""


def marked_sentences(text: str, marker: re.Pattern[str]) -> Iterator[str]:
    """The sentences of ``text`` (split at :data:`_SENTENCE`, stripped of
    :data:`_SENTENCE_EDGE`) of 12 to :data:`_MAX_SENTENCE` characters that ``marker`` matches, in
    order.

    The text's matches are found once (:func:`_match_starts`), and a sentence holds a match
    when one starts within it: no match crosses a split (a marker's words are joined by single
    spaces after letters, never by a newline or a blank after ``.!?``) nor starts or ends on a
    stripped character, and the characters around a sentence are not word characters, so that
    ``\\b`` reads them as the sentence's own ends. A text with a character that folds to an ASCII
    letter is searched sentence by sentence (:func:`_matches`)."""
    starts = _match_starts(text, marker)
    if starts is None:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip(_SENTENCE_EDGE)
            if 12 <= len(sentence) <= _MAX_SENTENCE and _matches(sentence, marker):
                yield sentence
        return
    if not starts:
        return  # (most messages: no sentence of theirs can qualify)
    # The stretch of the text that holds the matches, cut at its splits, kept: [sentence, split,
    # sentence, ..., sentence], and where each part begins; only the sentences a match starts in
    # are looked at.
    first, stop = _cut_before(text, starts[0]), _cut_after(text, starts[-1])
    parts = _SENTENCE_CUT.split(text[first:stop] if first or stop < len(text) else text)
    begins = list(accumulate(map(len, parts), initial=first))
    last = -1
    for start in starts:
        at = bisect_right(begins, start) - 1
        if at % 2 or at == last:
            continue  # (a split, or a sentence already looked at)
        piece = parts[at]
        sentence = piece.strip(_SENTENCE_EDGE)
        if not 12 <= len(sentence) <= _MAX_SENTENCE:
            continue
        left = begins[at] + len(piece) - len(piece.lstrip(_SENTENCE_EDGE))
        if left <= start < left + len(sentence):
            last = at
            yield sentence
        elif start < left:
            continue  # (a later match may start within it)
        else:
            last = at


def _cut_before(text: str, at: int) -> int:
    """The last place at or before ``at`` where a split of :data:`_SENTENCE` ends and a
    sentence starts whatever comes before it (0 if none): just after a newline, on a character
    that is not blank. A split is a run of blanks, of which one ending in a newline followed by
    a character that is not blank ends there (a run of newlines, or the blanks after ``.!?``),
    and the splits after it read no character before it: the text from there splits as the
    whole text does from there."""
    newline = text.rfind("\n", 0, at)
    while newline >= 0:
        if not text[newline + 1].isspace():  # (``\s`` and ``isspace`` are the same characters)
            return newline + 1
        newline = text.rfind("\n", 0, newline)
    return 0


def _cut_after(text: str, at: int) -> int:
    """Just after the first newline after ``at`` (the text's end if none): a newline is in a
    split, so the sentence ``at`` is in ends before it, and the text up to there splits as the
    whole text does up to that sentence's end."""
    return text.find("\n", at) + 1 or len(text)


def _match_starts(text: str, marker: re.Pattern[str]) -> list[int] | None:
    """Where ``marker`` matches ``text`` (every start of a match, ascending), tried only where
    one of its pieces occurs (as :func:`_matches` does); None for a text with a character that
    folds to an ASCII letter."""
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return None
    lowered = ascii_lower(text)  # (positions kept: the pieces are ASCII without ``?``)
    match = marker.match
    starts: set[int] = set()
    # (the pieces that occur at all, told by ``in`` in one C loop: most texts hold none)
    for piece in filter(lowered.__contains__, _MARKER_WORDS[marker.pattern]):
        lead = _LEAD.get(piece, 0)
        at = lowered.find(piece)
        while at >= 0:
            for start in range(max(at - lead, 0), at + 1):
                if start not in starts and match(text, start) is not None:
                    starts.add(start)
            at = lowered.find(piece, at + 1)
    return sorted(starts)


def _sentences(message: Message, kind: FactKind, marker: re.Pattern[str]) -> Iterator[Fact]:
    found = 0
    for sentence in marked_sentences(message.text, marker):
        if len(content_words(sentence)) < 2:
            continue
        yield Fact(kind, sentence, message.index, ())
        found += 1
        if found >= _MAX_PER_MESSAGE:
            return


def _identifiers(text: str, index: int, *, functions: bool = False) -> Iterator[Fact]:
    # Each pattern runs only on a text holding what it must start with: the same matches, without
    # scanning every text with every pattern.
    urls = _URL.findall(text) if "http" in text else ()
    tests: Sequence[str] = ()
    if ".py::" in text:
        tests = _TEST.findall(text)
    elif "test_" in text or "Test" in text:
        tests = names_of_tests(text)
    calls = function_names(text) if functions and "(" in text else ()
    branches = _BRANCH.findall(text) if "git" in text else ()
    for url in urls:
        url = url.rstrip(".,;:!?")
        key = " ".join(w for w in words(url) if w not in ("http", "https", "www"))
        if key:
            yield Fact("identifier", url, index, (key,), "url")
    for name in tests:
        yield Fact("identifier", name, index, (" ".join(words(name)),), "test")
    for name in calls:
        if "_" in name or any(c.isupper() for c in name[1:]) or "." in name:
            yield Fact("identifier", name, index, (" ".join(words(name)),), "function")
    for branch in branches:
        yield Fact("identifier", branch, index, (" ".join(words(branch)),), "branch")


def _tool_call(
    message: Message, name: str, arguments: Any, todos: list[list[Fact]]
) -> Iterator[Fact]:
    tool = name.lower().rsplit("__", 1)[-1]
    index = message.index
    if tool in _TODO_TOOLS:
        todos.append(list(_open_tasks(arguments, index)))
        return
    if tool in _PATCH_TOOLS:
        for path in _patched_paths(arguments):
            yield _path_fact("file_written", path, index)
        return
    if tool in _READ_TOOLS or tool in _WRITE_TOOLS:  # (their arguments alone name a path)
        path = _first(arguments, _PATH_KEYS)
        if path:
            yield _path_fact("file_read" if tool in _READ_TOOLS else "file_written", path, index)
    elif tool in _SHELL_TOOLS:
        command = command_of(arguments)
        if command:
            yield _command_fact(command, index)
            yield from _identifiers(command, index)


_PATH_SEPARATORS = re.compile(r"[/\\]+")


def _path_fact(kind: FactKind, path: str, index: int) -> Fact:
    text, keys = _path_keys(path)
    return Fact(kind, text, index, keys)


@lru_cache(maxsize=4096)  # (a session reads and edits the same files again and again)
def _path_keys(path: str) -> tuple[str, tuple[str, ...]]:
    """A path fact's text and keys: its last two components, and its file name when the name
    has an extension and a stem of four characters or more."""
    parts = [p for p in _PATH_SEPARATORS.split(path.strip()) if p]
    keys = [" ".join(words("/".join(parts[-2:])))]
    name = parts[-1] if parts else path
    stem = name.rsplit(".", 1)[0]
    if "." in name and len(stem) >= 4:
        keys.append(" ".join(words(name)))
    return path.strip(), tuple(k for k in keys if k)


def _command_fact(command: str, index: int) -> Fact:
    return Fact("command", command, index, (_command_key(command),))


@lru_cache(maxsize=4096)  # (the heads of successive compactions hold the same commands)
def _command_key(command: str) -> str:
    """The program and its first two arguments that are not options, after any ``cd … &&``."""
    stripped = command.strip()
    line = stripped.splitlines()[0] if stripped else ""
    segment = line  # (a line of one command: its segment, ``cd`` or not)
    if "&" in line or ";" in line or "|" in line:
        segments = _SEGMENT_SPLIT.split(line)
        segment = segments[-1]
        for candidate in segments:
            if not candidate.strip().startswith("cd "):
                segment = candidate
                break
    # (no quote, escape or odd space: shlex would split the same; a single quote, which many
    # commands hold (``sed -n '1,200p' …``), is told by ``in`` before the pattern runs)
    if "'" not in segment and _PLAIN.fullmatch(segment):
        tokens = segment.split()
    else:
        try:
            tokens = shell_words(segment)
        except ValueError:
            tokens = segment.split()
    # The first three tokens that are neither an option nor a variable set before the program
    # (``=`` before any ``/``), in one loop that stops there (a command's key is made once per
    # distinct command, but every command of a session is one).
    chosen: list[str] = []
    for token in tokens:
        if token.startswith("-") or "=" in token.partition("/")[0]:
            continue
        chosen.append(token)
        if len(chosen) == 3:
            break
    # (one call for the tokens joined by a blank: a blank is no part of a word nor of an escape)
    return " ".join(words(" ".join(chosen)))


_SEGMENT_SPLIT = re.compile(r"&&|;|\|\|")
"""Where a command line splits into the commands :func:`_command_key` chooses from."""


def command_of(arguments: Any) -> str:
    """The shell command a tool call's arguments hold (a string, or an argv list)."""
    value = _first(arguments, _COMMAND_KEYS) if isinstance(arguments, dict) else arguments
    if isinstance(value, list):
        strings = [str(v) for v in value]
        if len(strings) >= 3 and strings[1] in ("-lc", "-c"):
            return strings[2]
        return " ".join(strings)
    return value if isinstance(value, str) else ""


def _first(arguments: Any, keys: Sequence[str]) -> Any:
    if not isinstance(arguments, dict) or arguments.keys().isdisjoint(keys):
        return None
    for key in keys:
        value = arguments.get(key)
        if value:
            return value
    return None


def _patched_paths(arguments: Any) -> list[str]:
    text = arguments if isinstance(arguments, str) else arguments_text(arguments)
    text = text.replace("\\n", "\n")
    paths: list[str] = []
    for match in _PATCH_FILE.finditer(text):
        path = (match.group(2) or match.group(3) or "").strip().strip('"')
        if path:
            paths.append(path)
    return paths


def _open_tasks(arguments: Any, index: int) -> Iterator[Fact]:
    if not isinstance(arguments, dict):
        return
    items = arguments.get("todos") or arguments.get("plan") or []
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending")).lower()
        text = str(item.get("content") or item.get("step") or item.get("title") or "").strip()
        if text and status not in ("completed", "done", "cancelled"):
            yield Fact("open_task", text, index, ())


def _checklist(message: Message, todos: list[list[Fact]]) -> None:
    boxes = _CHECKBOX.findall(message.text) if "[ ]" in message.text else ()
    if boxes:
        todos.append([Fact("open_task", box.strip(), message.index, ()) for box in boxes])


_EXITED_LEAD = len("process ")
"""How far before its ``exit`` a match of :data:`_EXIT_CODE` may start."""


def _exit_code(text: str) -> re.Match[str] | None:
    """The exit code a tool's output states (every way of stating it says "exit"; the search
    runs only on a text whose lower case holds it): the first match of :data:`_EXIT_CODE`,
    which starts at an ``exit`` of the lower case or :data:`_EXITED_LEAD` characters before
    (a text with a character that folds to an ASCII letter is searched whole)."""
    if "x" not in text and "X" not in text:
        return None  # (a text whose lower case holds "exit" holds one: only they lower to "x")
    lowered = ascii_lower(text)  # (positions kept: see :func:`ascii_lower`)
    if "exit" not in lowered:
        return None
    if not text.isascii() and any(c in text for c in _FOLDS_TO_ASCII):
        return _EXIT_CODE.search(text)
    at = occurrences(lowered, "exit")
    for start in sorted({*at, *(a - _EXITED_LEAD for a in at if a >= _EXITED_LEAD)}):
        found = _EXIT_CODE.match(text, start)
        if found is not None:
            return found
    return None


_EXIT_ENDS = 2000
"""Characters at either end of a tool's output where an exit code is looked for."""


def _ends_say_exit(result: ToolResult) -> bool:
    """Whether either end of ``result``'s output (:data:`_EXIT_ENDS` characters) may state an
    exit code, read without decoding the rest of it: False only when neither end's :func:`ascii_lower`
    holds ``exit`` (:func:`_exit_code` finds nothing there).

    When it does, the lower case of the end's UTF-8 (ASCII letters lowered, every other byte
    kept) holds it too: no character outside ASCII lowers to an ``e``, ``x`` or ``t``, and the
    ``i`` of ``İ``'s lower case is followed by a combining dot. The UTF-8 read is the bytes
    decoded for the end's characters (:func:`utf8_head`, :func:`utf8_tail`: about as many bytes
    as characters in a mostly-ASCII output), not the whole window that holds them (four bytes a
    character: lowering 16 KB an output was a fifth of the report of a big-output session)."""
    first, last = result.output_ends_utf8(_EXIT_ENDS)
    if len(first) > _SHORT_ENDS:
        first = first[: utf8_head(first, _EXIT_ENDS)[1]]
    if b"exit" in first.lower():
        return True
    if last is first:
        return False  # (a short output, read whole)
    if len(last) > _SHORT_ENDS:
        last = last[utf8_tail(last, _EXIT_ENDS)[1] :]
    return b"exit" in last.lower()


_SHORT_ENDS = 3 * _EXIT_ENDS
"""UTF-8 bytes of an end (or of a whole short output) lowered as they are: decoding the bytes of
an end's characters first costs more than lowering as many."""


def _failure(message: Message, source: tuple[Message, str, Any] | None) -> Iterator[Fact]:
    result = message.tool_result
    assert result is not None
    if not result.is_error:  # (a result the tool marked failed needs no exit code)
        if not _ends_say_exit(result):
            return  # (most outputs: no end of theirs states an exit code, none is decoded)
        head, tail = result.output_ends(_EXIT_ENDS)  # (a shorter output's end is its start: None)
        code = _exit_code(head)
        if code is None and tail is not None:
            code = _exit_code(tail)
        if code is None or code.group(1) in ("0",):
            return
    line = error_line(result.output)
    if source is not None:
        _call_message, name, arguments = source
        text = command_of(arguments) or f"{name} {arguments_text(arguments)[:120]}"
    else:
        text = result.tool_name or "a tool call"
    yield Fact("failed_command", text.strip(), message.index, (), line)
    yield from _identifiers(line, message.index)


def error_line(output: str) -> str:
    """The line of a failed tool's output that says what went wrong (else its last line)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if _ERROR_LINE.search(line) and not _EXIT_CODE.fullmatch(line):
            return line[:_MAX_SENTENCE]
    return lines[-1][:_MAX_SENTENCE] if lines else ""
