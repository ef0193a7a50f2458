"""The models of an estimate's calibration (:mod:`core.insights.estimate_calibration`): a module
of their own, imported when a session has a calibration to report, so that ``ctxscope analyze``
of one that records its prompts does not create their classes."""

# (No ``from __future__ import annotations``: tests/unit/test_model_annotations.py.)

from pydantic import Field

from core.model.fastmodel import Documented


class MeasuredPoint(Documented):
    """One context size the file measured, beside the replay's estimate there."""

    what: str
    """Which figure of which event (``shutdown: currentTokens`` …)."""
    line: int | None = None
    """Line of that event in the file."""
    measured: int
    """The figure the agent measured."""
    estimated: int | None
    """The replay's estimate at the same place: the context after the last call before it,
    plus the estimated messages recorded since (tool outputs)."""
    error: float | None
    """``(estimated - measured) / measured`` (0.05: the estimate is 5 % too big)."""


class ModelTotal(Documented):
    """One model's input tokens over the session: the file's total beside the sum of the
    replay's estimated prompts of the calls to that model."""

    model: str
    """The model, as the file names it."""
    measured_input: int
    """``modelMetrics[model].usage.inputTokens`` (cache reads included)."""
    estimated_input: int
    """The replay's estimated prompts of the calls to that model, summed."""
    calls: int
    """Those calls (the file's own request count may differ: it counts retries and the
    compaction's own requests)."""
    requests: int | None = None
    """The file's request count for that model."""
    error: float | None
    """``(estimated - measured) / measured``."""


class EstimateCalibration(Documented):
    """The estimate's error wherever the file measured the context."""

    points: list[MeasuredPoint] = Field(default_factory=list)
    """Every context size the file measured, in file order."""
    model_totals: list[ModelTotal] = Field(default_factory=list)
    """Every model's input over the session."""
    largest_error: float | None = None
    """The largest absolute error over the points and the model totals (None: nothing measured)."""
