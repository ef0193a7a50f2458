"""The loader registry: detect a transcript's format and load it into a :class:`Session`.

Each format lives in its own module ``core/formats/<name>.py`` exposing ``FORMAT``,
``sniff(path, head) -> float`` and ``load(path, *, progress=None) -> Session`` (see
:mod:`core.formats.base`). Modules are imported lazily, on first use; a module that does not
exist (yet) is skipped, so the registry works with whichever loaders are installed.

Usage::

    from core.formats import load_session, detect_format, LoadError

    session = load_session(Path("~/.claude/projects/x/abc.jsonl").expanduser())
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

from core.formats.base import LoadError, ProgressCallback, SessionBuilder
from core.formats.jsonl import HEAD_BYTES, non_jsonl_reason, read_head
from core.gc_pause import gc_paused
from core.models import Session, SourceFormat, WindowSource

__all__ = [
    "FORMAT_MODULES",
    "LoadError",
    "ProgressCallback",
    "SessionBuilder",
    "available_formats",
    "detect_format",
    "load_session",
    "sniff_scores",
]

FORMAT_MODULES: tuple[str, ...] = ("claude_code", "codex", "pi", "opencode", "ctxscope_jsonl")
"""Loader modules under ``core.formats``, in the order they are tried."""

MIN_CONFIDENCE = 0.5
"""A sniff score below this does not count as a detection."""

_WINDOW_SOURCES: tuple[WindowSource, ...] = ("recorded", "table", "user", "unknown")


class FormatModule(Protocol):
    """What a loader module provides (checked structurally)."""

    FORMAT: SourceFormat

    def sniff(self, path: Path, head: bytes) -> float: ...

    def load(self, path: Path, *, progress: ProgressCallback | None = None) -> Session: ...


class PartialFormatModule(FormatModule, Protocol):
    """A loader that can read just the first part of a file (``PARTIAL_READS = True``)."""

    def load(
        self, path: Path, *, progress: ProgressCallback | None = None, head_bytes: int | None = None
    ) -> Session: ...


_loaded: dict[str, FormatModule | None] = {}


def _module(name: str) -> FormatModule | None:
    """Import ``core.formats.<name>`` once; None when it does not exist or is incomplete."""
    if name not in _loaded:
        mod: ModuleType | None
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise  # the module exists but one of its imports is missing: a real bug
            mod = None
        ok = mod is not None and all(hasattr(mod, a) for a in ("FORMAT", "sniff", "load"))
        _loaded[name] = cast(FormatModule, mod) if ok else None
    return _loaded[name]


def _modules() -> list[FormatModule]:
    return [m for name in FORMAT_MODULES if (m := _module(name)) is not None]


def _format_names() -> list[str]:
    """The names of the formats the registry tries (installed loaders only, in order)."""
    return [m.FORMAT.value for m in _modules()]


def available_formats() -> list[SourceFormat]:
    """The formats whose loader module is present."""
    return [m.FORMAT for m in _modules()]


def _by_format(fmt: SourceFormat) -> FormatModule:
    for mod in _modules():
        if fmt == mod.FORMAT:
            return mod
    raise LoadError(f"no loader for format {fmt.value!r} is installed")


def _tried() -> str:
    return ", ".join(_format_names()) or "no loader installed"


def sniff_scores(path: Path, head: bytes) -> dict[SourceFormat, float]:
    """Every installed loader's confidence that ``path`` (with first bytes ``head``) is its format."""
    scores: dict[SourceFormat, float] = {}
    for mod in _modules():
        try:
            score = float(mod.sniff(path, head))
        except Exception:  # a sniffer must never break detection
            score = 0.0
        scores[mod.FORMAT] = max(0.0, min(1.0, score))
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


def detect_format(path: Path | str) -> SourceFormat:
    """The format of the session at ``path``, read from at most its first 64 KB and its layout.

    A directory is accepted when it is an opencode storage folder; a ``.db`` file is opencode's
    SQLite database. Raises :class:`LoadError` naming the formats tried and why none matched.
    """
    path = Path(path)
    disk = _on_disk(path)
    if not disk.exists():
        raise LoadError(f"{path}: no such file or directory")
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
    raise LoadError(f"{path}: not a session: tried {_tried()} ({reason})")


def _windows_function(name: str) -> Any:
    """A function of ``core.windows`` (the model table), or None when it is not available."""
    try:
        return getattr(importlib.import_module("core.windows"), name, None)
    except ModuleNotFoundError:
        return None


def _resolve_window(session: Session, window: int | None) -> None:
    if session.max_output_tokens is None:
        max_output = _windows_function("lookup_max_output")
        if max_output is not None:
            try:
                limit = max_output(session.model)
            except Exception:  # a broken table must not make a session unloadable
                limit = None
            if isinstance(limit, int) and limit > 0:
                session.max_output_tokens = limit
    if window is not None:
        session.context_window = window
        session.window_source = "user"
        return
    if session.context_window is not None:
        return
    lookup = _windows_function("lookup_window")
    if lookup is not None:
        try:
            size, source = lookup(session.model)
        except Exception:  # a broken table must not make a session unloadable
            size, source = None, "unknown"
        if size:
            session.context_window = int(size)
            if source in _WINDOW_SOURCES:
                session.window_source = source
            else:
                session.window_source = "table"
                session.metadata["window_source_detail"] = str(source)
            return
    default = session.metadata.get("default_window")
    if isinstance(default, int) and default > 0:
        session.context_window = default
        session.window_source = "table"


def load_session(
    path: Path | str,
    *,
    format: SourceFormat | str | None = None,  # noqa: A002 - the public keyword
    window: int | None = None,
    progress: ProgressCallback | None = None,
) -> Session:
    """Load the session at ``path`` (detecting its format unless ``format`` is given).

    ``window`` overrides the context window (``window_source`` becomes ``"user"``); otherwise a
    window the file does not record is looked up by model in ``core.windows`` when available.
    ``progress`` receives ``(bytes_read, total_bytes, messages_so_far)``.
    The file is only read. Raises :class:`LoadError` with one clear sentence.
    """
    path = Path(path)
    if not _on_disk(path).exists():
        raise LoadError(f"{path}: no such file or directory")
    if format is None:
        fmt = detect_format(path)
    else:
        try:
            fmt = SourceFormat(format)
        except ValueError:
            known = ", ".join(f.value for f in SourceFormat)
            raise LoadError(f"unknown format {format!r} (known: {known})") from None
    with gc_paused():
        session = _by_format(fmt).load(path, progress=progress)
    _resolve_window(session, window)
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
    if not path.is_file() or total <= head_bytes:
        return None
    fmt = detect_format(path) if format is None else SourceFormat(format)
    module = _by_format(fmt)
    if not getattr(module, "PARTIAL_READS", False):
        return None
    with gc_paused():
        session = cast("PartialFormatModule", module).load(path, head_bytes=head_bytes)
    session.metadata["partial"] = {"bytes_read": head_bytes, "total_bytes": total}
    _resolve_window(session, window)
    return session
