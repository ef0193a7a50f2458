"""T15: cap a tool output for the model, keep the whole output on disk.

One entry point, :func:`truncate` (text + :class:`TruncateOptions` → :class:`TruncationResult`),
plus :func:`truncate_tool_output`, which reads the limits of one tool from a
:class:`~core.policy.TruncationPolicy`, and :class:`StreamingTruncator`, which does the same to an
unbounded byte stream in constant memory.

The rules (SPEC §4, numbers from opencode and pi, the middle form from Codex):

* **Fast path.** An output of at most ``max_lines`` lines and ``max_bytes`` UTF-8 bytes is
  returned unchanged and nothing is written. Lines are counted as ``text.split("\\n")`` counts
  them, so a trailing newline ends in one last empty line (as opencode and pi count).
* **Head / tail.** Whole lines are kept from the start (or, walking back, from the end). A line
  costs its UTF-8 length plus one byte for the newline that joins it to the previous kept line.
  The walk stops at whichever limit trips first; the marker counts removed *bytes* when the byte
  limit tripped, else removed *lines*. When not even one whole line fits (a minified JSON line,
  a base64 blob), the preview keeps a UTF-8-safe cut of that line instead of nothing.
* **Middle** (Codex). Over the byte limit it keeps ``max_bytes // 2`` bytes from the start and
  the rest of the budget from the end, cut on code-point boundaries; over the line limit it keeps
  ``ceil(max_lines / 2)`` lines from the start and ``floor(max_lines / 2)`` from the end. The
  marker ``…N tokens truncated…`` / ``…N chars truncated…`` sits inline between the two parts.
* **Spill** (:mod:`core.algorithms.spill`). The full output is written (0600 file, 0700 folder, temp file
  + ``os.replace``) under a time-ordered name of our own,
  ``tool_<11 hex ms><4 hex counter><12 hex random>``; no tool name or call id ever reaches a
  path. A failed write never raises: the truncated content comes back with a notice that the
  full output could not be saved. Files of that pattern older than the retention are deleted
  lazily, once per process and folder; other files are left alone.
* **Simulation** (``spill=False``): the same content, naming the path the file would have had,
  with nothing written and nothing read from disk. The replay engine runs this for every output.
"""

from __future__ import annotations

import math
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.algorithms.spill import (
    SPILL_NAME_RE,
    SpillFile,
    cleanup_spill_dir,
    default_spill_dir,
    new_spill_name,
    resolve_spill_dir,
    would_be_spill_name,
)
from core.policy import DEFAULT_HINT, Direction, TruncationPolicy

__all__ = [
    "SPILL_FAILED_NOTICE",
    "SPILL_NAME_RE",
    "StreamingTruncator",
    "TruncateOptions",
    "TruncationResult",
    "cleanup_spill_dir",
    "default_spill_dir",
    "new_spill_name",
    "resolve_spill_dir",
    "truncate",
    "truncate_tool_output",
    "would_be_spill_name",
]

Unit = Literal["lines", "bytes", "tokens", "chars"]
Limit = Literal["lines", "bytes"]
Reason = Literal["within_limits", "truncated", "tool_truncated", "disabled"]

SPILL_FAILED_NOTICE = (
    "This tool output was too long, so only part of it is shown here. The complete output "
    "could not be saved ({error}), so the rest of it is not available; run the tool again "
    "with a narrower request if you need it."
)
"""Replaces the hint when the spill write failed: the model must not be sent to a missing file."""

_SCAN_CHARS = 1 << 18  # piece size for counting, encoding and writing a big output


