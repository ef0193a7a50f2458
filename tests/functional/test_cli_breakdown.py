"""``ctxscope breakdown`` and ``ctxscope compactions`` through the real command line group, the
new fields of ``analyze --json``, and why each compaction ran (core.insights.compaction_causes) on built
sessions and on every real session of ../shared/samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from core.formats import load_session
from core.formats.ctxscope_jsonl import write_session
from core.insights.breakdown import CATEGORIES, CallBreakdown, ContextBreakdown
from core.insights.compaction_causes import compaction_causes
from core.insights.compaction_records import CompactionReport
from core.model.session import Session
from core.policy import get_preset
from core.replay import native_policy, replay
from core.reports.analyze import AnalysisReport
from core.reports.breakdown import BreakdownReport
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO
from tui.cli.main import cli

ROOT = REPO
COMPACTED = ROOT / "sample_sessions" / "claude-code" / "compacted.jsonl"
SAMPLES = ROOT.parent / "shared" / "samples"
WITH_COMPACTIONS = (
    sorted(
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json") and "storage" not in p.parts
    )
    if SAMPLES.is_dir()
    else []
)
needs_sample = pytest.mark.skipif(not COMPACTED.exists(), reason="sample_sessions not generated")


def _growing() -> Session:
    """A session whose context grows by tool outputs until seed's threshold compacts it."""
    builder = SessionBuilder().user("build the report")
    context = 20_000
    for _ in range(12):
        builder.call("bash", {"command": "make report"}, context=context).result(tokens=15_000)
        context += 15_100
    return builder.reply("done", context=context).session(window=200_000)


@needs_sample
def test_breakdown_json_adds_up_at_every_call() -> None:
    result = CliRunner().invoke(cli, ["breakdown", str(COMPACTED), "--json"])
    assert result.exit_code == 0, result.output
    parsed = ContextBreakdown.model_validate_json(result.stdout)
    assert parsed.calls
    for row in parsed.calls:
        assert sum(row.tokens(c) for c in CATEGORIES) == row.total_tokens


@needs_sample
def test_breakdown_json_holds_its_session_and_rows_until_the_process_ends() -> None:
    """Issue 24: the command's session and every call's rows are not freed one by one as it
    returns (a one-shot command ends without tearing its heap down): it holds them, the last
    command's only."""
    from tui.cli.commands import breakdown as command

    runner = CliRunner()
    for _ in range(2):
        result = runner.invoke(cli, ["breakdown", str(COMPACTED), "--json"])
        assert result.exit_code == 0, result.output
        calls = json.loads(result.stdout)["calls"]
        session, rows, per_call = command._KEPT
        assert isinstance(session, Session)
        assert rows == calls
        assert isinstance(per_call, list)
        assert len(per_call) == len(calls)


