"""What the policy panel says of where the window and the thresholds come from (no drawing).

Three lines, from the replay result and the threshold the session's own compactions show:

* the window, its source and the sentence that says why (``ReplayResult.window_evidence``), and
  each change of it during the session;
* the threshold: the policy's rule at every call (``ReplayResult.thresholds``; the recording
  never moves it);
* the interval the session's compactions allow ("compacted at X; did not at Y → threshold in
  (Y, X]"), from :meth:`core.replay.Replayer.inferred_threshold`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.model.write_numbers import format_tokens
from tui.figures import call_label, window_changes, window_label

if TYPE_CHECKING:
    from core.replay import ReplayResult, ThresholdSpan
    from tui.screen_state import Inferred


def evidence_text(result: ReplayResult, inferred: Inferred | None) -> str:
    """The panel's evidence lines for ``result`` (see the module docstring)."""
    from core.insights.named_figures import RECORDING_CHECK, replay_threshold  # (replay loaded)

    lines = [_window_line(result), _threshold_line(result)]
    figure = replay_threshold(result)
    if figure.window is not None and figure.tokens is not None and not figure.usable:
        lines.append(f"Threshold {figure.label}.")  # at or above the window: flagged
    if inferred is not None:
        interval = inferred.threshold
        lines.append(
            "The session's own compactions (a fact, never used by a replay), by the "
            f"{RECORDING_CHECK.name} before each call (not the replay's check): {interval.note}."
        )
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
    rule = _rule_text(result)
    inferred = [span for span in result.thresholds if span.source == "inferred"]
    if not inferred:
        return f"Threshold {rule} at every call."
    if len(inferred) == len(result.thresholds):
        head = f"Threshold: the recording's at every call, not the {rule}"
    else:
        head = f"Threshold {rule}, except where the recording contradicts it"
    stretches = "; ".join(_span_text(span) for span in inferred[:2])
    more = f" (and {len(inferred) - 2} more)" if len(inferred) > 2 else ""
    return f"{head} (┄ on the gauge): {stretches}{more}."


def _rule_text(result: ReplayResult) -> str:
    """What the policy's documented rule gives (per window, when the window changes)."""
    values = sorted({s.rule_threshold for s in result.thresholds if s.rule_threshold is not None})
    if not values and result.threshold is not None:
        values = [result.threshold]
    name = result.policy.compaction.threshold_rule
    if len(values) > 1:
        shown = ", ".join(format_tokens(v) for v in values[:3])
        return f"{shown} (the {name} rule, per window)"
    figure = format_tokens(values[0]) if values else "none"
    return f"{figure} (the {name} rule)"


def _span_text(span: ThresholdSpan) -> str:
    calls = f"calls {span.first_call}–{span.last_call}"
    used = format_tokens(span.threshold) if span.threshold is not None else "none"
    rule = format_tokens(span.rule_threshold) if span.rule_threshold is not None else "none"
    why = f" ({span.note})" if span.note else ""
    return f"{calls} use {used} instead of {rule}{why}"