class TruncateOptions(BaseModel):
    """How :func:`truncate` and :class:`StreamingTruncator` cut one output."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    max_lines: int = Field(default=2000, ge=0)
    """Most lines the model is shown (0: no line limit)."""
    max_bytes: int = Field(default=51200, ge=0)
    """Most UTF-8 bytes the model is shown (the preview; marker and hint come on top)."""
    direction: Direction = "head"
    """Keep the ``head``, the ``tail``, or both ends around an inline marker (``middle``)."""
    middle_unit: Literal["tokens", "chars"] = "tokens"
    """Unit of the middle marker: ``…N tokens truncated…`` (removed bytes / 4, rounded up) or
    ``…N chars truncated…`` (removed characters)."""
    hint_template: str = DEFAULT_HINT
    """Text after the marker telling the model where the full output is; ``{path}`` is replaced
    by the spill file. Empty: no hint."""
    spill: bool = True
    """Write the full output to the spill folder. False simulates: same content, naming the
    would-be path, nothing written or read on disk."""
    spill_dir: str | None = None
    """Spill folder (None: ``$XDG_DATA_HOME/ctxscope/tool-output``, default
    ``~/.local/share/ctxscope/tool-output``)."""
    spill_name: str | None = None
    """File name to use instead of a fresh time-ordered one (must match ``tool_`` + 27 hex
    digits); replay passes a name derived from the call id so simulations are deterministic."""
    retention_days: float = Field(default=7.0, gt=0)
    """Spill files of ours older than this are deleted, lazily, once per process and folder."""
    enabled: bool = True
    """Truncate at all; False returns every output unchanged."""
    tool_truncated: bool = False
    """The tool already truncated its own output (opencode ``metadata.truncated``): return it
    unchanged."""

    @field_validator("spill_name")
    @classmethod
    def _our_name_only(cls, value: str | None) -> str | None:
        if value is not None and not SPILL_NAME_RE.fullmatch(value):
            raise ValueError("must be 'tool_' followed by 27 lowercase hex digits")
        return value


class TruncationResult(BaseModel):
    """What the model sees, and why."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    truncated: bool
    """The output was cut (``content`` differs from the input)."""
    reason: Reason
    """``within_limits``, ``truncated``, ``tool_truncated`` (the tool opted out) or ``disabled``."""
    content: str
    """The text the model sees: the input itself, or preview + marker + hint."""
    preview: str
    """The part of the output that was kept (for middle: head and tail joined, no marker)."""
    direction: Direction
    """Which part was kept."""
    removed: int = 0
    """How much was removed, in ``unit``."""
    unit: Unit | None = None
    """Unit of ``removed``: ``bytes`` or ``lines`` (head/tail), ``tokens`` or ``chars`` (middle)."""
    limit_hit: Limit | None = None
    """The limit that ended the walk (``lines`` or ``bytes``); None when nothing was cut."""
    partial_line: bool = False
    """Not one whole line fitted, so the preview is a UTF-8-safe cut of a single line."""
    max_lines: int
    """Line limit applied (0: none)."""
    max_bytes: int
    """Byte limit applied."""
    total_lines: int
    """Lines in the output (``split("\\n")`` count)."""
    total_bytes: int
    """UTF-8 bytes in the output."""
    kept_lines: int
    """Lines (whole or cut) in the preview."""
    kept_bytes: int
    """UTF-8 bytes in the preview."""
    output_path: str | None = None
    """Where the full output is (or, when simulating, would be); None when it is not saved."""
    spilled: bool = False
    """The full output was actually written to ``output_path``."""
    spill_error: str | None = None
    """Why the full output could not be saved (the content then says so instead of the hint)."""

    def explain(self) -> str:
        """One line saying what happened to this output."""
        size = f"{self.total_lines} lines, {self.total_bytes} bytes"
        if self.reason == "disabled":
            return f"not truncated: truncation is off for this tool ({size})"
        if self.reason == "tool_truncated":
            return f"not truncated: the tool truncated its own output ({size})"
        if not self.truncated:
            return (
                f"within limits ({size} <= {self.max_lines or 'any'} lines, "
                f"{self.max_bytes} bytes): unchanged"
            )
        text = (
            f"{self.direction} kept {self.kept_lines} lines / {self.kept_bytes} bytes of {size}; "
            f"{self.limit_hit} limit hit, {self.removed} {self.unit} removed"
        )
        if self.partial_line:
            text += "; one over-long line cut"
        if self.spill_error:
            return f"{text}; {self.spill_error}"
        if self.spilled:
            return f"{text}; full output saved to {self.output_path}"
        return f"{text}; full output would be saved to {self.output_path}"


# --- public entry points -----------------------------------------------------------------------

_DEFAULT_OPTIONS = TruncateOptions()


