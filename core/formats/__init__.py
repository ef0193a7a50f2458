"""The loader registry: detect a transcript's format and load it into a :class:`Session`.

Each format lives in its own module ``core/formats/<name>.py`` exposing ``FORMAT``,
``sniff(path, head) -> float`` and ``load(path, *, progress=None) -> Session`` (see
:mod:`core.formats.base`); :data:`LOADERS` lists them in the order detection tries them.
Detection runs the light sniffers of :mod:`core.formats.sniffers`, and only the loader of the
format chosen is imported (:func:`loader_of`): reading a Claude Code transcript loads neither
SQLite nor the other agents' readers.

Usage::

    from core.formats import load_session, detect_format, LoadError

    session = load_session(Path("~/.claude/projects/x/abc.jsonl").expanduser())
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from core.agents.window_evidence import resolve_window
from core.formats import sniffers
from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.compressed import is_compressed
from core.formats.file_kind import unreadable_reason
from core.formats.jsonl import HEAD_BYTES, non_jsonl_reason, read_head
from core.gc_pause import gc_paused
from core.model.session import Session, SourceFormat

__all__ = [
    "LOADERS",  # made on first use by __getattr__
    "LoadError",
    "ProgressCallback",
    "SessionBuilder",
    "available_formats",
    "detect_format",
    "load_session",
    "loader_of",
    "sniff_scores",
]

MIN_CONFIDENCE = 0.5
"""A sniff score below this does not count as a detection."""


class FormatModule(Protocol):
    """What a loader module provides (checked structurally)."""

    FORMAT: SourceFormat
    PARTIAL_READS: bool
    """The loader can read just the first part of a file (``load(..., head_bytes=N)``)."""

    def sniff(self, path: Path, head: bytes) -> float: ...

    def load(self, path: Path, *, progress: ProgressCallback | None = None) -> Session: ...


class PartialFormatModule(FormatModule, Protocol):
    """A loader that can read just the first part of a file (``PARTIAL_READS = True``)."""

    def load(
        self, path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
    ) -> Session: ...


Sniffer = Callable[[Path, bytes], float]


def _sniff_opencode(path: Path, head: bytes) -> float:
    """opencode's confidence: its loader judges folders, ``.json`` files and databases."""
    path = Path(path)
    if sniffers.opencode_needs_loader(path, head):
        return loader_of(SourceFormat.OPENCODE).sniff(path, head)
    return sniffers.sniff_opencode_export(head)


_DETECTION: tuple[tuple[SourceFormat, str, Sniffer], ...] = (
    (SourceFormat.QWEN_CODE, "qwen_code", sniffers.sniff_qwen_code),
    (SourceFormat.CLAUDE_CODE, "claude_code", sniffers.sniff_claude_code),
    (SourceFormat.CODEX, "codex", sniffers.sniff_codex),
    (SourceFormat.PI, "pi", sniffers.sniff_pi),
    (SourceFormat.OPENCODE, "opencode", _sniff_opencode),
    (SourceFormat.GEMINI_CLI, "gemini_cli", sniffers.sniff_gemini_cli),
    (SourceFormat.COPILOT_CLI, "copilot", sniffers.sniff_copilot),
    (SourceFormat.CTXSCOPE, "ctxscope_jsonl", sniffers.sniff_ctxscope_jsonl),
)
"""Every format with its loader module's name and its sniffer, in the order detection tries
them. Qwen Code comes before Claude Code: its envelope is Claude Code's (``uuid``,
``parentUuid``, ``sessionId``, ``type``), so on a tie the more specific reader wins (and Claude
Code's sniffer gives way to a Gemini-style ``message.parts`` payload)."""

_MODULE_NAMES: dict[SourceFormat, str] = {fmt: name for fmt, name, _ in _DETECTION}

if TYPE_CHECKING:
    LOADERS: tuple[FormatModule, ...]
    """The loader modules, in the order detection tries them: one for every
    :class:`SourceFormat` (importing them all; made on first use)."""


def loader_of(fmt: SourceFormat) -> FormatModule:
    """The loader module of ``fmt``, imported on first use."""
    module = importlib.import_module(f"core.formats.{_MODULE_NAMES[fmt]}")
    return cast("FormatModule", module)


def __getattr__(name: str) -> object:
    """``LOADERS``, imported only when asked for (detection does not need the loaders)."""
    if name == "LOADERS":
        return tuple(loader_of(fmt) for fmt, _, _ in _DETECTION)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def available_formats() -> list[SourceFormat]:
    """The formats ctxscope reads, in the order detection tries them."""
    return [fmt for fmt, _, _ in _DETECTION]


def sniff_scores(path: Path, head: bytes) -> dict[SourceFormat, float]:
    """Every loader's confidence that ``path`` (with first bytes ``head``) is its format."""
    scores: dict[SourceFormat, float] = {}
    for fmt, _, sniff in _DETECTION:
        try:
            score = float(sniff(path, head))
        except Exception:  # a sniffer must never break detection
            score = 0.0
        scores[fmt] = max(0.0, min(1.0, score))
    return scores


