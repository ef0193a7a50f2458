"""What a session's own compactions say about the agent's threshold: a fact reported beside a
replay, never a setting of one.

An agent's threshold depends on settings the transcript does not hold: Claude Code's auto-compact
window (per session, per release, per plan), Codex's ``model_auto_compact_token_limit``,
opencode's ``compaction.reserved``, pi's ``reserveTokens``. The documented rule gives the
default; the recording gives evidence about the value the agent really used:

* an automatic compaction before call *k* means the agent's check before *k* crossed its
  threshold and no check since the previous compaction did: the threshold lies in *(G, F]*, where
  *F* is the figure that check measured and *G* the largest figure an earlier check of the same
  stretch measured;
* a stretch that ends without an automatic compaction (a manual one, an overflow recovery, the
  end of the session) means no check crossed it: the threshold is above every figure measured.

The figures are the ones the policy's own check measures on the recording (a run that follows
the recording: :meth:`core.replay.engine.Replayer.recorded_checks`). Per stretch (a *span*), the
rule's threshold is kept when it agrees with the evidence (``source = "rule"``); otherwise the
span carries the smallest threshold the evidence allows (``source = "inferred"``) and says why.
The spans feed :func:`core.replay.inferred.intersect` (the interval shown by ``analyze``, the JSON
and the TUI, and the labelled ``inferred`` policy) and the leave-one-out learning of ``ctxscope
fidelity --learn``, which scores a session only on what *other* sessions taught. No replay of a
preset reads them: a fidelity figure is a prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, islice
from operator import ne

from core.algorithms.overflow import crosses
from core.model.fastmodel import build_filled
from core.policy import Policy
from core.replay.checks import CheckRules
from core.replay.recorded import RecordedCompaction, RecordedCompactions
from core.replay.results import ThresholdSpan
from core.replay.state import HAS_PROJ, NOW_BASE, Check, CheckColumns, all_same, as_columns


@dataclass(frozen=True, slots=True)
class _Stretch:
    """Calls ``first``..``last`` (inclusive) between two recorded compactions; ``ends_with``
    the automatic compaction the last call's check fired, if any."""

    first: int
    last: int
    ends_with: RecordedCompaction | None


def stretches(recorded: RecordedCompactions, calls: int) -> list[_Stretch]:
    """The session's calls cut at each recorded compaction."""
    cuts: list[tuple[int, RecordedCompaction | None]] = []
    for rc in sorted(recorded.all, key=lambda rc: (rc.recorded_call is None, rc.recorded_call)):
        if rc.recorded_call is None or rc.rewound:
            continue
        if rc.automatic and rc.kind == "auto":
            cuts.append((rc.recorded_call, rc))  # the check before this call fired it
        elif rc.kind == "overflow":
            cuts.append((rc.recorded_call, None))  # after the refused call
        else:
            cuts.append((rc.recorded_call - 1, None))  # the user's: before this call
    out: list[_Stretch] = []
    first = 0
    for last, fired in cuts:
        if last < first:
            continue
        out.append(_Stretch(first, min(last, calls - 1), fired))
        first = last + 1
    if first < calls:
        out.append(_Stretch(first, calls - 1, None))
    return out


def thresholds_from_evidence(
    recorded: RecordedCompactions,
    checks: Sequence[Check | None],
    rule: Sequence[int | None],
    policy: Policy,
) -> tuple[list[int | None], list[ThresholdSpan]]:
    """The threshold at each call and the spans that explain it (see the module docstring).

    ``checks``: the policy's check before each call on the recording (read as columns: a
    trace's checks are not made one by one); ``rule``: the rule's threshold at each call.
    """
    made = as_columns(checks)
    rules = CheckRules(policy)
    limits = list(rule)
    spans: list[ThresholdSpan] = []
    for stretch in stretches(recorded, len(rule)):
        span = _span(stretch, made, rule, rules, policy)
        spans.append(span)
        if span.source == "inferred":
            for c in range(stretch.first, stretch.last + 1):
                limits[c] = span.threshold
    return limits, spans