def truncate(text: str, options: TruncateOptions | None = None) -> TruncationResult:
    """Cut ``text`` for the model as ``options`` say, spilling the full text unless simulating.

    Never raises on I/O: a failed spill is reported in ``spill_error`` and in the content.
    """
    opts = options if options is not None else _DEFAULT_OPTIONS
    if not opts.enabled or opts.tool_truncated:
        return _unchanged(text, opts, "disabled" if not opts.enabled else "tool_truncated")
    max_lines, max_bytes = opts.max_lines, opts.max_bytes
    directory = _spill_dir(opts.spill_dir)
    name = opts.spill_name or ""

    if len(text) <= max_bytes:  # a str has at least as many bytes as chars: it may fit
        data = text.encode("utf-8")  # a memcpy for ASCII, and the byte length otherwise
        total_bytes, total_lines = len(data), _count_newlines(data) + 1
        if total_bytes <= max_bytes and (not max_lines or total_lines <= max_lines):
            return _unchanged(text, opts, "within_limits", total_lines, total_bytes)
        name = name or new_spill_name()
        spill_file = SpillFile(directory, name, opts.retention_days) if opts.spill else None
        if spill_file is not None:
            spill_file.write(data)
        head, tail = _windows(data, total_bytes, max_bytes, opts.direction)
        head_newlines = -1
    else:  # over the byte limit: one pass in pieces counts, keeps the windows, writes the spill
        name = name or new_spill_name()
        spill_file = SpillFile(directory, name, opts.retention_days) if opts.spill else None
        head_size, tail_size = _window_sizes(max_bytes, opts.direction)
        total_bytes, total_lines, head, tail, head_newlines = _scan(
            text, spill_file, head_size, tail_size
        )

    cut = _cut(head, tail, total_bytes, total_lines, opts, head_newlines)
    dropped_chars = 0
    if opts.direction == "middle" and opts.middle_unit == "chars":
        dropped_chars = len(text) - len(cut.prefix_text) - len(cut.suffix_text)
    error = spill_file.commit() if spill_file is not None else None
    path = os.path.join(directory, name)
    return _build(cut, opts, total_bytes, total_lines, dropped_chars, path, opts.spill, error)


_default_dirs: dict[tuple[str | None, str | None], str] = {}


def _spill_dir(spill_dir: str | None) -> str:
    """:func:`resolve_spill_dir`, the default folder looked up once per value of the variables
    it depends on (a replay asks once per truncated output)."""
    if spill_dir:
        return resolve_spill_dir(spill_dir)
    key = (os.environ.get("XDG_DATA_HOME"), os.environ.get("HOME"))
    directory = _default_dirs.get(key)
    if directory is None:
        directory = _default_dirs[key] = resolve_spill_dir(None)
    return directory


def truncate_tool_output(
    text: str,
    *,
    tool_name: str | None,
    call_id: str | None,
    policy: TruncationPolicy,
    spill: bool = True,
    subagent: bool | None = None,
    truncated_by_tool: bool = False,
) -> TruncationResult:
    """Truncate one tool output under ``policy``: its per-tool limits, opt-out and hint.

    ``subagent`` picks the delegate-to-a-sub-agent hint (None: ``policy.use_subagent_hint``).
    ``truncated_by_tool`` is the tool's own opt-out (``ToolResult.truncated_by_tool``), honoured
    when ``policy.respect_tool_truncation``. With ``spill=False`` (simulation) the would-be file
    name is derived from ``call_id`` by hashing, so a replay produces the same content each run.
    """
    enabled, max_lines, max_bytes, direction = policy.limits_for(tool_name)
    use_subagent = policy.use_subagent_hint if subagent is None else subagent
    options = TruncateOptions(
        max_lines=max_lines,
        max_bytes=max_bytes,
        direction=direction,
        middle_unit=policy.middle_unit,
        hint_template=policy.subagent_hint_template if use_subagent else policy.hint_template,
        spill=spill,
        spill_dir=policy.spill_dir,
        spill_name=None if spill or call_id is None else would_be_spill_name(call_id),
        retention_days=policy.retention_days,
        enabled=enabled,
        tool_truncated=truncated_by_tool and policy.respect_tool_truncation,
    )
    return truncate(text, options)


# --- the cut itself (shared by the in-memory and the streaming forms) --------------------------


