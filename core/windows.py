"""Context windows and output limits of common models.

Claude Code and pi do not write the model's context window into the transcript, so ctxscope needs
a table. Each row names where its number comes from; :func:`lookup_window` returns that note as
the *source* so the UI can say "200,000 (Anthropic model docs)" rather than a bare number.

Matching is forgiving about how agents spell a model: provider prefixes (``anthropic/``,
``openrouter/openai/``, Bedrock ``us.anthropic.…-v1:0``, Vertex ``…@20250929``), dated suffixes
(``claude-opus-4-5-20251101``) and dotted versions (``claude-sonnet-4.5``) all resolve to the
same row. The longest matching prefix wins, so ``gpt-4.1-mini`` never falls back to ``gpt-4``.

A ``[1m]`` suffix (Claude Code's 1M-context variants) or a ``-1m`` suffix selects the 1,000,000
token window of the Claude models that offer it.

When a model is not in the table the window is unknown (``(None, "unknown")``): the user sets it
with ``ctxscope PATH --window N``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ONE_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """What the table knows about one model family."""

    prefix: str
    """Normalised model-id prefix this row matches (see :func:`normalize_model_id`)."""
    context_window: int
    """Context window in tokens (what the agent compares its usage against)."""
    max_output_tokens: int | None
    """The model's output limit, when well known (used by opencode's threshold rule)."""
    source: str
    """Where the numbers come from."""
    supports_1m: bool = False
    """The model offers a 1,000,000-token context variant (``[1m]`` / 1M beta)."""


_ANTHROPIC = "Anthropic model docs"
_OPENAI = "OpenAI model docs"
_CODEX = "Codex models.json (input window; Codex itself uses 95% of it)"
_GOOGLE = "Google Gemini model docs"

# One row per family. Keep it small and well sourced; an unknown model is better than a wrong one.
MODEL_TABLE: tuple[ModelLimits, ...] = (
    # Anthropic
    ModelLimits("claude-3-haiku", 200_000, 4_096, _ANTHROPIC),
    ModelLimits("claude-3-opus", 200_000, 4_096, _ANTHROPIC),
    ModelLimits("claude-3-sonnet", 200_000, 4_096, _ANTHROPIC),
    ModelLimits("claude-3-5-haiku", 200_000, 8_192, _ANTHROPIC),
    ModelLimits("claude-3-5-sonnet", 200_000, 8_192, _ANTHROPIC),
    ModelLimits("claude-3-7-sonnet", 200_000, 64_000, _ANTHROPIC),
    ModelLimits("claude-sonnet-4", 200_000, 64_000, _ANTHROPIC, supports_1m=True),
    ModelLimits("claude-opus-4", 200_000, 32_000, _ANTHROPIC),
    ModelLimits("claude-opus-4-1", 200_000, 32_000, _ANTHROPIC),
    ModelLimits("claude-sonnet-4-5", 200_000, 64_000, _ANTHROPIC, supports_1m=True),
    ModelLimits("claude-haiku-4-5", 200_000, 64_000, _ANTHROPIC),
    ModelLimits("claude-opus-4-5", 200_000, 64_000, _ANTHROPIC),
    ModelLimits("claude-sonnet-4-6", 200_000, 64_000, _ANTHROPIC, supports_1m=True),
    ModelLimits("claude-opus-4-6", 200_000, 128_000, _ANTHROPIC, supports_1m=True),
    # OpenAI
    ModelLimits("gpt-4", 8_192, 8_192, _OPENAI),
    ModelLimits("gpt-4-turbo", 128_000, 4_096, _OPENAI),
    ModelLimits("gpt-4o", 128_000, 16_384, _OPENAI),
    ModelLimits("gpt-4.1", 1_047_576, 32_768, _OPENAI),
    ModelLimits("o1", 200_000, 100_000, _OPENAI),
    ModelLimits("o1-mini", 128_000, 65_536, _OPENAI),
    ModelLimits("o1-preview", 128_000, 32_768, _OPENAI),
    ModelLimits("o3", 200_000, 100_000, _OPENAI),
    ModelLimits("o4-mini", 200_000, 100_000, _OPENAI),
    ModelLimits("codex-mini", 200_000, 100_000, _OPENAI),
    ModelLimits("gpt-5", 272_000, 128_000, _CODEX),
    # Google
    ModelLimits("gemini-1.5-pro", 2_097_152, 8_192, _GOOGLE),
    ModelLimits("gemini-1.5-flash", 1_048_576, 8_192, _GOOGLE),
    ModelLimits("gemini-2.0-flash", 1_048_576, 8_192, _GOOGLE),
    ModelLimits("gemini-2.5-pro", 1_048_576, 65_536, _GOOGLE),
    ModelLimits("gemini-2.5-flash", 1_048_576, 65_536, _GOOGLE),
    # Others commonly used through opencode / pi
    ModelLimits("grok-4", 256_000, None, "xAI model docs"),
    ModelLimits("deepseek-chat", 128_000, 8_192, "DeepSeek API docs"),
    ModelLimits("deepseek-reasoner", 128_000, 64_000, "DeepSeek API docs"),
    ModelLimits("qwen3-coder", 262_144, 65_536, "Qwen model card"),
)

# Longest prefix first, so the most specific row wins.
_BY_LENGTH: tuple[ModelLimits, ...] = tuple(
    sorted(MODEL_TABLE, key=lambda row: len(row.prefix), reverse=True)
)

_ONE_M_MARKER = re.compile(r"(\[1m\]|[-_:]1m)$")
_BEDROCK_VERSION = re.compile(r"-v\d+(:\d+)?$")
_BEDROCK_REGION = re.compile(r"^(?:[a-z]{2}|global|apac)\.(?=anthropic\.)")
# A prefix must end at a word boundary of the id: "gpt-4o" matches "gpt-4o-mini" but "o3" does
# not match "o30" and "gpt-4" does not match "gpt-40".
_BOUNDARY = frozenset("-.:@_ ")


def normalize_model_id(model: str) -> tuple[str, bool]:
    """Return ``(normalised id, wants_1m)`` for a model id as an agent recorded it.

    Lower-cases, drops provider prefixes and Bedrock/Vertex decorations, turns dotted Claude
    versions into dashed ones, and reports whether the id asks for the 1M-context variant.
    """
    name = model.strip().lower()
    wants_1m = False
    marker = _ONE_M_MARKER.search(name)
    if marker:
        wants_1m = True
        name = name[: marker.start()]
    if "context-1m" in name:
        wants_1m = True
    name = name.rsplit("/", 1)[-1]
    name = _BEDROCK_REGION.sub("", name)
    name = name.removeprefix("anthropic.")
    name = _BEDROCK_VERSION.sub("", name)
    name = name.replace("@", "-")
    if name.startswith("claude"):
        name = name.replace(".", "-")
    return name, wants_1m


def lookup_limits(model: str | None) -> tuple[ModelLimits | None, bool]:
    """The table row for ``model`` (or None) and whether the 1M variant was asked for."""
    if not model:
        return None, False
    name, wants_1m = normalize_model_id(model)
    for row in _BY_LENGTH:
        if name == row.prefix or (
            name.startswith(row.prefix) and name[len(row.prefix)] in _BOUNDARY
        ):
            return row, wants_1m
    return None, wants_1m


def lookup_window(model: str | None) -> tuple[int | None, str]:
    """Context window of ``model`` and where that number comes from.

    Returns ``(tokens, source)``; ``(None, "unknown")`` when the model is not in the table.
    """
    row, wants_1m = lookup_limits(model)
    if row is None:
        return None, "unknown"
    if wants_1m and row.supports_1m:
        return ONE_MILLION, f"{_ANTHROPIC} (1M-context variant)"
    return row.context_window, row.source


def lookup_max_output(model: str | None) -> int | None:
    """The model's output-token limit when the table knows it, else None."""
    row, _ = lookup_limits(model)
    return row.max_output_tokens if row else None
