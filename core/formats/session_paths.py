"""The sessions a command line names: files, folders (searched for session files) and globs.

``ctxscope fidelity PATH...`` (and every command over many sessions) takes what a user types:
a session file, a folder of them, or a glob the shell did not expand (``'~/.claude/**/*.jsonl'``).
:func:`expand_paths` turns them into the session paths to load, in a stable order, each once. Only
regular files are taken from folders (a FIFO or a device never is: each one named like a session
file is named in the messages, as skipped), and an opencode storage folder counts as one session
source. An argument that names nothing usable says why: a FIFO, a
device, a socket, a loop of symbolic links (:mod:`core.formats.file_kind`).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from core.formats.file_kind import is_regular, unreadable_reason

SESSION_SUFFIXES = (".jsonl", ".json", ".db", ".jsonl.zst")
"""File endings a session may have: JSON Lines transcripts, opencode exports and databases,
Codex rollouts compressed with zstd."""
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
_SIDECAR_SUFFIX = ".meta.json"
"""Claude Code writes ``agent-<id>.meta.json`` (a sub-agent's type) beside its transcript: not a
session, so a folder's walk passes over it."""
_GLOB_CHARS = frozenset("*?[")


def expand_paths(arguments: Sequence[str]) -> tuple[list[Path], list[str]]:
    """The session paths ``arguments`` name, and the messages: one per argument that names none,
    one per file named like a session inside a folder that is skipped because it is not a
    regular file (``PATH: not a regular file (a FIFO), skipped``; names as they are: a printer
    escapes them)."""
    found: list[Path] = []
    seen: set[Path] = set()
    problems: list[str] = []
    for argument in arguments:
        skipped: list[str] = []
        matches = list(_expand_one(argument, skipped))
        problems.extend(skipped)
        if not matches:
            problems.append(f"{argument}: {_why_nothing(argument)}")
        for path in matches:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                found.append(path)
    return found, problems


def _expand_one(argument: str, skipped: list[str]) -> Iterator[Path]:
    expanded = os.path.expanduser(argument)
    if _GLOB_CHARS & set(expanded) and not os.path.lexists(expanded):
        # a pattern; a file whose name holds ``[`` or ``*`` is taken as it is
        for match in sorted(glob.glob(expanded, recursive=True)):
            yield from _expand_path(Path(match), skipped, explicit=False)
        return
    yield from _expand_path(Path(expanded), skipped, explicit=True)


def _expand_path(path: Path, skipped: list[str], *, explicit: bool) -> Iterator[Path]:
    if is_storage_folder(path):
        yield path
    elif _is_dir(path):
        yield from _folder(path, skipped)
    elif is_regular(path) and (explicit or _session_name(path)):
        yield path


def _folder(top: Path, skipped: list[str]) -> Iterator[Path]:
    """Session files below ``top``, depth first in name order; storage folders as one. Walked
    with a stack, not recursion (a folder may be nested thousands deep); a folder that cannot
    be listed (no permission) is passed over, as is anything but a regular file (a FIFO, a
    device, a socket or a broken link named like a session file is added to ``skipped``)."""
    pending: list[Path] = [top]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        below: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            if _entry_is_dir(entry):
                if entry.name in _SKIPPED_DIRS or entry.name.startswith("."):
                    continue
                if is_storage_folder(path):
                    yield path
                else:
                    below.append(path)
            elif _session_name(path) and not entry.name.endswith(_SIDECAR_SUFFIX):
                reason = unreadable_reason(path)
                if reason is None:
                    yield path
                else:
                    skipped.append(f"{path}: {reason}, skipped")
        pending.extend(reversed(below))


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # no permission to look: not a folder we can read
        return False


def _session_name(path: Path) -> bool:
    """Whether ``path`` ends the way a session file does (``.jsonl.zst`` included)."""
    return path.name.endswith(SESSION_SUFFIXES)


def is_storage_folder(path: Path) -> bool:
    """An opencode storage folder (``session/``, ``message/`` and ``part/`` beside each other)."""
    return all(_is_dir(path / name) for name in ("session", "message", "part"))


def _why_nothing(argument: str) -> str:
    path = Path(os.path.expanduser(argument))
    if _GLOB_CHARS & set(argument) and not os.path.lexists(path):
        return "the pattern matches no session file"
    if _is_dir(path):
        return "no session files in this folder"
    return unreadable_reason(path) or "not a session file"