class _Cut:
    """Where the kept part starts and ends, in a form both forms can compute from bounded windows."""

    __slots__ = (
        "kept_lines",
        "limit_hit",
        "partial_line",
        "prefix",
        "prefix_text",
        "removed_bytes",
        "removed_lines",
        "suffix",
        "suffix_text",
    )

    def __init__(
        self,
        prefix: bytes,
        suffix: bytes,
        kept_lines: int,
        limit_hit: Limit,
        removed_bytes: int,
        removed_lines: int,
        partial_line: bool = False,
    ) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.prefix_text = prefix.decode("utf-8", "replace")
        self.suffix_text = suffix.decode("utf-8", "replace")
        self.kept_lines = kept_lines
        self.limit_hit = limit_hit
        self.removed_bytes = removed_bytes
        self.removed_lines = removed_lines
        self.partial_line = partial_line


def _window_sizes(max_bytes: int, direction: Direction) -> tuple[int, int]:
    """Bytes of the start and of the end of the output that decide the cut."""
    if direction == "head":
        return max_bytes + 1, 0
    if direction == "tail":
        return 0, max_bytes + 1
    return max_bytes + 1, max_bytes + 1


def _windows(data: bytes, total: int, max_bytes: int, direction: Direction) -> tuple[bytes, bytes]:
    head_size, tail_size = _window_sizes(max_bytes, direction)
    head = data[: min(total, head_size)]
    tail = data[total - min(total, tail_size) :] if tail_size else b""
    return head, tail


def _measure(text: str, sink: SpillFile | None = None) -> tuple[int, int]:
    """``(UTF-8 bytes, lines)`` of ``text`` in one pass of encoded pieces, each also written to
    ``sink``; no full-size copy of a big output is made."""
    total_bytes, lines, _, _, _ = _scan(text, sink, 0, 0)
    return total_bytes, lines


def _scan(
    text: str, sink: SpillFile | None, head_size: int, tail_size: int
) -> tuple[int, int, bytes, bytes, int]:
    """``(UTF-8 bytes, lines, head, tail, head newlines)`` of ``text`` from one encoding of it,
    in pieces (each also written to ``sink``): ``head`` is its first ``head_size`` bytes, ``tail``
    its last ``tail_size`` (fewer when the output is shorter, empty for a size of 0), ``head
    newlines`` the newlines in ``head`` when they were counted on the way (else -1).

    An output of one piece is encoded whole and its windows are slices of that encoding; a longer
    one keeps only its windows, so no full-size copy of a big output is made.
    """
    if len(text) <= _SCAN_CHARS:
        data = text.encode("utf-8")
        if sink is not None:
            sink.write(data)
        total = len(data)
        tail = data[total - min(total, tail_size) :] if tail_size else b""
        if not head_size:
            return total, _count_newlines(data) + 1, b"", tail, -1
        # The newlines counted in two parts, the head's on their own: the head cut needs them.
        head = data[:head_size]
        head_newlines = _count_newlines(head)
        rest = _count_newlines(data[head_size:]) if total > head_size else 0
        return total, head_newlines + rest + 1, head, tail, head_newlines
    return (*_scan_pieces(text, sink, head_size, tail_size), -1)


def _scan_pieces(
    text: str, sink: SpillFile | None, head_size: int, tail_size: int
) -> tuple[int, int, bytes, bytes]:
    """:func:`_scan` of an output of several pieces, holding only its two windows."""
    total_bytes, newlines = 0, 0
    head, tail = bytearray(), bytearray()
    for start in range(0, len(text), _SCAN_CHARS):
        piece = text[start : start + _SCAN_CHARS].encode("utf-8")
        total_bytes += len(piece)
        newlines += _count_newlines(piece)
        if sink is not None:
            sink.write(piece)
        if len(head) < head_size:
            head += piece[: head_size - len(head)]
        if tail_size:
            tail += piece
            if len(tail) > 2 * tail_size:
                del tail[:-tail_size]
    return total_bytes, newlines + 1, bytes(head), bytes(tail[-tail_size:] if tail_size else b"")


def _count_newlines(data: bytes) -> int:
    """Newlines in ``data``.

    ``bytes.count`` of one byte walks byte by byte; ``replace`` finds them with memchr, about
    three times faster. Pieces keep the temporary copy small and in cache.
    """
    if len(data) <= _SCAN_CHARS:
        return len(data) - len(data.replace(b"\n", b""))
    count = 0
    for start in range(0, len(data), _SCAN_CHARS):
        piece = data[start : start + _SCAN_CHARS]
        count += len(piece) - len(piece.replace(b"\n", b""))
    return count


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _safe_end(buf: bytes, cut: int) -> int:
    """Largest code-point boundary <= ``cut`` in ``buf``."""
    cut = min(cut, len(buf))
    while 0 < cut < len(buf) and _is_continuation(buf[cut]):
        cut -= 1
    return cut


