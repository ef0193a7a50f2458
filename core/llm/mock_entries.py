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
    and only a text with more of them inside its lines takes the two-character search
    (:func:`_entries_after` makes the same search inline)."""
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
    if not at and not text.startswith("["):
        return []
    while True:
        found = LABEL_AT.match(text, at) if text[at + 1 : at + 2] in _LABEL_SECOND else None
        if found is not None:
            return _entries_after(text, found)
        at = line_bracket(text, at)
        if not at:
            return []


def piece_entries(text: str) -> list[tuple[str, str]] | None:
    """:func:`raw_entries` of a text that starts with an entry (a piece a transcript was joined
    from); None when it does not start with one (its start would belong to the entry before it
    in the whole transcript, so it cannot be read on its own)."""
    found = LABEL_AT.match(text)  # (None unless it starts with ``[``: every label does)
    return None if found is None else _entries_after(text, found)


def _entries_after(text: str, found: re.Match[str]) -> list[tuple[str, str]]:
    """The entries of ``text`` from the first one, whose label and colon are ``found``: one
    pass, each entry cut out once the next one (or the end of the text) is found. The line
    starts with ``[`` are found as :func:`line_bracket` finds them (the first few ``[`` by the
    one-character search, then the two characters), inline: most pieces hold one entry and
    one or no other line start with ``[`` (a tool output's cut marker), and a call a piece was
    a good part of reading it (``tests/unit/test_llm_mock.py`` holds the entries to the
    multi-line regex's)."""
    entries: list[tuple[str, str]] = []
    match = LABEL_AT.match
    second = _LABEL_SECOND
    find = text.find
    label, body_start = found.group(1), found.end()
    at = found.start()
    tries = 0
    while True:
        if tries < _FAST_TRIES:
            at = find("[", at + 1)
            if at < 0:
                break
            if text[at - 1] != "\n":
                tries += 1
                continue
        else:
            at = find("\n[", at) + 1
            if not at:
                break
        tries = 0
        following = match(text, at) if text[at + 1 : at + 2] in second else None
        if following is not None:
            entries.append((label, text[body_start:at].strip("\n")))
            label, body_start = following.group(1), following.end()
    entries.append((label, text[body_start:].strip("\n")))
    return entries


__all__ = ["LABEL_AT", "line_bracket", "piece_entries", "raw_entries"]
