"""Splitting a shell command into its words as :func:`shlex.split` does, a piece at a time (the
command keys of :mod:`core.insights.conversation_facts` read every command a session ran)."""

from __future__ import annotations

import re

_SHELL_PART = re.compile(
    r"""([ \t\r\n]+)|([^ \t\r\n'"\\]+)|'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.S
)
"""One piece of a shell word as :func:`shlex.split` reads it: blanks (its four), plain
characters, a single-quoted text, a double-quoted one (with its escapes) or an escaped
character."""
_QUOTED_ESCAPE = re.compile(r"\\(.)", re.S)


def _unescape_quoted(match: re.Match[str]) -> str:
    """Inside double quotes a backslash escapes only a backslash or a double quote."""
    char = match.group(1)
    return char if char in '\\"' else match.group(0)


def shell_words(text: str) -> list[str]:
    """``shlex.split(text)`` (POSIX rules, no comments): the same words, and a
    :class:`ValueError` for the same texts (an unclosed quote, a final backslash), read a piece
    at a time by one regular expression rather than a character at a time by :mod:`shlex`
    (tests/unit/test_shell_words.py compares the two)."""
    words: list[str] = []
    word: str | None = None  # (None: between words; "": an empty quoted word so far)
    pos, end = 0, len(text)
    while pos < end:
        match = _SHELL_PART.match(text, pos)
        if match is None:
            raise ValueError(f"unclosed quotation or escape at {pos}")
        pos = match.end()
        blank, plain, single, double, escaped = match.groups()
        if blank is not None:
            if word is not None:
                words.append(word)
                word = None
            continue
        if double is not None:
            piece = _QUOTED_ESCAPE.sub(_unescape_quoted, double)
        else:
            piece = plain if plain is not None else single if single is not None else escaped
        word = piece if word is None else word + piece
    if word is not None:
        words.append(word)
    return words
