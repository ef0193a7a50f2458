"""``ctxscope fleet``: a row per session, fullest first, in parallel, cached by path, size and
mtime; and the functions the session picker calls."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.analysis_cache import AnalysisCache, fingerprint
from core.fleet.session_rows import FleetRow
from core.fleet.survey import (
    CACHE_KIND,
    analyse,
    cached_rows,
    fleet,
    fleet_rows,
    session_row,
)
from core.formats.ctxscope_jsonl import write_session
from core.model.session import SourceFormat
from tests.support.builders import SessionBuilder
from tests.support.fleet_sessions import WINDOW, Built, write_fleet
from tests.support.paths import REPO
from tui.cli.main import cli
from tui.figures import row_cost

SAMPLES = REPO / "sample_sessions"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test caches into its own folder, never the user's."""
    folder = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "ctxscope"


@pytest.fixture
def sessions(tmp_path: Path) -> tuple[Path, dict[str, Built]]:
    folder = tmp_path / "sessions"
    return folder, write_fleet(folder)


def test_a_rows_turns_are_the_turns_analyze_states(tmp_path: Path) -> None:
    """One count of turns: the fleet's row and ``analyze``'s session facts read the same
    function, so a sub-agent's, a synthetic and a meta user message count in neither."""
    from core.formats import load_session
    from core.replay import Replayer, native_policy
    from core.reports.analyze import session_info

    session = (
        SessionBuilder(model="claude-sonnet-4-5")
        .user("first")
        .reply(context=1_000)
        .user("side", sidechain=True)
        .user("note", synthetic=True)
        .user("meta", meta=True)
        .user("second")
        .reply(context=2_000)
        .session()
    )
    path = tmp_path / "turns.jsonl"
    write_session(session, path)
    row = analyse(str(path)).row
    loaded = load_session(path)
    info = session_info(loaded, Replayer(loaded).run(native_policy(loaded)))
    assert row.turns == info.turns == 2


def test_a_row_holds_the_sessions_figures(sessions: tuple[Path, dict[str, Built]]) -> None:
    folder, built = sessions
    row = analyse(str(folder / "compacted.jsonl")).row
    assert row.error is None
    assert (row.agent, row.version, row.model) == (
        "claude-code",
        "2.1.39",
        "claude-sonnet-4-5-20250929",
    )
    assert row.window_tokens == WINDOW and row.window_source == "recorded"
    assert row.calls == 4 and row.turns == 4
    assert row.peak_tokens == 170_000 and row.peak_share == pytest.approx(0.85)
    assert row.peak_provenance == "recorded" and row.peak_call_index == 1
    assert (row.compactions, row.compactions_auto, row.compactions_manual) == (2, 1, 1)
    assert row.fidelity_manual == 1 and (row.automatic, row.reproduced) == (1, 1)
    # the automatic compaction bounds the threshold: the call's prompt, its reply and what came
    # after, as Claude Code's check measures them
    assert row.threshold_high is not None and 170_000 < row.threshold_high < 170_100
    assert row.last_message_at == built["compacted"].last_message_at
    # 370,000 uncached prompt tokens at $3/M and 40 output tokens at $15/M (Claude Sonnet 4.5)
    assert row.cost_usd == pytest.approx(1.1106, abs=0.0001)
    assert row.cost_unpriced_calls == 0 and row.compactions_usd is not None
    assert not row.overflowed


def test_an_overflowing_session_counts_its_overflows() -> None:
    row = analyse(str(SAMPLES / "claude-code" / "overflow.jsonl")).row
    assert row.overflowed and row.overflows_recorded == 2 and row.first_overflow_call == 84
    assert row.peak_share is not None and row.peak_share > 1


def test_a_file_that_is_no_session_is_a_row_with_its_error(
    sessions: tuple[Path, dict[str, Built]],
) -> None:
    folder, _ = sessions
    row = analyse(str(folder / "broken.jsonl")).row
    assert row.error is not None and "not a session" in row.error
    assert row.agent is None and row.peak_share is None


def test_the_fleet_is_sorted_fullest_first_with_errors_last(
    sessions: tuple[Path, dict[str, Built]],
) -> None:
    folder, _ = sessions
    report = fleet([str(folder), str(folder / "missing.jsonl")], jobs=1)
    names = [Path(row.path).stem for row in report.rows]
    assert names == ["old", "near", "compacted", "calm", "broken"]
    assert report.problems == [f"{folder / 'missing.jsonl'}: no such file or directory"]
    assert report.analysed == 5 and report.cached == 0