def _span(
    stretch: _Stretch,
    made: CheckColumns,
    rule: Sequence[int | None],
    rules: CheckRules,
    policy: Policy,
) -> ThresholdSpan:
    first, last = stretch.first, stretch.last
    rule_value = next((v for v in rule[first : last + 1] if v is not None), None)
    target = last if stretch.ends_with is not None else None
    earlier = _largest(made, first, last if target is not None else last + 1)
    fired_on = _figure(made, last) if target is not None else None
    base = {
        "first_call": first,
        "last_call": last,
        "rule_threshold": rule_value,
        "low": earlier,
        "high": fired_on,
        "recorded_index": stretch.ends_with.index if stretch.ends_with is not None else None,
    }
    if rule_value is None:
        return _stretch_span(base, threshold=None, source="rule", note="")
    if stretch.ends_with is not None and not stretch.ends_with.consistent_with(fired_on):
        note = "the file does not hold the context the agent measured before this compaction"
        return _stretch_span(base, threshold=rule_value, source="rule", note=note)
    fires = rules.first_firing(made, first, last + 1, rule)
    if fires == target:
        return _stretch_span(base, threshold=rule_value, source="rule", note="")
    if earlier is None and target is None:
        return _stretch_span(base, threshold=rule_value, source="rule", note="")
    value = _just_above(earlier, policy) if earlier is not None else rule_value
    trial = [value] * len(rule)
    if rules.first_firing(made, first, last + 1, trial) != target:
        note = _conflict_note(first, last, fired_on, earlier)
        return _stretch_span(base, threshold=rule_value, source="rule", note=note)
    note = _inferred_note(stretch, rule_value, fires, made, fired_on, earlier)
    return _stretch_span(base, threshold=value, source="inferred", note=note)


def _figure(made: CheckColumns, c: int) -> int | None:
    """What the check before call ``c`` measured (its projection when it has one; None when
    it measured nothing)."""
    check = made.check(c)
    return check.proj if check.proj is not None else check.base


def _largest(made: CheckColumns, start: int, stop: int) -> int | None:
    """The largest figure the checks before calls ``start``..``stop - 1`` could fire on: each
    projection, and each figure a check was made on (read from the columns, in C)."""
    if start >= stop:
        return None
    flags = made.flags_of(start, stop)
    base, proj, _measure = made.figures_of(start, stop)
    return max(
        max(compress(proj, flags.translate(HAS_PROJ)), default=None),
        max(compress(base, flags.translate(NOW_BASE)), default=None),
        key=_or_less,
    )


def _or_less(figure: int | None) -> tuple[bool, int]:
    """A key that puts None below every figure."""
    return (figure is not None, figure or 0)


def _just_above(figure: int, policy: Policy) -> int:
    """The smallest threshold that ``figure`` does not cross."""
    return figure + 1 if crosses(figure, figure, policy) else figure


def _inferred_note(
    stretch: _Stretch,
    rule_value: int,
    fires: int | None,
    made: CheckColumns,
    fired_on: int | None,
    earlier: int | None,
) -> str:
    if stretch.ends_with is not None:
        seen = f"{fired_on:,}" if fired_on is not None else "?"
        before = f", not at {earlier:,}" if earlier is not None else ""
        return (
            f"the agent compacted before call {stretch.last} at {seen}{before}; the rule's "
            f"{rule_value:,} does not explain it, so the threshold is taken from the recording"
        )
    passed = _figure(made, fires) if fires is not None else None
    what = f" ({passed:,})" if passed is not None else ""
    return (
        f"the recording passed the rule's {rule_value:,} before call {fires}{what} without "
        "compacting (auto-compaction off, or set higher): no compaction here"
    )


def _conflict_note(first: int, last: int, fired_on: int | None, earlier: int | None) -> str:
    seen = f"{fired_on:,}" if fired_on is not None else "nothing"
    before = f", an earlier one {earlier:,}" if earlier is not None else ""
    return (
        f"no single threshold explains calls {first}-{last}: the check that fired measured "
        f"{seen}{before}; the rule's threshold is kept"
    )


def _stretch_span(
    base: dict[str, int | None], *, threshold: int | None, source: str, note: str
) -> ThresholdSpan:
    """A stretch's span from its figures (``base``) and what the replay made of it: built, not
    validated (trusted values; a validated span built the class's schema)."""
    return build_filled(
        ThresholdSpan, {**base, "threshold": threshold, "source": source, "note": note}
    )


def rule_spans(rule: Sequence[int | None]) -> list[ThresholdSpan]:
    """The spans of a policy's own thresholds: one per run of calls with the same threshold."""
    n = len(rule)
    # Where the threshold changes, found in C (a limit change re-makes these on 50,000 calls);
    # none where every call's is the first's.
    if all_same(rule):
        starts = [0] if n else []
    else:
        starts = [0, *compress(range(1, n), map(ne, islice(rule, 1, None), rule))]
    return [
        build_filled(
            ThresholdSpan,
            {
                "first_call": first,
                "last_call": (starts[k + 1] if k + 1 < len(starts) else n) - 1,
                "threshold": rule[first],
                "source": "rule",
                "rule_threshold": rule[first],
                "low": None,
                "high": None,
                "recorded_index": None,
                "note": "",
            },
        )
        for k, first in enumerate(starts)
    ]
