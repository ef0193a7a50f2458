"""How sizes and token counts are written, in the TUI and the command line alike.

Sizes use decimal units (1 MB = 1,000,000 bytes), as file managers and ``ls -h --si`` show them;
token counts are exact with thousands separators wherever there is room, and abbreviated only in
narrow columns.
"""

from __future__ import annotations

_SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")


def format_bytes(size: int | None, missing: str = "?") -> str:
    """``532 B``, ``12.3 KB``, ``1.2 MB``: decimal units, one decimal above bytes."""
    if size is None:
        return missing
    value = float(size)
    for unit in _SIZE_UNITS:
        if abs(value) < 1000 or unit == _SIZE_UNITS[-1]:
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_tokens(tokens: int) -> str:
    """A token count written out: ``1,234,567``."""
    return f"{tokens:,}"


def compact_tokens(tokens: int) -> str:
    """A token count in at most 6 cells, for list columns: ``9,999``, ``12.3k``, ``123k``,
    ``1.23M``."""
    if tokens < 10_000:
        return f"{tokens:,}"
    if tokens < 100_000:
        return f"{tokens / 1000:.1f}k"
    if tokens < 1_000_000:
        return f"{tokens // 1000}k"
    return f"{tokens / 1_000_000:.2f}M"


def short_tokens(tokens: int) -> str:
    """A token count in at most 5 cells, for gauge labels: ``950``, ``9.5k``, ``168k``,
    ``1.2M``."""
    if tokens < 1_000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1000:.1f}k"
    if tokens < 1_000_000:
        return f"{round(tokens / 1000)}k"
    if tokens < 10_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    return f"{round(tokens / 1_000_000)}M"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one: ``1 compaction``, ``2 compactions``,
    ``1,204 sessions`` (``plural`` where adding an s is wrong)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
