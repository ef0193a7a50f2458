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
    if not any(map(text.__contains__, _NOT_SIMPLE)):
        return _simple_words(text)
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


_NOT_SIMPLE = ('"', "\\", "\t", "\r", "\n")
"""What :func:`_simple_words` does not read: a double quote, an escape, a blank but the space."""


def _simple_words(text: str) -> list[str]:
    """:func:`shell_words` of a text whose only blank is the space and whose only quote is the
    single one: the pieces between its quotes, alternately outside and inside, split at the
    spaces outside (a word runs on across a quote)."""
    parts = text.split("'")
    if not len(parts) % 2:
        raise ValueError("unclosed quotation")
    words: list[str] = []
    word: str | None = None  # (None: between words; "": an empty quoted word so far)
    for k, part in enumerate(parts):
        if k % 2:  # (inside quotes: all of it, even nothing, is of the word)
            word = part if word is None else word + part
            continue
        if " " not in part:
            if part:
                word = part if word is None else word + part
            continue
        pieces = part.split(" ")
        first = pieces[0]
        if first:
            word = first if word is None else word + first
        if word is not None:
            words.append(word)
        words.extend(filter(None, pieces[1:-1]))
        word = pieces[-1] or None
    if word is not None:
        words.append(word)
    return words
