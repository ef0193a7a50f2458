"""Whether a tool's output states an exit code, and which, read at its ends (the failed commands
of :mod:`core.insights.conversation_facts`), with the reading of ASCII both modules share.

:func:`ends_say_exit` is the pre-test: False only when neither end of the output holds ``exit``
in any case, told from the UTF-8 of the ends without decoding them (most outputs of a session);
:func:`exit_code` is the exact search, on the decoded ends of the outputs that pass it.
"""

from __future__ import annotations

import re

from core.model.session import ToolResult
from core.model.tokens import utf8_head, utf8_tail

FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
"""The characters outside ASCII that a case-blind pattern matches to an ASCII letter (İ ı ſ K)."""
EXIT_CODE = re.compile(
    r"(?:exit(?:ed)?(?: with)?[ _]code|exit status|process exited with code)[\"':=\s]*(-?\d+)",
    re.IGNORECASE,
)
LOWERS_TO_ASCII = ("\u0130", "\u212a")
"""The characters outside ASCII whose lower case holds an ASCII letter (İ, K)."""


def ascii_lower(text: str) -> str:
    """``text.lower()`` as a word pattern (or a search for a piece of ASCII) reads it: every
    character outside ASCII becomes one ``?`` before lowering, which keeps the length and the
    ASCII characters (a character outside ASCII lowers to one character outside ASCII, but for
    :data:`LOWERS_TO_ASCII`: a text with one of those is lowered as it is). Lowering ASCII
    costs a fraction of lowering the rest."""
    if text.isascii() or any(c in text for c in LOWERS_TO_ASCII):
        return text.lower()
    return text.encode("ascii", "replace").decode("ascii").lower()


def occurrences(text: str, piece: str) -> list[int]:
    """Where ``piece`` starts in ``text`` (overlapping occurrences included)."""
    found: list[int] = []
    at = text.find(piece)
    while at >= 0:
        found.append(at)
        at = text.find(piece, at + 1)
    return found


_EXITED_LEAD = len("process ")
"""How far before its ``exit`` a match of :data:`EXIT_CODE` may start."""


def exit_code(text: str) -> re.Match[str] | None:
    """The exit code a tool's output states (every way of stating it says "exit"; the search
    runs only on a text whose lower case holds it): the first match of :data:`EXIT_CODE`,
    which starts at an ``exit`` of the lower case or :data:`_EXITED_LEAD` characters before
    (a text with a character that folds to an ASCII letter is searched whole)."""
    if "x" not in text and "X" not in text:
        return None  # (a text whose lower case holds "exit" holds one: only they lower to "x")
    lowered = ascii_lower(text)  # (positions kept: see :func:`ascii_lower`)
    if "exit" not in lowered:
        return None
    if not text.isascii() and any(c in text for c in FOLDS_TO_ASCII):
        return EXIT_CODE.search(text)
    at = occurrences(lowered, "exit")
    for start in sorted({*at, *(a - _EXITED_LEAD for a in at if a >= _EXITED_LEAD)}):
        found = EXIT_CODE.match(text, start)
        if found is not None:
            return found
    return None


EXIT_ENDS = 2000
"""Characters at either end of a tool's output where an exit code is looked for."""


def ends_say_exit(result: ToolResult) -> bool:
    """Whether either end of ``result``'s output (:data:`EXIT_ENDS` characters) may state an
    exit code, read without decoding the rest of it: False only when neither end's :func:`ascii_lower`
    holds ``exit`` (:func:`exit_code` finds nothing there).

    When it does, the lower case of the end's UTF-8 (ASCII letters lowered, every other byte
    kept) holds it too (:func:`says_exit`): no character outside ASCII lowers to an ``e``,
    ``x`` or ``t``, and the ``i`` of ``İ``'s lower case is followed by a combining dot. The
    UTF-8 read is the window :meth:`ToolResult.output_ends_utf8` gives (about as many bytes as
    characters in a mostly-ASCII output), cut to the bytes decoded for the end's characters
    (:func:`utf8_head`, :func:`utf8_tail`) where it is longer (up to four bytes a character)."""
    first, last = result.output_ends_utf8(EXIT_ENDS)
    if len(first) > _SHORT_ENDS:
        first = first[: utf8_head(first, EXIT_ENDS)[1]]
    if says_exit(first):
        return True
    if last is first:
        return False  # (a short output, read whole)
    if len(last) > _SHORT_ENDS:
        last = last[utf8_tail(last, EXIT_ENDS)[1] :]
    return says_exit(last)


_SHORT_ENDS = 3 * EXIT_ENDS
"""UTF-8 bytes of an end (or of a whole short output) read as they are: decoding the bytes of
an end's characters first costs more than reading as many."""

_BYTES_A_LOOK = 32
"""Bytes of a window for each ``x`` :func:`says_exit` looks around before it lowers the window
instead (a look costs about what lowering and searching 32 bytes does)."""


def says_exit(data: bytes) -> bool:
    """``b"exit" in data.lower()``, looked for around each ``x`` and ``X`` of ``data`` (found by
    ``find``, a scan in C: lowering a window, then searching it, took nine instructions a byte,
    a fifth of the report of a big-output session). An ASCII byte ORed with 32 is its lower
    case, and only ``E``/``e``, ``I``/``i`` and ``T``/``t`` give ``e``, ``i`` and ``t`` so. A
    window with more ``x``s than one a :data:`_BYTES_A_LOOK` bytes is lowered whole."""
    size = len(data)
    looks = size // _BYTES_A_LOOK
    for x in (b"x", b"X"):
        at = data.find(x, 1)
        while 0 < at < size - 2:
            if data[at - 1] | 32 == 101 and data[at + 1] | 32 == 105 and data[at + 2] | 32 == 116:
                return True
            looks -= 1
            if looks < 0:
                return b"exit" in data.lower()
            at = data.find(x, at + 1)
    return False
