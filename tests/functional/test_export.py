"""``ctxscope export``: Parquet files DuckDB reads, with the figures of the sessions, and the
README's example queries run as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from core.fleet.export import SCHEMA_VERSION, TABLES, ExportError, arrow_schema, export
from tests.support.fleet_sessions import Built, write_fleet
from tests.support.paths import REPO
from tools.export_readme import README, updated
from tui.cli.main import cli

ROOT = REPO
SHARED_SAMPLES = ROOT.parent / "shared" / "samples"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, dict[str, Built]]:
    built = write_fleet(tmp_path / "sessions")
    export([str(tmp_path / "sessions")], tmp_path / "export", jobs=1)
    return tmp_path / "export", built


def test_duckdb_reads_the_figures_of_every_table(exported: tuple[Path, dict[str, Built]]) -> None:
    folder, built = exported
    sessions = sql(
        f"SELECT regexp_extract(path, '([a-z]+)\\.jsonl$', 1) AS name, peak_tokens, window_tokens, "
        f"round(peak_share, 3), compactions_auto, compactions_manual, last_message_at "
        f"FROM '{folder}/sessions.parquet' WHERE error IS NULL ORDER BY name"
    )
    assert [(name, peak, share) for name, peak, _w, share, *_ in sessions] == [
        ("calm", 150_000, 0.75),
        ("compacted", 170_000, 0.85),
        ("near", 190_000, 0.95),
        ("old", 195_000, 0.975),
    ]
    assert {name: row[-1] for name, *row in sessions} == {
        name: b.last_message_at for name, b in built.items()
    }
    errors = sql(f"SELECT error FROM '{folder}/sessions.parquet' WHERE error IS NOT NULL")
    assert "not a session" in errors[0][0]
    calls = sql(
        f"SELECT count(*), max(recorded_tokens), count(*) FILTER (WHERE checked) "
        f"FROM '{folder}/calls.parquet' c JOIN '{folder}/sessions.parquet' s USING (path)"
    )[0]
    assert calls is not None and calls[0] == sum(b.calls for b in built.values())
    assert calls[1] == 195_000 and calls[2] > 0
    compactions = sql(
        f"SELECT trigger, tokens_before, outcome FROM '{folder}/compactions.parquet' "
        "ORDER BY recorded_index"
    )
    assert compactions == [("auto", 170_000, "same"), ("manual", 30_000, "manual")]


def test_every_column_says_what_it_means(exported: tuple[Path, dict[str, Built]]) -> None:
    folder, _ = exported
    for table, model in TABLES.items():
        schema = pq.read_schema(folder / f"{table}.parquet")
        assert schema.names == list(model.model_fields)
        assert schema.metadata[b"ctxscope.table"] == table.encode()
        assert schema.metadata[b"ctxscope.schema_version"] == str(SCHEMA_VERSION).encode()
        for field in schema:
            assert field.metadata and field.metadata[b"description"], (table, field.name)
        assert schema.remove_metadata() == arrow_schema(model, table).remove_metadata()


def test_the_readme_queries_run_as_written(
    exported: tuple[Path, dict[str, Built]], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = exported
    monkeypatch.chdir(folder.parent)  # the README exports to ./export
    queries = readme_queries()
    assert len(queries) >= 3
    results = [sql(query) for query in queries]
    over_90_last_week = results[0]
    assert [Path(row[0]).stem for row in over_90_last_week] == ["near"]  # "old" is a month old
    per_version = {row[0]: row for row in results[1]}
    assert set(per_version) == {"2.0.76", "2.1.39"}


def test_the_readme_schema_is_up_to_date() -> None:
    document = README.read_text(encoding="utf-8")
    assert updated(document) == document, "run python -m tools.export_readme"


def sql(query: str) -> list[tuple[Any, ...]]:
    """The rows DuckDB gives for ``query`` (in memory, files read where the query names them)."""
    with duckdb.connect() as connection:
        return connection.execute(query).fetchall()


def readme_queries() -> list[str]:
    """The SQL blocks of the README's export section."""
    document = README.read_text(encoding="utf-8")
    return re.findall(r"```sql\n(.*?)```", document, flags=re.DOTALL)


def test_existing_tables_are_not_overwritten_without_force(tmp_path: Path) -> None:
    write_fleet(tmp_path / "sessions")
    target = tmp_path / "export"
    target.mkdir()
    (target / "calls.parquet").write_bytes(b"precious")
    with pytest.raises(ExportError, match=r"calls\.parquet exists"):
        export([str(tmp_path / "sessions")], target, jobs=1)
    assert (target / "calls.parquet").read_bytes() == b"precious"
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "sessions"), "--to", str(target)])
    assert result.exit_code == 2 and "--force" in result.output
    forced = CliRunner().invoke(
        cli, ["export", str(tmp_path / "sessions"), "--to", str(target), "--force", "-j", "2"]
    )
    assert forced.exit_code == 0, forced.output
    assert "wrote 5 sessions (1 could not be read), 12 calls and 2 compactions" in forced.output
    assert sorted(p.name for p in target.iterdir()) == [
        "calls.parquet",
        "compactions.parquet",
        "sessions.parquet",
    ]


def test_nothing_to_export_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "none"), "--to", str(tmp_path)])
    assert result.exit_code == 2 and "no such file or directory" in result.output


def test_the_sample_sessions_and_the_shared_samples(tmp_path: Path) -> None:
    sources = [str(ROOT / "sample_sessions")]
    if SHARED_SAMPLES.is_dir():
        sources.append(str(SHARED_SAMPLES))
    summary = export(sources, tmp_path / "export", jobs=2)
    assert summary.errors == 0
    folder = tmp_path / "export"
    agents = dict(sql(f"SELECT agent, count(*) FROM '{folder}/sessions.parquet' GROUP BY agent"))
    assert {"claude-code", "codex", "pi", "opencode", "ctxscope"} <= set(agents)
    overflow = sql(
        f"SELECT s.overflows_recorded, count(*) FILTER (WHERE c.overflow_recorded) "
        f"FROM '{folder}/sessions.parquet' s JOIN '{folder}/calls.parquet' c USING (path) "
        "WHERE s.path LIKE '%claude-code/overflow.jsonl' GROUP BY ALL"
    )
    assert overflow == [(2, 2)]
    counted = sql(f"SELECT count(*) FROM '{folder}/compactions.parquet'")[0]
    assert counted is not None and counted[0] == summary.compactions > 0
    if SHARED_SAMPLES.is_dir():
        pi = sql(
            f"SELECT trigger, tokens_before, outcome FROM '{folder}/compactions.parquet' "
            "WHERE path LIKE '%before-compaction.jsonl' ORDER BY recorded_index"
        )
        assert pi == [("manual", 175_004, "manual"), ("auto", 185_014, "same")]
