"""How far the estimated context of a session without recorded prompts is from what its file
measured.

Copilot CLI writes no prompt size per call (only output tokens), so the replay estimates every
call's context (``overhead + estimated messages``, labelled ``estimated``). The file does measure
the context now and then: a compaction's ``currentTokens`` / ``preCompactionTokens`` and the
shutdown's ``currentTokens`` (the loader keeps them in ``metadata["measured_context"]`` with the
message they were measured before), and the shutdown's per-model input totals
(``metadata["model_totals"]``). :func:`calibration` sets the replay's figures beside them: the
error at each measured point and over each model's calls, so the estimate is shown with how
wrong it was where it could be checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.model.lazy_types import moved_names

if TYPE_CHECKING:
    from core.insights.calibration_figures import EstimateCalibration
    from core.model.session import Session
    from core.replay.points import CallPoint

# The models of :mod:`core.insights.calibration_figures`, still importable from here: their
# classes are created when a calibration is first made or named, not as ``analyze`` starts
# (most sessions record their prompts and have none).
__getattr__ = moved_names(
    __name__,
    EstimateCalibration="core.insights.calibration_figures",
    MeasuredPoint="core.insights.calibration_figures",
    ModelTotal="core.insights.calibration_figures",
)


def prompts_estimated(session: Session) -> bool:
    """The session's file records no prompt size for its calls (Copilot CLI): every figure is
    an estimate, and :func:`calibration` has something to say."""
    return session.metadata.get("prompt_tokens_recorded") is False


def _error(estimated: int | None, measured: int) -> float | None:
    if estimated is None or measured <= 0:
        return None
    return round((estimated - measured) / measured, 4)


def calibration(
    session: Session,
    points: Sequence[CallPoint],
    tokens: Callable[[], Sequence[int]] | None = None,
) -> EstimateCalibration | None:
    """The calibration of ``session``'s estimated figures (``points``: its replay's calls;
    ``tokens``: gives its messages' estimated tokens, asked only when there is something to
    calibrate, for what came after the last call before a measured point), or None when its calls recorded their own prompts (nothing is estimated)
    or the file measured nothing."""
    metadata = session.metadata
    if not prompts_estimated(session):
        return None
    measured = metadata.get("measured_context") or []
    totals = metadata.get("model_totals") or {}
    if not measured and not totals:
        return None
    from core.insights.calibration_figures import EstimateCalibration, MeasuredPoint, ModelTotal

    result = EstimateCalibration()
    counts = tokens() if tokens is not None and measured else ()
    for entry in measured:
        at = entry["message_index"]
        before = [p for p in points if p.message_index < at]
        estimated = None
        if before:
            since = counts[before[-1].message_index + 1 : at]
            estimated = before[-1].baseline_after_tokens + sum(since)
        result.points.append(
            MeasuredPoint(
                what=entry["what"],
                line=entry.get("line"),
                measured=entry["tokens"],
                estimated=estimated,
                error=_error(estimated, entry["tokens"]),
            )
        )
    messages = session.messages
    for model, figures in sorted(totals.items()):
        mine = [p for p in points if messages[p.message_index].model == model]
        measured_input = figures.get("input", 0)
        estimated_input = sum(p.baseline_tokens for p in mine)
        result.model_totals.append(
            ModelTotal(
                model=model,
                measured_input=measured_input,
                estimated_input=estimated_input,
                calls=len(mine),
                requests=figures.get("requests"),
                error=_error(estimated_input if mine else None, measured_input),
            )
        )
    errors = [abs(e) for e in _errors(result) if e is not None]
    result.largest_error = max(errors) if errors else None
    return result


def _errors(result: EstimateCalibration) -> list[float | None]:
    return [p.error for p in result.points] + [t.error for t in result.model_totals]


def calibration_note(result: EstimateCalibration) -> str | None:
    """One sentence for the report's notes: the estimate against the measured figures."""
    parts = [
        f"{p.what} {p.measured:,} measured, {p.estimated:,} estimated ({p.error:+.1%})"
        for p in result.points
        if p.estimated is not None and p.error is not None
    ]
    parts += [
        f"{t.model}'s input {t.measured_input:,} measured over {t.requests or '?'} requests, "
        f"{t.estimated_input:,} estimated over {t.calls} calls ({t.error:+.1%})"
        for t in result.model_totals
        if t.error is not None
    ]
    if not parts:
        return None
    return "the prompt sizes are estimated (the file records none); against what it measured: " + (
        "; ".join(parts)
    )