def _safe_start(buf: bytes, start: int) -> int:
    """Smallest code-point boundary >= ``start`` in ``buf``."""
    start = max(start, 0)
    while start < len(buf) and _is_continuation(buf[start]):
        start += 1
    return start


def _nth_newline(buf: bytes, count: int) -> int:
    """Index of the ``count``-th newline of ``buf`` (1-based), -1 if there are fewer."""
    if _count_newlines(buf) < count:
        return -1
    pos = -1
    for _ in range(count):
        pos = buf.find(b"\n", pos + 1)
    return pos


def _nth_newline_from_end(buf: bytes, count: int) -> int:
    """Index of the ``count``-th newline of ``buf`` counted from the end, -1 if fewer."""
    if _count_newlines(buf) < count:
        return -1
    pos = len(buf)
    for _ in range(count):
        pos = buf.rfind(b"\n", 0, pos)
    return pos


def _lines_in(piece: bytes) -> int:
    return _count_newlines(piece) + 1 if piece else 0


def _cut(
    head: bytes,
    tail: bytes,
    total: int,
    lines: int,
    opts: TruncateOptions,
    head_newlines: int = -1,
) -> _Cut:
    """Compute the kept part of an output that is over a limit.

    ``head`` is the output's first ``min(total, max_bytes + 1)`` bytes, ``tail`` its last as many
    (each only when the direction needs it); nothing else of the output is looked at.
    ``head_newlines``: the newlines in ``head`` when known (-1: counted here if needed).
    """
    max_lines, max_bytes = opts.max_lines, opts.max_bytes
    line_cap = lines if not max_lines or lines <= max_lines else max_lines

    if opts.direction == "head":
        if line_cap < lines:
            end = _nth_newline(head, line_cap)
            if end != -1 and end <= max_bytes:
                return _Cut(head[:end], b"", line_cap, "lines", total - end, lines - line_cap)
        end = head.rfind(b"\n", 0, max_bytes + 1)
        if end == -1:  # the first line alone is over the byte limit: keep a safe cut of it
            end = _safe_end(head, max_bytes)
            return _Cut(head[:end], b"", 1, "bytes", total - end, lines - 1, partial_line=True)
        if head_newlines < 0:
            kept = _count_newlines(head[:end]) + 1
        else:  # (the head's newlines less those from the cut on: at most a line's worth)
            kept = head_newlines - _count_newlines(head[end:]) + 1
        return _Cut(head[:end], b"", kept, "bytes", total - end, lines - kept)

    if opts.direction == "tail":
        window = len(tail)
        if line_cap < lines:
            start = _nth_newline_from_end(tail, line_cap)
            if start != -1 and window - start - 1 <= max_bytes:
                kept_bytes = window - start - 1
                return _Cut(
                    b"", tail[start + 1 :], line_cap, "lines", total - kept_bytes, lines - line_cap
                )
        start = tail.find(b"\n", window - max_bytes - 1)
        if start == -1:  # the last line alone is over the byte limit
            begin = _safe_start(tail, window - max_bytes)
            kept_bytes = window - begin
            return _Cut(
                b"", tail[begin:], 1, "bytes", total - kept_bytes, lines - 1, partial_line=True
            )
        suffix = tail[start + 1 :]
        kept = _count_newlines(suffix) + 1
        return _Cut(b"", suffix, kept, "bytes", total - len(suffix), lines - kept)

    # middle: positions below are absolute offsets into the output
    tail_base = total - len(tail)
    limit: Limit = "lines"
    if total > max_bytes:
        left = max_bytes // 2
        prefix_end = _safe_end(head, left)
        suffix_start = tail_base + _safe_start(tail, total - (max_bytes - left) - tail_base)
        limit = "bytes"
    else:
        prefix_end, suffix_start = total, 0
    if line_cap < lines:
        head_lines, tail_lines = (line_cap + 1) // 2, line_cap // 2
        newline = _nth_newline(head, head_lines)
        if newline != -1 and newline + 1 < prefix_end:
            prefix_end, limit = newline + 1, "lines"
        if tail_lines == 0:
            line_start = total
        else:
            newline = _nth_newline_from_end(tail, tail_lines)
            line_start = tail_base + newline + 1 if newline != -1 else 0
        if line_start > suffix_start:
            suffix_start, limit = line_start, "lines"
    prefix = head[:prefix_end]
    suffix = tail[suffix_start - tail_base :]
    # Lines touched by the preview, a line cut in two counted once (0-based line numbers).
    last_in_prefix = _count_newlines(prefix) - (1 if not prefix or prefix.endswith(b"\n") else 0)
    first_in_suffix = lines - _lines_in(suffix)
    kept_lines = (last_in_prefix + 1) + (lines - first_in_suffix)
    kept_lines -= max(0, last_in_prefix - first_in_suffix + 1)
    return _Cut(prefix, suffix, kept_lines, limit, suffix_start - prefix_end, lines - kept_lines)


