"""How the offline summariser splits a labelled transcript into its entries.

A transcript (:mod:`core.llm.summary_templates`) is a run of entries, each starting on a line of
its own with its label and a colon (``[User]: ...``, ``[Tool result]: ...``). :func:`raw_entries`
gives each entry's label and body as the multi-line regex ``^(label|...):[ ]?`` splits the text,
searching only the line starts that begin with ``[`` (:func:`line_bracket`, at memchr speed).
"""

from __future__ import annotations

import re

from core.llm.summary_templates import ENTRY_LABELS

LABEL_AT = re.compile("(" + "|".join(re.escape(label) for label in ENTRY_LABELS) + "):[ ]?")

_LABEL_SECOND = "".join(sorted({label[1] for label in ENTRY_LABELS}))
"""The characters a label can have after its ``[``: a line start with another one (a tool
output's cut marker ``[... n more characters cut``, a list) is not matched with the regex."""


_FAST_TRIES = 4
"""``[`` found with the one-character search (memchr) before a text with many of them inside
its lines is searched for ``\n[`` itself."""


def line_bracket(text: str, start: int) -> int:
    """Index of the first ``[`` that starts a line, its newline at or after ``start`` (0:
    none): ``text.find("\n[", start) + 1``, faster. A two-character
    search reads every character; the first few ``[`` are looked for alone, at memchr speed,
    and only a text with more of them inside its lines takes the two-character search."""
    at = start
    for _ in range(_FAST_TRIES):
        found = text.find("[", at + 1)
        if found < 0:
            return 0
        if text[found - 1] == "\n":
            return found
        at = found
    return text.find("\n[", at) + 1  # (no line start [ before ``at``: each [ was tried)


def raw_entries(text: str) -> list[tuple[str, str]]:
    """``(label, body)`` of each entry of a labelled transcript (see :mod:`core.llm.summary_templates`): an
    entry runs from its label to the next entry; its body is stripped of newlines at both ends.

    An entry starts at a line that starts with a label and a colon (the regex
    ``^(label|...):[ ]?`` in multi-line mode). Every label starts with ``[``, so only line
    starts followed by ``[`` are tried (:func:`line_bracket`); the rest of the text is skipped
    at C speed. Text before the first entry is not in any.
    """
    at = 0 if text.startswith("[") else line_bracket(text, 0)
    return _entries_from(text, at) if at or text.startswith("[") else []


def piece_entries(text: str) -> list[tuple[str, str]] | None:
    """:func:`raw_entries` of a text that starts with an entry (a piece a transcript was joined
    from); None when it does not start with one (its start would belong to the entry before it
    in the whole transcript, so it cannot be read on its own)."""
    if not text.startswith("[") or LABEL_AT.match(text) is None:
        return None
    return _entries_from(text, 0)


def _entries_from(text: str, at: int) -> list[tuple[str, str]]:
    """The entries of ``text`` from ``at``, 0 or a line start that starts with ``[``, on: one
    pass, each entry cut out once the next one (or the end of the text) is found."""
    entries: list[tuple[str, str]] = []
    label: str | None = None
    body_start = 0
    match_at = LABEL_AT.match
    second = _LABEL_SECOND
    while True:
        match = match_at(text, at) if text[at + 1 : at + 2] in second else None
        if match is not None:
            if label is not None:
                entries.append((label, text[body_start:at].strip("\n")))
            label = match.group(1)
            body_start = match.end()
        at = line_bracket(text, at)
        if not at:
            break
    if label is not None:
        entries.append((label, text[body_start:].strip("\n")))
    return entries


__all__ = ["LABEL_AT", "line_bracket", "piece_entries", "raw_entries"]
