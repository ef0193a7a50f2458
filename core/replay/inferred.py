"""The threshold a session's own compactions imply, and the ``inferred`` policy built on it.

Each stretch of calls between two recorded compactions bounds the agent's threshold
(:mod:`core.replay.evidence`): from below by every figure its checks measured without the agent
compacting, from above by the figure that made it compact. Intersected over the session (while
the window stays the same), they give the interval that holds the agent's real threshold —
"compacted at 167,094; did not at 166,210 → threshold in (166,210, 167,094]". The ``inferred``
policy is the recording agent's preset with its threshold set to the smallest value of that
interval.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.algorithms.overflow import crosses
from core.model.fastmodel import build_filled
from core.policy import Policy
from core.replay.results import InferredThreshold, ThresholdSpan


def intersect(spans: Sequence[ThresholdSpan], policy: Policy) -> InferredThreshold:
    """The interval all stretches of a session agree on (see the module docstring)."""
    lows = [span.low for span in spans if span.low is not None]
    highs = [span.high for span in spans if span.high is not None]
    rule = next((span.rule_threshold for span in spans if span.rule_threshold is not None), None)
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    conflict = low is not None and high is not None and not _allows(low, high, policy)
    value = _value(low, high, rule, policy, conflict)
    return build_filled(
        InferredThreshold,
        {
            "low": low,
            "high": high,
            "value": value,
            "rule_threshold": rule,
            "compactions": len(highs),
            "conflict": conflict,
            "note": _note(low, high, rule, conflict),
        },
    )


def _allows(low: int, high: int, policy: Policy) -> bool:
    """Some threshold is crossed by ``high`` and not by ``low``."""
    return crosses(high, _above(low, policy), policy)


def _above(figure: int, policy: Policy) -> int:
    """The smallest threshold ``figure`` does not cross."""
    return figure + 1 if crosses(figure, figure, policy) else figure


def _value(
    low: int | None, high: int | None, rule: int | None, policy: Policy, conflict: bool
) -> int | None:
    if conflict or (low is None and high is None):
        return rule
    below = low is None or not crosses(low, rule, policy) if rule is not None else False
    if rule is not None and below and (high is None or crosses(high, rule, policy)):
        return rule  # the rule lies inside the interval
    return _above(low, policy) if low is not None else high


def _note(low: int | None, high: int | None, rule: int | None, conflict: bool) -> str:
    did = f"compacted at {high:,}" if high is not None else "never compacted by itself"
    didnt = f"did not at {low:,}" if low is not None else "no check below it"
    if conflict:
        return f"{did}; {didnt}: no single threshold explains both (settings changed?)"
    upper = f"{high:,}]" if high is not None else "∞)"
    lower = f"({low:,}" if low is not None else "(0"
    rule_text = f"; the rule gives {rule:,}" if rule is not None else ""
    return f"{did}; {didnt} → threshold in {lower}, {upper}{rule_text}"


def learned(others: Sequence[InferredThreshold], policy: Policy) -> int | None:
    """The threshold the intervals of *other* sessions agree on (leave-one-out learning), or
    None when they teach nothing: no automatic compaction among them bounds it from above, or
    they disagree. The rule's own threshold is kept when it lies inside their interval; else the
    smallest threshold the interval allows."""
    lows = [i.low for i in others if i.low is not None]
    highs = [i.high for i in others if i.high is not None]
    if not highs or any(i.conflict for i in others):
        return None
    low = max(lows) if lows else None
    high = min(highs)
    if low is not None and not _allows(low, high, policy):
        return None
    rule = next((i.rule_threshold for i in others if i.rule_threshold is not None), None)
    return _value(low, high, rule, policy, False)


def learned_policy(native: Policy, threshold: int, sources: Sequence[str]) -> Policy:
    """The recording agent's preset with a threshold learned from other sessions (named)."""
    policy = native.model_copy(deep=True)
    policy.name = "learned"
    policy.description = (
        f"{native.name} with the threshold {threshold:,} learned from the compactions of other "
        f"sessions of the same agent version, provider and model: {', '.join(sources)}."
    )
    policy.compaction.auto_compact_token_limit = threshold
    return policy


def inferred_policy(native: Policy, interval: InferredThreshold) -> Policy:
    """The recording agent's preset with the threshold the session shows."""
    policy = native.model_copy(deep=True)
    policy.name = "inferred"
    policy.description = (
        f"{native.name} with the threshold fitted to this session's own compactions (not a "
        f"prediction): {interval.note}."
    )
    policy.compaction.auto_compact_token_limit = interval.value
    return policy