def _hint(opts: TruncateOptions, path: str, error: str | None) -> str:
    if error is not None:
        return SPILL_FAILED_NOTICE.replace("{error}", error)
    return opts.hint_template.replace("{path}", path)


def _build(
    cut: _Cut,
    opts: TruncateOptions,
    total_bytes: int,
    total_lines: int,
    dropped_chars: int,
    path: str,
    spilled: bool,
    error: str | None,
) -> TruncationResult:
    hint = _hint(opts, path, error)
    removed: int
    unit: Unit
    if opts.direction == "middle":
        if opts.middle_unit == "chars":
            removed, unit = dropped_chars, "chars"
        elif cut.limit_hit == "bytes":
            removed, unit = math.ceil((total_bytes - opts.max_bytes) / 4), "tokens"
        else:
            removed, unit = math.ceil(cut.removed_bytes / 4), "tokens"
        preview = cut.prefix_text + cut.suffix_text
        content = f"{cut.prefix_text}…{removed} {unit} truncated…{cut.suffix_text}"
        if hint:
            content = f"{content}\n\n{hint}"
    else:
        if cut.limit_hit == "bytes":
            removed, unit = cut.removed_bytes, "bytes"
        else:
            removed, unit = cut.removed_lines, "lines"
        marker = f"...{removed} {unit} truncated..."
        notice = f"{marker}\n\n{hint}" if hint else marker
        if opts.direction == "head":
            preview = cut.prefix_text
            content = f"{preview}\n\n{notice}"
        else:
            preview = cut.suffix_text
            content = f"{notice}\n\n{preview}"
    return TruncationResult(
        truncated=True,
        reason="truncated",
        content=content,
        preview=preview,
        direction=opts.direction,
        removed=removed,
        unit=unit,
        limit_hit=cut.limit_hit,
        partial_line=cut.partial_line,
        max_lines=opts.max_lines,
        max_bytes=opts.max_bytes,
        total_lines=total_lines,
        total_bytes=total_bytes,
        kept_lines=cut.kept_lines,
        kept_bytes=len(cut.prefix) + len(cut.suffix),
        output_path=None if error is not None else path,
        spilled=spilled and error is None,
        spill_error=None
        if error is None
        else f"could not save the full output in {os.path.dirname(path)}: {error}",
    )


def _unchanged(
    text: str,
    opts: TruncateOptions,
    reason: Reason,
    lines: int | None = None,
    total_bytes: int | None = None,
) -> TruncationResult:
    if total_bytes is None or lines is None:
        total_bytes, lines = _measure(text)
    return TruncationResult(
        truncated=False,
        reason=reason,
        content=text,
        preview=text,
        direction=opts.direction,
        max_lines=opts.max_lines,
        max_bytes=opts.max_bytes,
        total_lines=lines,
        total_bytes=total_bytes,
        kept_lines=lines,
        kept_bytes=total_bytes,
    )


# --- streaming ----------------------------------------------------------------------------------

_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


