"""Context windows and output limits of common models, by provider where they differ.

Claude Code and pi do not write the model's context window into the transcript, so ctxscope needs
a table. Each row names where its number comes from; :func:`lookup_window` returns that note as
the *source* so the UI can say "200,000 (Anthropic model docs)" rather than a bare number.

The same model has different windows behind different providers and agents: GitHub Copilot
serves Claude and GPT models with smaller input limits, ChatGPT-subscription providers
(``openai-codex``) with Codex's 272,000, opencode reads models.dev (where ``openai/gpt-5.5`` has
1,050,000 tokens, 922,000 of them input). A row may therefore name a ``provider`` and an
``agent``; :func:`lookup_limits` prefers the row that matches both, then the provider, then the
agent, then the model alone. Whether the row fits the recording is checked afterwards
(:mod:`core.agents.window_evidence`).

An agent's catalogue changes with its releases, so a row may hold for a range of the agent's
versions (``since``/``until``). opencode reads its cached copy of models.dev when it has one
(fetched at start and hourly, unless ``OPENCODE_DISABLE_MODELS_FETCH`` is set), else the snapshot
of models.dev built into its binary; that snapshot, models.dev as the recorded release was built,
is the catalogue this table holds for the release. A session run on a catalogue changed since
then is predicted with the snapshot's figures.

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

from core.agents.versions import in_range, parse_version

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
    provider: str | None = None
    """The provider this row is for (None: any provider without a row of its own)."""
    agent: str | None = None
    """The agent whose catalog this row comes from (None: any agent)."""
    input_limit: int | None = None
    """A separate input limit, when the provider has one below the window (opencode's
    ``limit.input``)."""
    larger_window: int | None = None
    """The model's largest window when it also comes larger than ``context_window`` (an opt-in
    or a plan): what the evidence may point to when usage goes past the row's window."""
    since: str | None = None
    """First version of ``agent`` whose catalogue holds this row (None: from the start)."""
    until: str | None = None
    """First version of ``agent`` whose catalogue no longer holds it (None: still current). A
    session without a version gets the current rows."""


_ANTHROPIC = "Anthropic model docs"
_OPENAI = "OpenAI model docs"
_CODEX = "Codex models.json (input window; Codex itself uses 95% of it)"
_GOOGLE = "Google Gemini model docs"
_MODELS_DEV = "models.dev (the catalog opencode reads)"
_PI_CATALOG = "pi-mono packages/ai model registry (openai-codex provider)"
_OPENCODE_SNAPSHOT = (
    "the models.dev snapshot opencode ships in its binary (npm opencode-linux-x64 bin/opencode, "
    "provider opencode, big-pickle limit {context 200000, input 160000, output 32000}; read in "
    "1.15.13, 1.17.0, 1.18.8 and 1.18.10)"
)
_OPENCODE_SNAPSHOT_OLD = (
    "the models.dev snapshot opencode ships in its binary (npm opencode-linux-x64 bin/opencode, "
    "provider opencode, big-pickle limit {context 200000, output 128000}, no input limit; read "
    "in 1.15.0 and 1.15.4)"
)
_CC_1M = "Anthropic model docs (200,000 by default in Claude Code; 1M with [1m] or the 1M beta)"

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
    ModelLimits("claude-opus-4-6", 200_000, 128_000, _CC_1M, supports_1m=True),
    ModelLimits("claude-opus-4-7", 200_000, 128_000, _CC_1M, supports_1m=True),
    ModelLimits("claude-opus-4-8", 200_000, 128_000, _CC_1M, supports_1m=True),
    ModelLimits("claude-opus-5", 200_000, 128_000, _CC_1M, supports_1m=True),
    ModelLimits("claude-sonnet-5", 200_000, 64_000, _CC_1M, supports_1m=True),
    # opencode reads models.dev, where the 1M models are listed at 1M
    ModelLimits("claude-opus-4-6", ONE_MILLION, 128_000, _MODELS_DEV, agent="opencode"),
    ModelLimits("claude-opus-5", ONE_MILLION, 128_000, _MODELS_DEV, agent="opencode"),
    # GitHub Copilot serves the same models with smaller input limits (models.dev,
    # providers/github-copilot): the prompt can never be larger, so that limit is the window.
    ModelLimits(
        "claude-sonnet-4",
        200_000,
        64_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=128_000,
    ),
    ModelLimits(
        "claude-sonnet-4-6",
        200_000,
        32_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=168_000,
    ),
    ModelLimits(
        "claude-haiku-4-5",
        200_000,
        64_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=136_000,
    ),
    ModelLimits(
        "claude-opus-4-5",
        200_000,
        32_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=168_000,
    ),
    ModelLimits(
        "claude-opus-4-7",
        200_000,
        32_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=168_000,
    ),
    ModelLimits(
        "claude-sonnet-4-5",
        200_000,
        64_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=128_000,
    ),
    ModelLimits(
        "claude-opus-4-6",
        ONE_MILLION,
        128_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=128_000,
    ),
    ModelLimits(
        "claude-opus-5",
        264_000,
        64_000,
        _MODELS_DEV,
        provider="github-copilot",
        input_limit=200_000,
    ),
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
    ModelLimits("gpt-5", 272_000, 128_000, _CODEX, larger_window=1_050_000),
    ModelLimits("gpt-5", 272_000, 128_000, _PI_CATALOG, provider="openai-codex"),
    ModelLimits(
        "gpt-5.4",
        1_050_000,
        128_000,
        _MODELS_DEV,
        provider="openai",
        agent="opencode",
        input_limit=272_000,
    ),
    ModelLimits(
        "gpt-5.5",
        1_050_000,
        128_000,
        _MODELS_DEV,
        provider="openai",
        agent="opencode",
        input_limit=922_000,
    ),
    ModelLimits(
        "gpt-5.6",
        1_050_000,
        128_000,
        _MODELS_DEV,
        provider="openai",
        agent="opencode",
        input_limit=922_000,
    ),
    ModelLimits(
        "gpt-5.5", 400_000, 128_000, _MODELS_DEV, provider="github-copilot", input_limit=272_000
    ),
    # OpenCode Zen (provider "opencode"): the models.dev snapshot each opencode release ships in
    # its binary. 1.15.4 and earlier list no input limit (threshold 200,000 - 32,000); from 1.15.13
    # (the next release published on npm) an input limit of 160,000 (threshold 140,000).
    ModelLimits(
        "big-pickle",
        200_000,
        128_000,
        _OPENCODE_SNAPSHOT_OLD,
        provider="opencode",
        agent="opencode",
        until="1.15.13",
    ),
    ModelLimits(
        "big-pickle",
        200_000,
        32_000,
        _OPENCODE_SNAPSHOT,
        provider="opencode",
        agent="opencode",
        input_limit=160_000,
        since="1.15.13",
    ),
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


