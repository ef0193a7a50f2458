"""Agent version strings, compared the way their release numbers are meant.

Agents write versions as ``2.1.226`` (Claude Code), ``0.144.0-alpha.4`` (Codex Desktop),
``1.18.10`` (opencode) or nothing at all (pi). :func:`parse_version` keeps the numeric release and
orders a pre-release before its release, so that ``0.144.0-alpha.4 < 0.144.0``.
"""

from __future__ import annotations

import re

Version = tuple[int, ...]
"""A release as numbers: ``(2, 1, 226)``; a pre-release ends in ``-1`` so it sorts first."""

_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)(.*)")


def parse_version(text: str | None) -> Version | None:
    """``"2.1.226"`` → ``(2, 1, 226, 0)``; ``"0.144.0-alpha.4"`` → ``(0, 144, 0, -1)``; None for
    anything that does not start with a number."""
    if not text:
        return None
    match = _RELEASE.match(text.strip())
    if match is None:
        return None
    numbers = tuple(int(part) for part in match.group(1).split("."))
    numbers = numbers + (0,) * max(0, 3 - len(numbers))
    suffix = match.group(2).strip()
    prerelease = bool(suffix) and not suffix.startswith("+")  # "+build" is not a pre-release
    return (*numbers, -1 if prerelease else 0)


def in_range(version: str | None, since: str | None, until: str | None) -> bool:
    """Whether ``version`` is at or after ``since`` and before ``until`` (either bound may be
    open). An unknown version is in every range whose lower bound is open."""
    parsed = parse_version(version)
    if parsed is None:
        return since is None
    low = parse_version(since)
    high = parse_version(until)
    return (low is None or parsed >= low) and (high is None or parsed < high)