def test_parallel_processes_give_the_same_rows(sessions: tuple[Path, dict[str, Built]]) -> None:
    folder, _ = sessions
    one = fleet([str(folder)], jobs=1, use_cache=False)
    two = fleet([str(folder)], jobs=2, use_cache=False)
    strip = {"analysis_seconds"}
    assert [r.model_dump(exclude=strip) for r in one.rows] == [
        r.model_dump(exclude=strip) for r in two.rows
    ]


def test_a_second_run_reads_the_cache_and_a_changed_file_is_analysed_again(
    sessions: tuple[Path, dict[str, Built]], private_cache: Path
) -> None:
    folder, _ = sessions
    first = fleet([str(folder)], jobs=1)
    again = fleet([str(folder)], jobs=1)
    assert (again.analysed, again.cached) == (1, 4)  # the broken file's error is never cached
    assert [r.model_dump() for r in again.rows] == [r.model_dump() for r in first.rows]
    changed = folder / "calm.jsonl"
    info = changed.stat()
    os.utime(changed, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    third = fleet([str(folder)], jobs=1)
    assert (third.analysed, third.cached) == (2, 3)  # the changed file and the broken one
    assert stat.S_IMODE(private_cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((private_cache / "analyses.sqlite").stat().st_mode) == 0o600


def test_no_cache_reads_and_stores_nothing(
    sessions: tuple[Path, dict[str, Built]], private_cache: Path
) -> None:
    folder, _ = sessions
    report = fleet([str(folder)], jobs=1, use_cache=False)
    assert report.analysed == 5
    assert not private_cache.exists()


def test_a_damaged_cache_is_replaced_and_an_unusable_one_ignored(
    sessions: tuple[Path, dict[str, Built]], private_cache: Path, tmp_path: Path
) -> None:
    folder, _ = sessions
    private_cache.mkdir(parents=True)
    (private_cache / "analyses.sqlite").write_bytes(b"not a database" * 100)
    fleet([str(folder)], jobs=1)
    assert fleet([str(folder)], jobs=1).cached == 4  # all but the broken file
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    cache = AnalysisCache(blocked / "ctxscope", version="test")
    rows = list(fleet_rows([str(folder / "near.jsonl")], jobs=1, cache=cache))
    assert rows[0][0].peak_tokens == 190_000 and not rows[0][1]


def test_another_version_of_the_analysis_is_not_read(
    sessions: tuple[Path, dict[str, Built]], tmp_path: Path
) -> None:
    folder, _ = sessions
    path = str(folder / "near.jsonl")
    old = AnalysisCache(tmp_path / "c", version="old")
    old.put(
        CACHE_KIND,
        path,
        fingerprint(path),
        FleetRow(path=path, calls=99).model_dump_json().encode(),
    )
    assert cached_rows([path], old)[path].calls == 99
    assert cached_rows([path], AnalysisCache(tmp_path / "c", version="new")) == {}


def test_what_the_picker_calls(sessions: tuple[Path, dict[str, Built]]) -> None:
    folder, built = sessions
    path = str(folder / "near.jsonl")
    assert cached_rows([path]) == {}  # nothing analysed yet: nothing to show
    row = session_row(path)  # analysed now, and cached
    assert row.peak_share == pytest.approx(0.95) and row.compactions == 0
    assert row.last_message_at == built["near"].last_message_at
    assert cached_rows([path])[path] == row
    assert session_row(path) == row


def test_a_storage_folder_changes_its_fingerprint_when_a_message_is_added(
    tmp_path: Path,
) -> None:
    import shutil

    storage = tmp_path / "storage"
    shutil.copytree(SAMPLES / "opencode" / "storage", storage)
    before = fingerprint(str(storage))
    session_file = next((storage / "session").rglob("*.json"))
    assert fingerprint(str(session_file)) == before
    part_folder = next(p for p in (storage / "part").iterdir() if p.is_dir())
    (part_folder / "prt_new.json").write_text("{}")
    assert fingerprint(str(storage)) != before


def test_the_command_prints_the_table_and_json(sessions: tuple[Path, dict[str, Built]]) -> None:
    folder, _ = sessions
    wide = {"COLUMNS": "250"}  # every column (80 when piped without COLUMNS)
    result = CliRunner().invoke(cli, ["fleet", str(folder), "--jobs", "1"], env=wide)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    order = [
        name
        for line in lines
        for name in ("old", "near", "compacted", "calm")
        if f"{name}.jsonl" in line
    ]
    assert order == ["old", "near", "compacted", "calm"]
    assert "98%" in result.output and "1 auto, 1 manual" in result.output
    assert "$1.11" in result.output  # compacted.jsonl's cost
    assert "broken.jsonl: " in result.output
    assert "5 sessions (0 from the cache, 5 analysed)" in result.output
    as_json = CliRunner().invoke(cli, ["fleet", str(folder), "--json"])
    document = json.loads(as_json.output)
    assert document["schema_version"] == 1 and document["cached"] == 4  # errors: not cached
    assert [Path(r["path"]).stem for r in document["rows"]][:2] == ["old", "near"]


def test_the_command_fails_when_nothing_is_a_session(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["fleet", str(tmp_path / "nothing")])
    assert result.exit_code == 2
    assert "no such file or directory" in result.output


def test_without_paths_it_analyses_the_sessions_found_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    write_fleet(project)
    monkeypatch.setenv("HOME", str(home))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / "pi"))
    report = fleet([], jobs=1)
    assert {Path(r.path).stem for r in report.rows} == {
        "old",
        "near",
        "compacted",
        "calm",
        "broken",
    }


