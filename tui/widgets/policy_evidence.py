"""What the policy panel says of where the window and the thresholds come from (no drawing).

Three lines, from the replay result and the threshold the session's own compactions show:

* the window, its source and the sentence that says why (``ReplayResult.window_evidence``), and
  each change of it during the session;
* the threshold: the policy's rule at every call, or, stretch by stretch, where the recording
  contradicts the rule and the replay uses what the recording shows (``ReplayResult.thresholds``);
* the interval the session's compactions allow ("compacted at X; did not at Y → threshold in
  (Y, X]"), from :meth:`core.replay.Replayer.inferred_threshold`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.units import format_tokens
from tui.figures import call_label, window_changes, window_label

if TYPE_CHECKING:
    from core.replay import ReplayResult, ThresholdSpan
    from tui.state import Inferred


def evidence_text(result: ReplayResult, inferred: Inferred | None) -> str:
    """The panel's evidence lines for ``result`` (see the module docstring)."""
    lines = [_window_line(result), _threshold_line(result)]
    if inferred is not None:
        interval = inferred.threshold
        lines.append(f"The session's compactions: {interval.note}.")
    return "\n".join(line for line in lines if line)


def _window_line(result: ReplayResult) -> str:
    line = window_label(result.window, result.window_source)
    if result.window_evidence:
        line += f": {result.window_evidence}"
    changes = window_changes(result)
    if changes:
        steps = ", ".join(
            f"{format_tokens(window) if window else 'unknown'} from {call_label(call)}"
            for call, window in changes
        )
        line += f" It changes during the session: {steps}."
    return line


def _threshold_line(result: ReplayResult) -> str:
    if result.threshold is None and not result.thresholds:
        return "Threshold: none (the window is unknown)."
    inferred = [span for span in result.thresholds if span.source == "inferred"]
    rule = _rule_text(result)
    if not inferred:
        return f"Threshold {rule}."
    stretches = "; ".join(_span_text(span) for span in inferred[:2])
    more = f" (and {len(inferred) - 2} more)" if len(inferred) > 2 else ""
    return (
        f"Threshold {rule}, except where the recording contradicts it (┄ on the gauge): "
        f"{stretches}{more}."
    )


def _rule_text(result: ReplayResult) -> str:
    values = sorted({p.threshold for p in result.points if p.threshold is not None})
    if len(values) > 1:
        shown = ", ".join(format_tokens(v) for v in values[:3])
        return f"by the {result.policy.compaction.threshold_rule} rule: {shown} (per window)"
    figure = format_tokens(values[0]) if values else format_tokens(result.threshold or 0)
    return f"{figure} by the {result.policy.compaction.threshold_rule} rule at every call"


def _span_text(span: ThresholdSpan) -> str:
    calls = f"calls {span.first_call}–{span.last_call}"
    used = format_tokens(span.threshold) if span.threshold is not None else "none"
    rule = format_tokens(span.rule_threshold) if span.rule_threshold is not None else "none"
    why = f" ({span.note})" if span.note else ""
    return f"{calls} use {used} instead of {rule}{why}"
