"""docs/REPLAY_API.md describes every field of every result model, as the models' docstrings do."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.fleet.subagent_info import SubagentInfo
from core.insights.breakdown import CallBreakdown
from core.insights.calibration_figures import EstimateCalibration, MeasuredPoint, ModelTotal
from core.insights.compaction_causes import CompactionCause
from core.insights.compaction_records import CompactionReport
from core.insights.cost import CallCost, CompactionCost, SessionCost
from core.insights.diagnosis import Contributor, OverflowDiagnosis, ToolShare
from core.insights.forgotten_facts import FactRecord, Forgotten, KindRecall
from core.model.fastmodel import documented
from core.replay import (
    CallPoint,
    CompareResult,
    CompareRow,
    FidelityRow,
    MessageState,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
)
from core.replay.results import InferredThreshold, ThresholdSpan
from core.reports.analyze import AnalysisReport, CallTimeline, SessionInfo
from core.reports.breakdown import BreakdownReport
from tools.apidoc import BEGIN, DOCUMENT, END, missing_fields, reference, result_models, updated

EXPECTED: set[type[BaseModel]] = {
    ReplayResult,
    CallPoint,
    ReplayEvent,
    MessageState,
    FidelityRow,
    ReplaySummary,
    CompareResult,
    CompareRow,
    AnalysisReport,
    SessionInfo,
    OverflowDiagnosis,
    Contributor,
    ToolShare,
    ThresholdSpan,
    InferredThreshold,
    CallTimeline,
    BreakdownReport,
    CallBreakdown,
    CompactionReport,
    CompactionCause,
    Forgotten,
    KindRecall,
    FactRecord,
    CompactionCost,
    SessionCost,
    CallCost,
    SubagentInfo,
    EstimateCalibration,
    MeasuredPoint,
    ModelTotal,
}


def test_the_reference_covers_every_result_model_and_only_those() -> None:
    assert set(result_models()) == EXPECTED  # the policy's models are documented by the policy


def test_every_field_of_every_result_model_is_in_the_document() -> None:
    missing = missing_fields(DOCUMENT.read_text(encoding="utf-8"))
    assert not missing, f"not in {DOCUMENT.name}: {missing}; run python -m tools.apidoc"


def test_the_generated_reference_is_up_to_date() -> None:
    document = DOCUMENT.read_text(encoding="utf-8")
    assert updated(document) == document, "run python -m tools.apidoc"


@pytest.mark.parametrize("model", sorted(EXPECTED, key=str))
def test_every_field_has_a_description(model: type[BaseModel]) -> None:
    undocumented = [name for name, field in documented(model).items() if not field.description]
    assert not undocumented, f"{model.__name__}: add a docstring under {undocumented}"


def test_a_field_left_out_of_the_document_is_reported() -> None:
    document = f"{BEGIN}\n\n{reference()}\n\n{END}"
    assert missing_fields(document) == []
    without = document.replace("| `check_fired` |", "| `check_fired_` |")
    assert missing_fields(without) == ["CallPoint.check_fired"]
    assert "ReplayResult.session_id" in missing_fields("no generated section")
