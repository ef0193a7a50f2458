"""``ctxscope fidelity PATH...``: a row per recorded compaction, the total line, --json,
--fail-under, unreadable paths as rows; and the real samples, file by file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.agents.window_evidence import resolve_window
from core.formats import load_session
from core.formats.ctxscope_jsonl import write_session
from core.model.session import Session, SourceFormat
from core.replay import native_policy, replay
from core.reports.fidelity import fidelity_report
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.paths import REPO
from tui.cli.main import cli

SAMPLES = REPO.parent / "shared" / "samples"


def _claude(contexts: list[int], compact_before: int) -> Session:
    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for position, context in enumerate(contexts):
        if position == compact_before:
            builder.compaction(tokens_before=contexts[position - 1] + 500)
            builder.user("carry on")
        builder.call(context=context).result(text_of_tokens(400))
    session = builder.reply(context=contexts[-1] + 500).session(
        fmt=SourceFormat.CLAUDE_CODE, model="claude-sonnet-4-5", agent_version="2.1.39"
    )
    return session


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    (sessions / "deep").mkdir(parents=True)
    write_session(_claude([100_000, 160_000, 168_000, 30_000], 3), sessions / "a.jsonl")
    write_session(_claude([100_000, 150_000, 167_200, 30_000], 3), sessions / "deep" / "b.jsonl")
    (sessions / "notes.txt").write_text("not a session")
    return sessions


def test_one_row_per_compaction_and_the_total_line(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["fidelity", str(folder)], terminal_width=80)
    assert result.exit_code == 0, result.output
    assert "a.jsonl" in result.output and "b.jsonl" in result.output
    assert "automatic compactions reproduced at the same call: 2/2 (100%)" in result.output
    assert "notes.txt" not in result.output  # folders are searched for session files only


def test_json_and_fail_under(folder: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("this is not json\n")
    result = CliRunner().invoke(cli, ["fidelity", str(folder), str(broken), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sessions"] == 2 and (report["automatic"], report["reproduced"]) == (2, 2)
    (error,) = report["errors"]
    assert error["file"] == str(broken)
    entry = report["entries"][0]
    assert entry["agent"] == "ctxscope" or entry["agent"] == "claude-code"
    assert {"window", "window_source", "row"} <= entry.keys()
    assert {"trigger", "trigger_evidence", "check_tokens", "threshold", "threshold_source"} <= (
        entry["row"].keys()
    )
    assert report["groups"]
    strict = CliRunner().invoke(cli, ["fidelity", str(folder), "--fail-under", "100"])
    assert strict.exit_code == 0


def test_fail_under_exits_1_when_a_compaction_is_missed(tmp_path: Path) -> None:
    # A recorded automatic compaction no single threshold explains: a check before it measured
    # more than the one that fired.
    session = _claude([100_000, 190_000, 120_000, 150_000, 30_000], 4)
    write_session(session, tmp_path / "odd.jsonl")
    result = CliRunner().invoke(cli, ["fidelity", str(tmp_path), "--fail-under", "90"])
    assert result.exit_code == 1, result.output
    assert "0/1" in result.output


def test_a_glob_and_nothing_found(folder: Path, tmp_path: Path) -> None:
    report = fidelity_report([str(folder / "**" / "*.jsonl")])
    assert report.sessions == 2
    result = CliRunner().invoke(cli, ["fidelity", str(tmp_path / "nothing-*.jsonl")])
    assert result.exit_code == 2
    assert "matches no session file" in result.stderr


# -- the real sessions (skipped without ../shared/samples) ---------------------------------------

REAL_WITH_COMPACTIONS = sorted(
    [
        *SAMPLES.glob("claude-code/claude-*.jsonl"),
        *SAMPLES.glob("claude-code/258c7280-*.jsonl"),
        *SAMPLES.glob("codex/codex-*.jsonl"),
        *SAMPLES.glob("codex/rollout-2026-02-23T12-54-34-*.jsonl"),
        *SAMPLES.glob("opencode/opencode-*.json"),
        *SAMPLES.glob("pi/before-compaction.jsonl"),
    ]
)


NOT_YET_PREDICTED = {
    # claude-opus-5 (the agent's own count: no compaction up to 204,646, then at 213,002 and at
    # 167,009). The second fits a 200,000 window exactly (200,000 - 20,000 - 13,000 = 167,000):
    # 2.1.226 (bin/claude of @anthropic-ai/claude-code-linux-x64) gives claude-opus-5 a 1M window
    # only with a "[1m]" model id, the context-1m beta or until a 429 asking for 1M usage credits
    # clamps it to 200,000 (longContext1mCreditsBlocked). Sub-agents that inherit the main model
    # record "claude-opus-5[1m]" up to 11:52:01 and "claude-opus-5" from 12:05:24, with a
    # SessionStart:fork at 11:52:03 in between: the main model lost its [1m] somewhere there, and
    # the records do not say where (no request, no window, no error is recorded at the switch).
    "claude-2.1.226_auto-2x_flutter-docker-image_K1.jsonl": "window switch not recorded",
}


def _expected(path: Path) -> object:
    reason = NOT_YET_PREDICTED.get(path.name)
    return (
        pytest.param(path, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else path
    )


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared samples are not available")
@pytest.mark.parametrize(
    "path", [_expected(p) for p in REAL_WITH_COMPACTIONS], ids=lambda p: p.name[:60]
)
def test_the_agents_preset_reproduces_every_automatic_compaction(path: Path) -> None:
    session = load_session(path)  # no --window: every sample gets one
    assert session.context_window is not None, session.window_evidence
    result = replay(session, native_policy(session))
    assert result.fidelity, "the sample has compactions"
    for row in result.fidelity:
        assert row.trigger in ("auto", "manual", "overflow", "hook"), row
        assert row.trigger_evidence, row
        if row.automatic:
            assert row.outcome in ("same", "untestable"), row
        else:
            assert row.outcome == "manual", row


def _big_pickle(version: str) -> Session:
    """opencode on OpenCode Zen's big-pickle: 139,500 without compacting, then 140,200 and an
    automatic compaction before the next call (the window is left for the table to give)."""
    builder = SessionBuilder(model="big-pickle").user("go")
    for position, context in enumerate([100_000, 139_500, 140_200, 30_000]):
        if position == 3:
            builder.compaction(tokens_before=140_200)
            builder.user("carry on")
        builder.call(context=context).result(text_of_tokens(400))
    session = builder.reply(context=30_500).session(
        fmt=SourceFormat.OPENCODE,
        model="big-pickle",
        provider="opencode",
        agent_version=version,
        window=None,
    )
    resolve_window(session)
    return session


@pytest.mark.parametrize(
    ("version", "threshold", "outcome"),
    [
        # the models.dev snapshot shipped in 1.18.10: input limit 160,000 - min(20,000, 32,000)
        ("1.18.10", 140_000, "same"),
        # the snapshot of 1.15.4 lists no input limit: 200,000 - min(128,000, 32,000)
        ("1.15.4", 168_000, "missed"),
    ],
)
def test_opencode_compacts_where_its_shipped_catalogue_says(
    version: str, threshold: int, outcome: str
) -> None:
    session = _big_pickle(version)
    result = replay(session, native_policy(session))
    (row,) = result.fidelity
    assert (row.threshold, row.outcome) == (threshold, outcome), row


# -- --learn: thresholds learned leave-one-out from the other sessions ----------------------------


@pytest.fixture
def configured(tmp_path: Path) -> Path:
    """Three sessions of one agent version and model that all compact near 150,000 (a setting
    below the documented 167,000), and a fourth of another model."""
    sessions = tmp_path / "configured"
    sessions.mkdir()
    for name, contexts in (
        ("a.jsonl", [100_000, 140_000, 150_300, 30_000]),
        ("b.jsonl", [110_000, 145_000, 150_600, 30_000]),
        ("c.jsonl", [120_000, 142_000, 150_900, 30_000]),
    ):
        write_session(_claude(contexts, 3), sessions / name)
    other = _claude([100_000, 140_000, 150_300, 30_000], 3)
    other.model = "claude-opus-4-6"
    write_session(other, sessions / "other-model.jsonl")
    return sessions


def test_learn_scores_each_session_on_a_threshold_the_others_taught(configured: Path) -> None:
    plain = fidelity_report([str(configured)])
    assert plain.reproduced == 0 and plain.automatic == 4  # the rule alone misses all four
    report = fidelity_report([str(configured)], learn=True)
    assert (report.reproduced, report.automatic) == (0, 4)  # the prediction is unchanged
    assert (report.learned_reproduced, report.learned_automatic) == (3, 3)
    by_file = {Path(entry.file).name: entry for entry in report.entries}
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        learned = by_file[name].learned
        assert learned is not None and learned.outcome == "same"
        taught = {Path(f).name for f in learned.learned_from}
        assert taught == {"a.jsonl", "b.jsonl", "c.jsonl"} - {name}  # never the one scored
    assert by_file["other-model.jsonl"].learned is None  # no other session of its model
    assert "(leave-one-out): 3/3 (1 with no other session to learn from)" in report.total_line()


def test_learn_on_the_command_line_names_the_sessions_it_learned_from(configured: Path) -> None:
    result = CliRunner().invoke(cli, ["fidelity", str(configured), "--learn"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "from b.jsonl, c.jsonl: same" in result.output  # a.jsonl, taught by the other two
    assert "predicted by each agent's rule" in " ".join(result.output.split())