@needs_sample
def test_breakdown_json_writes_its_document_as_made_then_the_newline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The document is written as the bytes it was made as, then its newline: not copied into
    a new object to add the newline (a 100 MB session's is 50 MB, the process's peak)."""
    from tui.cli.commands import breakdown as command

    made: list[bytes] = []
    written: list[bytes] = []
    real = command.report_json

    def report_json(*args: Any, **kwargs: Any) -> bytes:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(command, "report_json", report_json)
    monkeypatch.setattr(command, "write_stdout_bytes", written.append)
    result = CliRunner().invoke(cli, ["breakdown", str(COMPACTED), "--json"])
    assert result.exit_code == 0, result.output
    assert len(made) == 1
    assert written[0] is made[0]
    assert written[1:] == [b"\n"]


@needs_sample
def test_breakdown_of_one_call_and_the_table() -> None:
    runner = CliRunner()
    one = runner.invoke(cli, ["breakdown", str(COMPACTED), "--call", "3", "--json"])
    assert one.exit_code == 0, one.output
    assert CallBreakdown.model_validate_json(one.stdout).call_index == 3
    table = runner.invoke(cli, ["breakdown", str(COMPACTED), "--call", "3"])
    assert "call 3 (message" in table.stdout and "tool outputs" in table.stdout
    every = runner.invoke(cli, ["breakdown", str(COMPACTED)])
    assert every.exit_code == 0 and "context breakdown" in every.stdout
    missing = runner.invoke(cli, ["breakdown", str(COMPACTED), "--call", "99999"])
    assert missing.exit_code == 2 and "calls" in missing.stderr


@needs_sample
def test_analyze_json_has_the_compactions_and_the_cost_breakdown_json_every_call() -> None:
    runner = CliRunner()
    report = AnalysisReport.model_validate_json(
        runner.invoke(cli, ["analyze", str(COMPACTED), "--json"]).stdout
    )
    broken_down = BreakdownReport.model_validate_json(
        runner.invoke(cli, ["breakdown", str(COMPACTED), "--json"]).stdout
    )
    assert len(broken_down.calls) == report.session.calls
    assert broken_down.cost is not None and broken_down.cost.per_call
    assert broken_down.cost.total_usd == pytest.approx(report.cost.total_usd if report.cost else 0)
    assert len(report.compactions) >= report.session.recorded_compactions
    recorded = [c for c in report.compactions if c.why.source == "recorded"]
    assert all(c.forgotten is not None and c.forgotten.readable for c in recorded)
    assert report.cost is not None and report.cost.total_usd is not None


@needs_sample
def test_compactions_command_prints_why_what_was_forgotten_and_the_cost() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["compactions", str(COMPACTED), "--compare"])
    assert result.exit_code == 0, result.output
    assert "recorded compaction 0" in result.stdout
    assert "what it kept" in result.stdout
    assert "replayed" in result.stdout  # the side-by-side table
    as_json = runner.invoke(cli, ["compactions", str(COMPACTED), "--json"])
    reports = [CompactionReport.model_validate(r) for r in json.loads(as_json.stdout)]
    assert reports and reports[0].why.source == "recorded"


def test_compactions_needs_a_url_and_a_model_for_a_live_llm(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(_growing(), path)
    result = CliRunner().invoke(cli, ["compactions", str(path), "--llm", "mock"])
    assert result.exit_code == 2 and "--llm" in result.stderr


def test_a_replayed_compaction_says_what_filled_the_window_and_which_check_crossed() -> None:
    session = _growing()
    result = replay(session, get_preset("seed"))
    causes = [c for c in compaction_causes(session, result) if c.source == "replayed"]
    assert causes
    first = causes[0]
    assert first.trigger in ("threshold", "projection")
    assert first.threshold is not None and first.check_tokens is not None
    assert first.crossed_at_call_index is not None
    assert first.call_index is not None and first.crossed_at_call_index < first.call_index + 1
    assert first.by_tool[0].tool_name == "bash"
    assert first.contributors and first.contributors[0].tokens == 15_000
    assert "bash" in first.explanation


def test_a_recorded_automatic_compaction_names_its_threshold_and_the_call_before_it() -> None:
    session = (
        SessionBuilder()
        .user("go")
        .call("read", context=150_000)
        .result(text_of_tokens(10_000))
        .reply("done", context=168_000)
        .compaction(tokens_before=168_000)
        .user("next")
        .reply("ok", context=20_000)
        .session(window=200_000)
    )
    result = replay(session, get_preset("claude-code"))
    (cause,) = [c for c in compaction_causes(session, result) if c.source == "recorded"]
    assert cause.trigger == "auto"
    assert cause.call_index == 2 and cause.crossed_at_call_index == 1
    assert cause.threshold is not None
    assert cause.growth_tokens >= 10_000
    assert cause.by_tool[0].tool_name == "read"


@pytest.mark.skipif(not WITH_COMPACTIONS, reason="shared samples are not available")
@pytest.mark.parametrize("path", WITH_COMPACTIONS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_recorded_compaction_of_the_samples_has_a_cause(path: Path) -> None:
    session = load_session(path)
    result = replay(session, native_policy(session))
    causes = [c for c in compaction_causes(session, result) if c.source == "recorded"]
    assert len(causes) == sum(1 for c in session.compactions if not c.rewound)
    for cause in causes:
        assert cause.explanation
        row = result.fidelity[cause.recorded_index or 0]
        if row.automatic and row.trigger == "auto" and cause.call_index:
            assert cause.crossed_at_call_index == cause.call_index - 1
            assert cause.threshold is not None