def _matches(name: str, prefix: str) -> bool:
    return name == prefix or (name.startswith(prefix) and name[len(prefix)] in _BOUNDARY)


def _holds(row: ModelLimits, version: str | None) -> bool:
    """Whether ``row`` is in the catalogue of the agent at ``version`` (no version: the current
    catalogue)."""
    if parse_version(version) is None:
        return row.until is None
    return in_range(version, row.since, row.until)


def lookup_limits(
    model: str | None,
    provider: str | None = None,
    agent: str | None = None,
    version: str | None = None,
) -> tuple[ModelLimits | None, bool]:
    """The table row for ``model`` (or None) and whether the 1M variant was asked for.

    Only rows of the catalogue ``agent`` had at ``version`` are considered. Among the rows whose
    prefix matches, the longest prefix wins, then the row that names both the provider and the
    agent, the provider, the agent, and last the row that names neither.
    """
    if not model:
        return None, False
    name, wants_1m = normalize_model_id(model)
    provider = normalize_provider(provider)
    best: tuple[int, int, ModelLimits] | None = None
    for row in _BY_LENGTH:
        if not _matches(name, row.prefix):
            continue
        if (
            (row.provider is not None and row.provider != provider)
            or (row.agent is not None and row.agent != agent)
            or not _holds(row, version)
        ):
            continue
        rank = (len(row.prefix), 2 * (row.provider is not None) + (row.agent is not None))
        if best is None or rank > best[:2]:
            best = (*rank, row)
    return (best[2] if best else None), wants_1m


_PROVIDER_ALIASES = {
    "bedrock": "amazon-bedrock",
    "aws-bedrock": "amazon-bedrock",
    "vertex": "google-vertex",
    "vertex-ai": "google-vertex",
    "copilot": "github-copilot",
    "chatgpt": "openai-codex",
}


def normalize_provider(provider: str | None) -> str | None:
    """A provider name as the table spells it (lower case, common aliases resolved)."""
    if not provider:
        return None
    name = provider.strip().lower()
    return _PROVIDER_ALIASES.get(name, name)


def lookup_window(
    model: str | None, provider: str | None = None, agent: str | None = None
) -> tuple[int | None, str]:
    """Context window of ``model`` (behind ``provider``, in ``agent``'s catalog) and where that
    number comes from.

    Returns ``(tokens, source)``; ``(None, "unknown")`` when the model is not in the table.
    """
    row, wants_1m = lookup_limits(model, provider, agent)
    if row is None:
        return None, "unknown"
    if wants_1m and row.supports_1m:
        return ONE_MILLION, f"{_ANTHROPIC} (1M-context variant)"
    return row.context_window, row.source


def prompt_window(row: ModelLimits) -> int:
    """The largest prompt ``row`` allows: its input limit when a provider caps prompts below the
    model's window (GitHub Copilot serves Claude at 128,000 of its 200,000), else its window."""
    if row.provider in PROMPT_CAPPING_PROVIDERS and row.input_limit is not None:
        return min(row.input_limit, row.context_window)
    return row.context_window


PROMPT_CAPPING_PROVIDERS = frozenset({"github-copilot"})
"""Providers that refuse a prompt above their input limit whatever the model's window (models.dev
lists a separate ``limit.input`` for each of their models); elsewhere the input limit only
reserves room for the reply, within the window."""


def lookup_max_output(
    model: str | None, provider: str | None = None, agent: str | None = None
) -> int | None:
    """The model's output-token limit when the table knows it, else None."""
    row, _ = lookup_limits(model, provider, agent)
    return row.max_output_tokens if row else None