def _on_disk(path: Path) -> Path:
    """The file or folder ``path`` names on disk.

    ``<opencode.db>#<session id>`` (and ``<storage folder>#<session id>``) name one session of an
    opencode database or storage folder; the part before ``#`` is what exists on disk.
    """
    if "#" in path.name and not path.exists():
        base = Path(str(path).rpartition("#")[0])
        if base.exists():
            return base
    return path


def _check_readable(path: Path, disk: Path) -> None:
    """Raise :class:`LoadError` unless ``disk`` is a regular file or a folder: checked with a
    ``stat`` before anything opens it (opening a FIFO would block, a device may never end)."""
    reason = unreadable_reason(disk, directories=True)
    if reason is not None:
        raise LoadError(f"{path}: {reason}")


def detect_format(path: Path | str) -> SourceFormat:
    """The format of the session at ``path``, read from at most its first 64 KB and its layout.

    A directory is accepted when it is an opencode storage folder; a ``.db`` file is opencode's
    SQLite database. Raises :class:`LoadError` naming the formats tried and why none matched.
    """
    path = Path(path)
    disk = _on_disk(path)
    _check_readable(path, disk)
    if disk.is_dir():
        head = b""
    else:
        try:
            head = read_head(disk, HEAD_BYTES)
        except OSError as exc:
            raise LoadError(f"{path}: cannot read ({exc.strerror or exc})") from None
    scores = sniff_scores(path, head)
    best = max(scores.items(), key=lambda kv: kv[1], default=None)
    if best is not None and best[1] >= MIN_CONFIDENCE:
        return best[0]
    if path.is_dir():
        reason = "a directory that is not an opencode storage folder"
    elif not head:
        reason = "empty file"
    else:
        try:
            size = path.stat().st_size
        except OSError:
            size = len(head) + 1
        reason = non_jsonl_reason(head, whole_file=size <= len(head))
    tried = ", ".join(fmt.value for fmt, _, _ in _DETECTION)
    raise LoadError(f"{path}: not a session: tried {tried} ({reason})")


def load_session(
    path: Path | str,
    *,
    format: SourceFormat | str | None = None,  # noqa: A002 - the public keyword
    window: int | None = None,
    progress: ProgressCallback | None = None,
) -> Session:
    """Load the session at ``path`` (detecting its format unless ``format`` is given).

    ``window`` overrides the context window (``window_source`` becomes ``"user"``); otherwise the
    window comes from the file, the table of (provider, model) or the recording's own evidence
    (:mod:`core.agents.window_evidence`).
    ``progress`` receives ``(bytes_read, total_bytes, messages_so_far)``.
    The file is only read, and only a regular file (or an opencode folder) is opened: a FIFO, a
    device, a socket or a loop of symbolic links is a :class:`LoadError` before any ``open``.
    Raises :class:`LoadError` with one clear sentence.
    """
    path = Path(path)
    _check_readable(path, _on_disk(path))
    if format is None:
        fmt = detect_format(path)
    else:
        try:
            fmt = SourceFormat(format)
        except ValueError:
            known = ", ".join(f.value for f in SourceFormat)
            raise LoadError(f"unknown format {format!r} (known: {known})") from None
    with gc_paused():
        session = loader_of(fmt).load(path, progress=progress)
    resolve_window(session, window)
    return session


def load_session_head(
    path: Path | str,
    head_bytes: int,
    *,
    format: SourceFormat | str | None = None,  # noqa: A002 - the public keyword
    window: int | None = None,
) -> Session | None:
    """The session as far as the complete lines of the file's first ``head_bytes`` bytes go.

    A quick first part of a big file, to show while the whole of it loads: what it holds is
    what :func:`load_session` gives for a file cut there (the tool call whose result comes later
    has no result yet, a branch chosen later is not known). ``metadata["partial"]`` says how
    much was read: ``{"bytes_read": ..., "total_bytes": ...}``.

    None when the file is not bigger than ``head_bytes`` or its format is not read line by
    line (opencode's JSON and SQLite). Raises :class:`LoadError` like :func:`load_session`,
    also when the head holds no complete record.
    """
    path = Path(path)
    try:
        total = path.stat().st_size
    except OSError:
        raise LoadError(f"{path}: no such file or directory") from None
    if not path.is_file() or total <= head_bytes or is_compressed(path):
        return None  # (a compressed stream has no "first N bytes" of its session to stop at)
    fmt = detect_format(path) if format is None else SourceFormat(format)
    module = loader_of(fmt)
    if not module.PARTIAL_READS:
        return None
    with gc_paused():
        session = cast("PartialFormatModule", module).load(path, head_bytes=head_bytes)
    session.metadata["partial"] = {"bytes_read": head_bytes, "total_bytes": total}
    resolve_window(session, window)
    return session
