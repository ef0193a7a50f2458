"""Text from a file name or a session, made safe to print on a terminal.

A file name may hold control characters: ``ESC [ 2 J`` clears the screen, ``ESC ] 0 ;`` sets
the window title, a carriage return overwrites the line. Printed raw, a crafted name takes over
the user's terminal. :func:`safe` shows each control character as an escape (``\\x1b``) and each
byte that is not UTF-8 as ``\\xNN`` (as ``ls -b`` does), so every line printed says what the
name holds and does nothing else.
"""

from __future__ import annotations

import re

from core.model.json_text import printable

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """``text`` with control characters (newlines too) and undecodable bytes as escapes."""
    return _CONTROL.sub(_escaped, printable(text))


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
