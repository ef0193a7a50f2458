""":class:`core.formats.codex_lines.At` (a struct since issue 24) holds what the plain class it
replaced held, for every way the loader makes one (positional, keywords, defaults)."""

from __future__ import annotations

from typing import Any

import pytest

from core.formats.codex_lines import At


class _PlainAt:
    """The class At was: slots set by a Python ``__init__``."""

    __slots__ = ("item_id", "line", "offset", "raw", "replay", "summary_text", "timestamp")

    def __init__(
        self,
        line: int,
        offset: int,
        timestamp: str | None,
        item_id: str | None = None,
        replay: bool = False,
        summary_text: str | None = None,
        raw: bytes | None = None,
    ) -> None:
        self.line = line
        self.offset = offset
        self.timestamp = timestamp
        self.item_id = item_id
        self.replay = replay
        self.summary_text = summary_text
        self.raw = raw


_FIELDS = ("line", "offset", "timestamp", "item_id", "replay", "summary_text", "raw")

_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((3, 120, "2026-04-01T12:00:00.000Z"), {}),
    ((3, 120, None), {}),
    ((7, 0, "t", None, False, None, b'{"timestamp":"t"}'), {}),
    ((9, 5, "t", "line-9#2"), {"replay": True, "summary_text": "the summary"}),
    ((9, 5, "t", "line-9"), {}),
    ((1, 2, "t"), {"raw": b"", "summary_text": ""}),
]


@pytest.mark.parametrize(("args", "kwargs"), _CALLS)
def test_at_holds_what_the_plain_class_held(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    new, old = At(*args, **kwargs), _PlainAt(*args, **kwargs)
    assert [getattr(new, f) for f in _FIELDS] == [getattr(old, f) for f in _FIELDS]