def test_progress_counts_every_session_cached_or_not(
    sessions: tuple[Path, dict[str, Built]],
) -> None:
    folder, _ = sessions
    paths = [str(p) for p in sorted(folder.iterdir())]
    fleet([next(p for p in paths if "broken" not in p)], jobs=1)  # one cached, the others not
    seen: list[tuple[int, int]] = []
    report = fleet(paths, jobs=2, progress=lambda done, total, _path: seen.append((done, total)))
    assert (report.cached, report.analysed) == (1, 4)
    assert seen == [(n, 5) for n in range(1, 6)]


def test_a_model_without_a_price_is_an_unknown_cost(tmp_path: Path) -> None:
    builder = SessionBuilder(model="a-model-nobody-prices").user("hello").reply(context=1_000)
    path = tmp_path / "unpriced.jsonl"
    write_session(
        builder.session(fmt=SourceFormat.CLAUDE_CODE, model="a-model-nobody-prices"), path
    )
    row = analyse(str(path)).row
    assert row.error is None and row.cost_usd is None and row.cost_unpriced_calls == 1
    result = CliRunner().invoke(cli, ["fleet", str(path), "--no-cache"])
    assert (
        row_cost(row) == "?"
    )  # core.insights.cost.usd_label: the picker and the status bar say so too
    assert " ? " in result.output


def test_near_overflow_is_the_diagnosis_margin_or_an_overflow(
    sessions: tuple[Path, dict[str, Built]],
) -> None:
    folder, _ = sessions
    rows = {Path(r.path).stem: r for r in fleet([str(folder)], jobs=1).rows}
    # peaks of 95%, 97.5%, 85% and 75% of the window: within 5% of it, the first two
    assert {name for name, row in rows.items() if row.near_overflow()} == {"near", "old"}
    assert rows["calm"].near_overflow(margin=0.25) and not rows["broken"].near_overflow()
    assert analyse(str(SAMPLES / "claude-code" / "overflow.jsonl")).row.near_overflow(0.0)


def test_a_stopped_run_keeps_what_it_analysed(
    sessions: tuple[Path, dict[str, Built]], private_cache: Path
) -> None:
    folder, _ = sessions
    paths = [str(p) for p in sorted(folder.iterdir())]
    cache = AnalysisCache(private_cache, version="test")
    done: list[str] = []
    for row, _ in fleet_rows(paths, jobs=1, cache=cache, stop=lambda: len(done) >= 2):
        done.append(row.path)
    assert len(done) == 2
    assert set(cached_rows(paths, cache)) == set(done)  # the next run starts from them


@pytest.mark.parametrize(
    "sample", ["claude-code/compacted.jsonl", "claude-code/overflow.jsonl", "pi/branched.jsonl"]
)
def test_a_row_reads_the_replays_columns_not_its_points(sample: str) -> None:
    """A session's row is made from the replay's columns: no point object is built (one per
    call, most of the row's cost on a long session), and the columns the row and its peak read
    are the figures the points give."""
    from core.fleet.session_rows import session_figures
    from core.formats import load_session
    from core.replay import Replayer, native_policy

    path = str(SAMPLES / sample)
    session = load_session(path)
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    row = session_figures(path, session, result, replayer.inferred_threshold())
    built = result._lazy_points._trace.points  # type: ignore[union-attr]  # the points so far
    assert built == []
    points = result.points
    assert row.calls == len(points) > 0
    for name in ("baseline_provenance", "recorded_kind", "window", "overflow_recorded"):
        assert list(result.point_column(name)) == [getattr(p, name) for p in points], name
