"""JSON values nested too deep for recursive code: measured and written without recursion.

A recorded tool call may hold arguments nested thousands of levels deep (a hostile or broken
file). orjson will not write past 255 levels, and Python's own serialisers (``json``, ``repr``,
``msgspec.to_builtins``) stop at the interpreter's recursion limit, so such a value would end a
command in a ``RecursionError``. The loaders hand every tool call's arguments to
:func:`bounded`: a value nested deeper than :data:`MAX_DEPTH` becomes its compact JSON text (the
characters the model was sent), which every later step handles as any string argument.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100
"""Deepest nesting of lists and objects kept as a value; deeper ones are kept as text."""

_FLAT = frozenset({str, int, float, bool, type(None)})
"""Values that hold no other value."""


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` levels deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class _Text(str):
    """Punctuation already written as JSON (told apart from string values on the stack)."""


def dumps(value: Any) -> str:
    """``value`` as compact JSON (``,`` and ``:`` with no spaces, non-ASCII kept), at any depth.
    Values that are not JSON are written as the string of their ``str``."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(_members(list(item.items()), "{", "}", keyed=True))
        elif isinstance(item, (list, tuple)):
            stack.extend(_members(list(item), "[", "]", keyed=False))
        else:
            out.append(_scalar(item))
    return "".join(out)


def bounded(value: Any) -> Any:
    """``value`` itself, or its JSON text when it nests deeper than :data:`MAX_DEPTH`."""
    if type(value) is dict and _FLAT.issuperset(map(type, value.values())):
        return value  # the usual tool arguments: one level of strings and numbers (a set test)
    if isinstance(value, (dict, list)) and deeper_than(value, MAX_DEPTH):
        return dumps(value)
    return value


def _members(items: list[Any], opening: str, closing: str, *, keyed: bool) -> list[Any]:
    """What to push for a container's members (in reverse: the stack pops the first one first)."""
    if not items:
        return [_Text(opening + closing)]
    pushed: list[Any] = [_Text(closing)]
    for position in range(len(items) - 1, -1, -1):
        lead = opening if position == 0 else ","
        if keyed:
            key, member = items[position]
            pushed.extend((member, _Text(lead + _scalar(str(key)) + ":")))
        else:
            pushed.extend((items[position], _Text(lead)))
    return pushed


def _scalar(item: Any) -> str:
    if item is None or isinstance(item, (bool, str, float)):
        return json.dumps(item, ensure_ascii=False)
    if isinstance(item, int):
        try:
            return str(item)
        except ValueError:  # more digits than Python writes: its size instead
            return json.dumps(f"<an integer of {item.bit_length()} bits>")
    return json.dumps(str(item), ensure_ascii=False)
