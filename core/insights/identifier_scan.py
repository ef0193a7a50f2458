"""The names a text calls and the tests it names (identifiers of
:mod:`core.insights.conversation_facts`), each pattern tried only where one of its matches can
start, not at every character."""

from __future__ import annotations

import re

_FUNCTION = re.compile(r"\b([A-Za-z_][A-Za-z0-9_.]{2,}+)\(")
"""A name called: ``name(`` (``def name(``, ``fn name(`` … give the same name). The run is
possessive (it cannot end before a ``(``, so backtracking into it finds nothing)."""
_TEST_NAME = re.compile(r"\b(test_[A-Za-z0-9_]+|Test[A-Z][A-Za-z0-9_]+)")
"""The test pattern of :mod:`core.insights.conversation_facts` for a text without ``.py::`` (its
third branch cannot match there, and trying it at every character costs more than the rest)."""


def names_of_tests(text: str) -> list[str]:
    """``_TEST_NAME.findall(text)``, the pattern tried only where ``test_`` or ``Test`` occurs
    (every match starts there; a match holding another occurrence is skipped past, as
    findall does)."""
    starts = sorted(occurrences(text, "test_") + occurrences(text, "Test"))
    names: list[str] = []
    end = 0
    for start in starts:
        if start >= end and (found := _TEST_NAME.match(text, start)) is not None:
            names.append(found.group(1))
            end = found.end()
    return names


_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
"""The characters of :data:`_FUNCTION`'s run."""


def function_names(text: str) -> list[str]:
    """``_FUNCTION.findall(text)``, the pattern tried only on the run of name characters before
    each ``(``: every match ends at a ``(`` and starts in the run before it (the run holds no
    ``(``, so that matches of two ``(`` never overlap), and the leftmost start in that run is the
    one findall finds. Searching the run alone skips the scan of every other character."""
    names: list[str] = []
    after = 0  # (just after the previous "(")
    at = text.find("(")
    while at >= 0:
        start = after + len(text[after:at].rstrip(_NAME_CHARS))  # (where the run starts)
        if at - start >= 3:
            found = _FUNCTION.search(text, start, at + 1)
            if found is not None:
                names.append(found.group(1))
        after = at + 1
        at = text.find("(", after)
    return names


def occurrences(text: str, piece: str) -> list[int]:
    """Where ``piece`` starts in ``text`` (overlapping occurrences included)."""
    found: list[int] = []
    at = text.find(piece)
    while at >= 0:
        found.append(at)
        at = text.find(piece, at + 1)
    return found
