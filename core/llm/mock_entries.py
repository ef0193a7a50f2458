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


def entry_starts(text: str) -> list[tuple[int, int, str]]:
    """``(entry start, body start, label)`` of each entry of a labelled transcript.

    An entry starts at a line that starts with a label and a colon (the regex
    ``^(label|...):[ ]?`` in multi-line mode). Every label starts with ``[``, so only line
    starts followed by ``[`` are tried (:func:`line_bracket`); the rest of the text is skipped
    at C speed.
    """
    starts: list[tuple[int, int, str]] = []
    at = 0 if text.startswith("[") else line_bracket(text, 0)
    if at or text.startswith("["):
        while True:
            match = LABEL_AT.match(text, at)
            if match is not None:
                starts.append((at, match.end(), match.group(1)))
            at = line_bracket(text, at)
            if not at:
                break
    return starts


def raw_entries(
    text: str, starts: list[tuple[int, int, str]] | None = None
) -> list[tuple[str, str]]:
    """``(label, body)`` of each entry of a labelled transcript (see :mod:`core.llm.summary_templates`): an
    entry runs from its label to the next entry; its body is stripped of newlines at both ends.
    ``starts``: what :func:`entry_starts` gave for ``text``, when already known."""
    if starts is None:
        starts = entry_starts(text)
    entries: list[tuple[str, str]] = []
    for k, (_start, body_start, label) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        entries.append((label, text[body_start:end].strip("\n")))
    return entries


__all__ = ["LABEL_AT", "entry_starts", "line_bracket", "raw_entries"]
