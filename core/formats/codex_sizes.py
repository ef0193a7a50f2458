"""Codex's own size estimates of what its history holds: the figures its compaction check adds up.

Codex checks ``last total_tokens + estimates of the items recorded after the last model output
(+ its estimate of earlier encrypted reasoning)`` against its auto-compact limit
(``ContextManager::get_total_token_usage`` in ``codex-rs/core/src/context_manager/history.rs``).
An item's estimate is ``ceil(bytes / 4)`` of the item serialised as compact JSON
(``estimate_response_item_model_visible_bytes``), with three exceptions ported here:

* tool outputs enter history cut to the turn's truncation policy × 1.2 (``process_item`` →
  ``truncate_output_item``; ``utils/output-truncation`` and ``utils/string`` for the cut: head +
  ``…N tokens truncated…`` / ``…N chars truncated…`` + tail);
* a base64 image counts 7,373 bytes, or 32-pixel patches (4 bytes each, at most 10,000) for
  ``detail: "original"``, instead of its data (Codex since early 2026, openai/codex#12717);
* encrypted reasoning and compaction items count ``ceil(max(0, len × 3 // 4 − 650) / 4)``.

When the encrypted reasoning was redacted before the file was shared, its estimate is predicted
from the call's ``reasoning_output_tokens`` (fitted on
unredacted rollouts, encrypted length ≈ 922 + 6.3 × reasoning tokens per item). Redactions that
keep the original length (``[REDACTED_TEXT len=N sha=…]``) are measured at that length.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from typing import Any

import orjson

from core.agents.constants import value


def _codex(name: str) -> float:
    """A constant of Codex's estimate, from the one table of agent facts."""
    return value("codex", name)


APPROX_BYTES_PER_TOKEN = int(_codex("approx_bytes_per_token"))
"""Codex's token approximation: ``ceil(bytes / 4)`` (``APPROX_BYTES_PER_TOKEN``)."""
SERIALIZATION_ALLOWANCE = _codex("tool_output_serialization_allowance")
"""History keeps tool outputs up to the policy × 1.2 ("allowance for serialization and headers")."""
DEFAULT_TRUNCATION: tuple[str, int] = ("tokens", int(_codex("default_truncation_tokens")))
"""The truncation policy when no ``turn_context`` names one (Codex-tuned models' default)."""
RESIZED_IMAGE_BYTES = int(_codex("resized_image_bytes"))
"""Bytes an image counts for in Codex's estimate (``RESIZED_IMAGE_BYTES_ESTIMATE``)."""
ORIGINAL_IMAGE_PATCH_PX = int(_codex("original_image_patch_px"))
ORIGINAL_IMAGE_MAX_PATCHES = int(_codex("original_image_max_patches"))
REASONING_OVERHEAD_BYTES = int(_codex("reasoning_overhead_bytes"))
"""Subtracted from ¾ of an encrypted blob's length (``estimate_reasoning_length``)."""
REDACTED_REASONING_BASE_CHARS = _codex("redacted_reasoning_base_chars")
REDACTED_REASONING_CHARS_PER_TOKEN = _codex("redacted_reasoning_chars_per_token")
"""Encrypted length ≈ base + per-token × reasoning tokens, for blobs the file no longer holds."""


def approx_tokens(n_bytes: int) -> int:
    """``ceil(n_bytes / 4)``, 0 for nothing."""
    return 0 if n_bytes <= 0 else (n_bytes + APPROX_BYTES_PER_TOKEN - 1) // APPROX_BYTES_PER_TOKEN


