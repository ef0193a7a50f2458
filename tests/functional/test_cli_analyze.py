"""``ctxscope analyze / replay / compare / policy`` through the real command line group."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from core.formats.ctxscope_jsonl import write_session
from core.model.session import Session
from core.policy import PRESETS, get_preset, load_policy
from core.replay import CompareResult, ReplayResult
from core.reports.analyze import AnalysisReport
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO
from tests.support.sessions import late_overflow_session
from tui.cli.main import cli

SAMPLES = REPO.parent / "shared" / "samples"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _write(session: Session, tmp_path: Path, name: str = "session.jsonl") -> str:
    path = tmp_path / name
    write_session(session, path)
    return str(path)


def _calm() -> Session:
    return (
        SessionBuilder()
        .user("add a test")
        .call("read", context=3_000)
        .result(text_of_tokens(2_000, "r"))
        .call("edit", context=5_100)
        .result("ok")
        .reply("done", context=5_200)
        .session(window=200_000)
    )


def _one_error_line(result: Result) -> str:
    stderr = result.stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- analyze ----------------------------------------------------------------------------------


def test_analyze_prints_diagnosis_summary_and_sparkline(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(late_overflow_session(), tmp_path)
    result = runner.invoke(cli, ["analyze", path, "--policy", "pi"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "overflow" in out
    assert "grep" in out  # the biggest contributor
    assert "replay summary" in out
    assert any(bar in out for bar in "▁▂▃▄▅▆▇█")
    assert result.stderr == ""  # no progress bar when stderr is not a terminal


def test_analyze_json_follows_the_schema(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(late_overflow_session(), tmp_path)
    result = runner.invoke(cli, ["analyze", path, "--policy", "pi", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 2
    report = AnalysisReport.model_validate(data)
    assert report.overflow
    assert report.diagnosis.overflowed and report.diagnosis.call_index == 3
    assert report.diagnosis.contributors[0].tool_name == "grep"
    assert report.session.calls == 4 and report.session.window == 100_000
    assert report.policy == "pi" and report.threshold == 100_000 - 16_384
    assert set(data) >= {"session", "diagnosis", "summary", "fidelity", "events", "notes"}
    # version 2: the per-call breakdown, prices and check log live in breakdown / replay --json
    assert not {"breakdown", "checks"} & set(data)
    assert report.cost is not None and report.cost.per_call == report.cost.other_calls == []
    timeline = report.timeline
    assert timeline is not None and len(timeline.simulated_tokens) == report.session.calls == 4
    assert timeline.message_index == sorted(timeline.message_index)
    assert timeline.recorded_tokens[3] == report.diagnosis.tokens


def test_the_check_log_analyze_left_is_in_replay_json(runner: CliRunner, tmp_path: Path) -> None:
    """What ``checks[]`` of analyze v1 said, ``replay --json``'s points say; the check figures
    of analyze's timeline are the points' own."""
    path = _write(late_overflow_session(), tmp_path)
    analyzed = AnalysisReport.model_validate_json(
        runner.invoke(cli, ["analyze", path, "--policy", "seed", "--json"]).stdout
    )
    replayed = ReplayResult.model_validate_json(
        runner.invoke(cli, ["replay", path, "--policy", "seed", "--json"]).stdout
    )
    assert analyzed.timeline is not None
    assert analyzed.timeline.check_tokens == [p.check_tokens for p in replayed.points]
    assert analyzed.timeline.simulated_tokens == [p.simulated_tokens for p in replayed.points]
    assert all(p.checked and p.check_basis is not None for p in replayed.points)


def test_fail_on_overflow_sets_exit_status_1(runner: CliRunner, tmp_path: Path) -> None:
    bad = _write(late_overflow_session(), tmp_path, "bad.jsonl")
    good = _write(_calm(), tmp_path, "good.jsonl")
    assert runner.invoke(cli, ["analyze", bad, "--fail-on-overflow"]).exit_code == 1
    assert runner.invoke(cli, ["analyze", good, "--fail-on-overflow"]).exit_code == 0
    # the same file with a window that cannot even hold the system prompt
    tiny = runner.invoke(cli, ["analyze", good, "--window", "1000", "--fail-on-overflow"])
    assert tiny.exit_code == 1
    assert "smaller than the recorded overhead" in tiny.stdout


def test_margin_reports_a_near_miss(runner: CliRunner, tmp_path: Path) -> None:
    session = (
        SessionBuilder()
        .user()
        .call(context=50_000)
        .result("x")
        .reply(context=96_000)
        .session(window=100_000)
    )
    path = _write(session, tmp_path)
    result = runner.invoke(cli, ["analyze", path, "--margin", "0.05", "--json"])
    data = json.loads(result.stdout)
    assert not data["diagnosis"]["overflowed"]
    assert data["diagnosis"]["overflow_reason"] == "near-window"
    result = runner.invoke(cli, ["analyze", path, "--margin", "0.01", "--json"])
    assert json.loads(result.stdout)["diagnosis"]["call_index"] is None


# --- replay -----------------------------------------------------------------------------------


def test_replay_json_is_the_replay_result(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(late_overflow_session(), tmp_path)
    result = runner.invoke(cli, ["replay", path, "--policy", "seed", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1
    replayed = ReplayResult.model_validate(data)
    assert replayed.policy.name == "seed"
    assert len(replayed.points) == 4 and len(replayed.messages) == 8


def test_replay_human_output_lists_events(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(late_overflow_session(), tmp_path)
    result = runner.invoke(cli, ["replay", path, "-p", "seed"])
    assert result.exit_code == 0, result.output
    assert "events" in result.stdout
    assert "compact" in result.stdout or "overflow" in result.stdout


def test_replay_rejects_a_bad_llm_option(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(_calm(), tmp_path)
    result = runner.invoke(cli, ["replay", path, "--llm", "ftp://nowhere"])
    assert result.exit_code == 2
    assert "--llm" in _one_error_line(result)
    result = runner.invoke(cli, ["replay", path, "--model", "gpt-x"])
    assert result.exit_code == 2
    _one_error_line(result)


# --- compare ----------------------------------------------------------------------------------


def test_compare_defaults_to_every_preset(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(late_overflow_session(), tmp_path)
    result = runner.invoke(cli, ["compare", path, "--json"])
    assert result.exit_code == 0, result.output
    compared = CompareResult.model_validate(json.loads(result.stdout))
    assert [row.policy for row in compared.rows] == list(PRESETS)
    chosen = runner.invoke(cli, ["compare", path, "-p", "pi", "-p", "codex"])
    assert chosen.exit_code == 0, chosen.output
    assert "pi" in chosen.stdout and "codex" in chosen.stdout and "opencode" not in chosen.stdout


# --- policy -----------------------------------------------------------------------------------


def test_policy_show_lists_every_field_with_help(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["policy", "show", "pi"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "compaction.reserve_tokens" in out and "16,384" in out
    assert "Tokens kept free below the window" in out  # the field's own help text
    assert "[bash]" in out  # values are printed literally, not as markup


def test_policy_dump_loads_back(runner: CliRunner, tmp_path: Path) -> None:
    for name in PRESETS:
        result = runner.invoke(cli, ["policy", "dump", name])
        assert result.exit_code == 0, result.output
        tomllib.loads(result.stdout)
        path = tmp_path / f"{name}.toml"
        path.write_text(result.stdout, encoding="utf-8")
        assert load_policy(path) == get_preset(name)
        shown = runner.invoke(cli, ["policy", "show", str(path)])
        assert shown.exit_code == 0


# --- bad input: exit 2 with one line ------------------------------------------------------------


def test_missing_file(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["analyze", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 2
    assert "nope.jsonl" in _one_error_line(result)


def test_not_a_session(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text\nnot json\n", encoding="utf-8")
    for command in ("analyze", "replay", "compare"):
        result = runner.invoke(cli, [command, str(path)])
        assert result.exit_code == 2, command
        _one_error_line(result)


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('base = "pi"\n[compaction]\nreserve_tokens = "lots"\n', "compaction.reserve_tokens"),
        ('base = "pi"\n[compaction]\nreserve_tokenz = 100\n', "compaction.reserve_tokenz"),
        ("estimator = 4\n", "estimator"),
    ],
)
def test_bad_policy_file_names_the_file_and_the_field(
    runner: CliRunner, tmp_path: Path, toml: str, expected: str
) -> None:
    policy = tmp_path / "mine.toml"
    policy.write_text(toml, encoding="utf-8")
    session = _write(_calm(), tmp_path)
    for args in (["analyze", session, "--policy", str(policy)], ["policy", "show", str(policy)]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, result.output
        line = _one_error_line(result)
        assert "mine.toml" in line and expected in line


def test_unknown_policy_name(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["replay", _write(_calm(), tmp_path), "--policy", "nonesuch"])
    assert result.exit_code == 2
    assert "nonesuch" in _one_error_line(result)


def test_an_unknown_model_gets_a_window_inferred_from_its_usage(
    runner: CliRunner, tmp_path: Path
) -> None:
    session = _calm()  # its largest prompt is 5,200 tokens
    session.context_window = None
    session.window_source = "unknown"
    session.model = "mystery-model-9"
    path = _write(session, tmp_path)
    result = runner.invoke(cli, ["analyze", path, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["session"]
    assert (report["window"], report["window_source"]) == (8_192, "inferred")
    assert "mystery-model-9 is not in the table" in report["window_evidence"]
    fixed = runner.invoke(cli, ["analyze", path, "--window", "50000", "--json"])
    assert fixed.exit_code == 0, fixed.output
    assert json.loads(fixed.stdout)["session"]["window"] == 50_000


def test_a_window_nothing_can_tell_is_reported_not_refused(
    runner: CliRunner, tmp_path: Path
) -> None:
    session = SessionBuilder(model="mystery-model-9").user("hi").reply("hello").session(window=None)
    result = runner.invoke(cli, ["analyze", _write(session, tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert any("unknown context window" in note and "--window" in note for note in notes)


def test_no_usage_at_all(runner: CliRunner, tmp_path: Path) -> None:
    session = SessionBuilder().user("hi").call().result("x" * 400).reply("bye").session()
    result = runner.invoke(cli, ["analyze", _write(session, tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert any("no recorded usage" in note for note in notes)


def test_one_message_session(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(SessionBuilder().user("hello").session(), tmp_path)
    for command in ("analyze", "replay", "compare"):
        result = runner.invoke(cli, [command, path])
        assert result.exit_code == 0, (command, result.output)


def test_real_pi_sample_reproduces_its_compaction(runner: CliRunner) -> None:
    sample = SAMPLES / "pi" / "before-compaction.jsonl"
    if not sample.exists():
        pytest.skip("pi sample not available")
    result = runner.invoke(cli, ["analyze", str(sample), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["policy"] == "pi"
    assert [row["outcome"] for row in data["fidelity"]] == ["manual", "same"]


def test_replay_with_a_live_endpoint_over_http(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--llm URL`` sends the summary requests to an OpenAI-compatible server (our mock one)."""
    from tests.support.mock_llm import MockLLMProcess

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    script = SessionBuilder().user("build it")
    for step in range(10):  # 8,000-token outputs: seed's threshold (68,000 of 100k) is crossed
        script.call(context=1_000 + 8_100 * step).result(text_of_tokens(8_000, str(step)))
    path = _write(script.reply(context=82_100).session(window=100_000), tmp_path)
    server = MockLLMProcess("--quiet")
    try:
        result = runner.invoke(
            cli,
            [
                "replay",
                path,
                "-p",
                "seed",
                "--llm",
                server.url,
                "--model",
                "ctxscope-mock",
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        replayed = ReplayResult.model_validate(json.loads(result.stdout))
        summaries = [e.summary for e in replayed.events if e.kind == "compact"]
        assert summaries and all(summaries)
        assert replayed.policy.llm.provider == "openai"
        assert len(server.requests()) >= len(summaries)
        assert not any("failed" in note for note in replayed.notes)
    finally:
        server.close()