class StreamingTruncator:
    """Truncate an unbounded byte stream in constant memory, spilling all of it.

    Feed it with :meth:`write`, then call :meth:`finish`. Until the stream goes over a limit it
    is buffered (at most ``max_bytes`` plus one chunk) and nothing touches the disk; from then
    on every chunk goes straight to the spill file while only the first and/or last
    ``max_bytes + 1`` bytes stay in memory. For valid UTF-8 the result equals
    ``truncate(data.decode())`` with the same options (and the same ``spill_name``).
    Invalid UTF-8 is saved as is and shown with replacement characters.
    """

    def __init__(self, options: TruncateOptions | None = None) -> None:
        self.options = options if options is not None else _DEFAULT_OPTIONS
        self._head_size, self._tail_size = _window_sizes(
            self.options.max_bytes, self.options.direction
        )
        self._count_chars = (
            self.options.direction == "middle" and self.options.middle_unit == "chars"
        )
        self._pending: bytearray | None = bytearray()  # the whole input, while within limits
        self._head = bytearray()
        self._tail = bytearray()
        self._total_bytes = 0
        self._newlines = 0
        self._chars = 0
        self._directory = resolve_spill_dir(self.options.spill_dir)
        self._name = self.options.spill_name or ""
        self._spill_file: SpillFile | None = None
        self._result: TruncationResult | None = None

    @property
    def passthrough(self) -> bytes | None:
        """The raw input when it stayed within the limits (after :meth:`finish`), else None."""
        if self._result is None or self._result.truncated or self._pending is None:
            return None
        return bytes(self._pending)

    def _over(self) -> bool:
        max_lines = self.options.max_lines
        return self._total_bytes > self.options.max_bytes or (
            bool(max_lines) and self._newlines + 1 > max_lines
        )

    def write(self, chunk: bytes | bytearray | memoryview) -> None:
        """Add the next piece of the stream."""
        if self._result is not None:
            raise ValueError("write() after finish()")
        piece = bytes(chunk)
        if not piece:
            return
        self._total_bytes += len(piece)
        self._newlines += _count_newlines(piece)
        if self._count_chars:
            self._chars += len(piece.translate(None, _CONTINUATION_BYTES))
        if self._pending is not None:
            self._pending += piece
            if not (self.options.enabled and not self.options.tool_truncated and self._over()):
                return
            piece, self._pending = bytes(self._pending), None
            self._start_spill()
        self._keep_windows(piece)
        if self._spill_file is not None:
            self._spill_file.write(piece)

    def _keep_windows(self, piece: bytes) -> None:
        missing = self._head_size - len(self._head)
        if missing > 0:
            self._head += piece[:missing]
        if self._tail_size:
            if len(piece) >= self._tail_size:
                self._tail = bytearray(piece[-self._tail_size :])
            else:
                self._tail += piece
                if len(self._tail) > 2 * self._tail_size:
                    del self._tail[: -self._tail_size]

    def _start_spill(self) -> None:
        if not self._name:
            self._name = new_spill_name()
        if self.options.spill:
            self._spill_file = SpillFile(self._directory, self._name, self.options.retention_days)

    def abort(self) -> None:
        """Stop without a result: drop the partial spill file."""
        if self._spill_file is not None:
            self._spill_file.abort()

    def __enter__(self) -> StreamingTruncator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._result is None:
            self.abort()

    def finish(self) -> TruncationResult:
        """End of stream: close the spill file and return what the model would see."""
        if self._result is not None:
            return self._result
        opts = self.options
        lines = self._newlines + 1
        if self._pending is not None:  # never went over a limit (or truncation is off)
            text = self._pending.decode("utf-8", "replace")
            reason: Reason = "within_limits"
            if not opts.enabled:
                reason = "disabled"
            elif opts.tool_truncated:
                reason = "tool_truncated"
            self._result = _unchanged(text, opts, reason, lines, self._total_bytes)
            return self._result
        head, tail = (
            bytes(self._head),
            bytes(self._tail[-self._tail_size :] if self._tail_size else b""),
        )
        cut = _cut(head, tail, self._total_bytes, lines, opts)
        # (with invalid UTF-8 the decoded ends may hold more chars than were counted)
        dropped = (
            max(0, self._chars - len(cut.prefix_text) - len(cut.suffix_text))
            if self._count_chars
            else 0
        )
        error = self._spill_file.commit() if self._spill_file is not None else None
        path = os.path.join(self._directory, self._name)
        self._result = _build(cut, opts, self._total_bytes, lines, dropped, path, opts.spill, error)
        return self._result