def encrypted_tokens(encrypted_chars: int) -> int:
    """Codex's estimate of an encrypted reasoning or compaction item of this length."""
    return approx_tokens(max(0, encrypted_chars * 3 // 4 - REASONING_OVERHEAD_BYTES))


def redacted_reasoning_tokens(reasoning_tokens: float) -> int:
    """The estimate of a reasoning item whose encrypted content was redacted, from the reasoning
    tokens its call reported (its share of them when the call made several items)."""
    chars = int(
        REDACTED_REASONING_BASE_CHARS + REDACTED_REASONING_CHARS_PER_TOKEN * reasoning_tokens
    )
    return encrypted_tokens(chars)


_PLACEHOLDER = re.compile(r"\[REDACTED_[A-Z_]+ len=(\d+) sha=[0-9a-f]+\]")


def placeholder_length(value: str) -> int | None:
    """The original length a redaction placeholder keeps (``[REDACTED_TEXT len=N sha=…]``,
    written by tools that share rollouts with their text removed), else None."""
    if not value.startswith("[REDACTED_"):
        return None
    match = _PLACEHOLDER.fullmatch(value)
    if match is None:
        return None
    digits = match.group(1)  # thousands of digits would pass int()'s limit: damage, held big
    return int(digits) if len(digits) <= 18 else 10**18


def placeholder_delta(value: Any) -> int:
    """Bytes to add to a serialised value for the original lengths its placeholders keep."""
    if isinstance(value, str):
        length = placeholder_length(value)
        return 0 if length is None else length - len(value)
    if isinstance(value, dict):
        return sum(placeholder_delta(v) for v in value.values())
    if isinstance(value, list):
        return sum(placeholder_delta(v) for v in value)
    return 0


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class OutputCap:
    """The truncation a tool output gets when Codex records it into history (policy × 1.2)."""

    __slots__ = ("limit", "max_bytes", "tokens")

    def __init__(self, tokens: bool, limit: int) -> None:
        self.tokens = tokens
        """Token mode (the limit is in tokens, 4 bytes each); else bytes."""
        self.limit = limit
        """The limit after the serialisation allowance."""
        self.max_bytes = limit * APPROX_BYTES_PER_TOKEN if tokens else limit
        """The byte budget of one text."""

    @classmethod
    def from_policy(cls, policy: Any) -> OutputCap:
        """From a ``turn_context.truncation_policy`` (``{"mode": "tokens"|"bytes", "limit": N}``);
        the default policy when it is missing or not understood."""
        mode, limit = DEFAULT_TRUNCATION
        if isinstance(policy, dict):
            given_mode, given_limit = policy.get("mode"), policy.get("limit")
            if given_mode in ("tokens", "bytes") and type(given_limit) is int and given_limit >= 0:
                mode, limit = given_mode, given_limit
        return cls(mode == "tokens", math.ceil(limit * SERIALIZATION_ALLOWANCE))

    def fits(self, text: str) -> bool:
        """The text is kept whole (cheap: most outputs are far below the budget)."""
        budget = self.max_bytes
        return len(text) * 4 <= budget or _utf8_len(text) <= budget

    def text(self, text: str) -> str:
        """``truncate_text``: the text, or its head and tail around a marker."""
        return _truncate_middle(text, self.max_bytes, self.tokens)

    def items(self, items: list[Any]) -> list[Any]:
        """``truncate_function_output_items_with_policy``: one budget spent in order over the
        text items; the first that does not fit is cut, later ones are dropped and counted;
        images are kept."""
        remaining = self.limit
        out: list[Any] = []
        omitted = 0
        for item in items:
            if not isinstance(item, dict) or item.get("type") != "input_text":
                out.append(item)
                continue
            text = item.get("text")
            text = text if isinstance(text, str) else ""
            if remaining == 0:
                omitted += 1
                continue
            size = _utf8_len(text)
            cost = approx_tokens(size) if self.tokens else size
            if cost <= remaining:
                out.append(item)
                remaining -= cost
                continue
            budget = remaining * APPROX_BYTES_PER_TOKEN if self.tokens else remaining
            snippet = _truncate_middle(text, budget, self.tokens)
            if snippet:
                out.append({**item, "text": snippet})
            else:
                omitted += 1
            remaining = 0
        if omitted:
            out.append({"type": "input_text", "text": f"[omitted {omitted} text items ...]"})
        return out

    def output(self, output: Any) -> Any:
        """A ``*_call_output``'s ``output`` as history keeps it (the same object when whole)."""
        if isinstance(output, str):
            return output if self.fits(output) else self.text(output)
        if isinstance(output, list):
            capped = self.items(output)
            unchanged = len(capped) == len(output) and all(
                a is b for a, b in zip(capped, output, strict=True)
            )
            return output if unchanged else capped
        return output


def _truncate_middle(text: str, max_bytes: int, tokens: bool) -> str:
    """``truncate_with_byte_estimate``: head and tail of ``text`` within ``max_bytes`` around a
    ``…N tokens truncated…`` (token mode) or ``…N chars truncated…`` marker."""
    if not text:
        return ""
    data = text.encode("utf-8")
    total = len(data)
    if max_bytes == 0:
        removed = approx_tokens(total) if tokens else len(text)
        return _marker(tokens, removed)
    if total <= max_bytes:
        return text
    left_budget = max_bytes // 2
    right_budget = max_bytes - left_budget
    prefix_end = _char_end_at_or_before(data, left_budget)
    suffix_start = _char_start_at_or_after(data, total - right_budget)
    suffix_start = max(suffix_start, prefix_end)
    removed_chars = len(data[prefix_end:suffix_start].decode("utf-8", "replace"))
    removed = approx_tokens(total - max_bytes) if tokens else removed_chars
    return (
        data[:prefix_end].decode("utf-8")
        + _marker(tokens, removed)
        + data[suffix_start:].decode("utf-8")
    )


def _marker(tokens: bool, removed: int) -> str:
    return f"…{removed} tokens truncated…" if tokens else f"…{removed} chars truncated…"


def _char_end_at_or_before(data: bytes, limit: int) -> int:
    """The largest character boundary ≤ ``limit`` (the end of the last whole character)."""
    limit = min(limit, len(data))
    while limit > 0 and limit < len(data) and (data[limit] & 0xC0) == 0x80:
        limit -= 1
    return limit


def _char_start_at_or_after(data: bytes, start: int) -> int:
    """The first character boundary ≥ ``start``."""
    start = max(0, start)
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return start


# -- images -----------------------------------------------------------------------------------


def _image_adjustment(content: Any) -> int:
    """Bytes to add to a serialised item for its base64 images: each image's data replaced by
    what Codex counts for it (negative: images count less than their data)."""
    if not isinstance(content, list):
        return 0
    delta = 0
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "input_image":
            continue
        url = part.get("image_url")
        payload = _base64_image_payload(url) if isinstance(url, str) else None
        if payload is None:
            continue
        counted = RESIZED_IMAGE_BYTES
        if part.get("detail") == "original":
            counted = _original_image_bytes(payload) or RESIZED_IMAGE_BYTES
        delta += counted - len(payload)
    return delta


def _base64_image_payload(url: str) -> str | None:
    """The base64 data of a ``data:image/…;base64,`` URL (``parse_base64_image_data_url``)."""
    if url[:5].lower() != "data:":
        return None
    comma = url.find(",")
    if comma < 0:
        return None
    mime, *params = url[5:comma].split(";")
    if not mime.lower().startswith("image/") or not any(p.lower() == "base64" for p in params):
        return None
    return url[comma + 1 :]


def _original_image_bytes(payload: str) -> int | None:
    """32-pixel patches × 4 bytes for a full-resolution image (``estimate_original_image_bytes``),
    when its size can be read from a PNG or JPEG header."""
    size = _image_size(payload)
    if size is None:
        return None
    width, height = size
    per = ORIGINAL_IMAGE_PATCH_PX
    patches = ((width + per - 1) // per) * ((height + per - 1) // per)
    return min(patches, ORIGINAL_IMAGE_MAX_PATCHES) * APPROX_BYTES_PER_TOKEN


def _image_size(payload: str) -> tuple[int, int] | None:
    try:
        head = base64.b64decode(payload[:32] + "=" * (-len(payload[:32]) % 4))
    except ValueError:
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    if head.startswith(b"\xff\xd8"):
        try:
            return _jpeg_size(base64.b64decode(payload))
        except ValueError:
            return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG's first start-of-frame marker."""
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


# -- items ------------------------------------------------------------------------------------

_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})


def item_tokens(
    item: dict[str, Any],
    cap: OutputCap,
    raw_bytes: int | None = None,
    *,
    placeholders: bool = False,
) -> int:
    """Codex's estimate of one non-encrypted item as its history holds it.

    ``raw_bytes`` is the item's size as the file serialised it, when known: used as is when the
    item enters history unchanged (Codex serialises it the same way), else it is re-serialised.
    ``placeholders``: the file's redactions keep the original lengths; count those.
    """
    kind = item.get("type")
    content: Any = None
    if kind in _OUTPUT_TYPES:
        output = item.get("output")
        if raw_bytes is not None and not placeholders and type(output) is str and cap.fits(output):
            return approx_tokens(raw_bytes)  # the usual output: a text kept whole, as written
        capped = cap.output(output)
        if capped is not output:
            item = {**item, "output": capped}
            raw_bytes = None
        content = capped
    elif kind == "message":
        content = item.get("content")
    size = raw_bytes if raw_bytes is not None else len(orjson.dumps(item))
    if placeholders:
        size += placeholder_delta(item)
    return approx_tokens(size + _image_adjustment(content))


def encrypted_length(item: dict[str, Any]) -> tuple[int | None, bool]:
    """The length of a reasoning / compaction item's encrypted content, and whether it was
    redacted before the file was shared: ``"REDACTED"`` (Entire 0.7), or the key dropped from a
    payload re-serialised with sorted keys (Entire 0.6 / 0.9; Codex writes ``type`` first). A
    placeholder that keeps the length gives that length."""
    value = item.get("encrypted_content")
    if isinstance(value, str):
        if value == "REDACTED":
            return None, True
        kept = placeholder_length(value)
        return (kept if kept is not None else len(value)), False
    keys = list(item)
    resorted = len(keys) > 1 and keys[0] != "type" and keys == sorted(keys)
    return None, resorted
