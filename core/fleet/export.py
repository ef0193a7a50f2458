"""``ctxscope export PATH... --to DIR``: many sessions as Parquet files for DuckDB, Polars, Spark.

Three tables, one file each, written into ``DIR``:

``sessions.parquet``
    one row per session: :class:`core.fleet.session_rows.FleetRow` (the figures ``ctxscope fleet`` shows);
``calls.parquet``
    one row per model call: :class:`core.fleet.session_rows.CallRow` (the gauge's figures, recorded and
    simulated, and the check log: the figure the agent's threshold check saw, how it was made,
    the threshold and where it comes from);
``compactions.parquet``
    one row per recorded compaction: :class:`core.fleet.session_rows.CompactionRow` (trigger and its
    evidence, tokens before and after, how the agent's preset matched it).

``path`` joins them. The column types come from the models (``int`` → int64, ``float`` →
double, ``bool`` → boolean, ``str`` → string, ``datetime`` → timestamp in microseconds, UTC;
every optional field is nullable), and each column carries its description as field metadata
(``description``), so ``DESCRIBE`` in DuckDB or ``pyarrow.parquet.read_schema`` tells what a
column means. The file's metadata holds ``ctxscope.table`` and ``ctxscope.schema_version``.

Columns to come: the context breakdown per category will be added to ``calls`` as
``breakdown_<category>_tokens``, and the messages a compaction dropped to ``compactions`` as
``forgotten_*`` counts, both nullable; a new column is no incompatible change (queries name
their columns), a changed one bumps :data:`SCHEMA_VERSION`.

The sessions are analysed in parallel processes, as ``ctxscope fleet`` does, and streamed to
the files as they finish; the files appear only when complete (written beside and renamed).
Existing files are not overwritten unless ``overwrite`` is set.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from core.analysis_cache import fingerprint
from core.fleet.session_pool import default_jobs, map_sessions
from core.fleet.session_rows import CallRow, CompactionRow, FleetRow
from core.fleet.survey import ProgressFn, analyse, session_paths
from core.model.fastmodel import documented
from core.model.json_text import printable
from core.output_file import (
    OutputRefused,
    destination,
    discard,
    publish,
    removed_on_signals,
    temporary_beside,
)

SCHEMA_VERSION = 2
"""Version of the export's tables (bumped on any incompatible change of a column)."""

TABLES: dict[str, type[BaseModel]] = {
    "sessions": FleetRow,
    "calls": CallRow,
    "compactions": CompactionRow,
}
"""Each table's file name (without ``.parquet``) and the model its rows are."""

_ARROW_TYPES: dict[type, pa.DataType] = {
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    str: pa.string(),
    datetime: pa.timestamp("us", tz="UTC"),
}


class ExportError(Exception):
    """The export cannot be written (one sentence saying why)."""


class ExportSummary(NamedTuple):
    """What an export wrote."""

    files: list[Path]
    """The Parquet files, sessions first."""
    sessions: int
    """Rows of the sessions table."""
    calls: int
    """Rows of the calls table."""
    compactions: int
    """Rows of the compactions table."""
    errors: int
    """Sessions that could not be read (rows with their ``error``)."""
    problems: list[str]
    """Arguments that named no session."""


def arrow_schema(model: type[BaseModel], table: str) -> pa.Schema:
    """The Arrow schema of a table: a column per field of ``model``, with its description."""
    fields = []
    for name, info in documented(model).items():
        arrow_type, nullable = _arrow_type(info.annotation)
        metadata = {"description": info.description or ""}
        fields.append(pa.field(name, arrow_type, nullable=nullable, metadata=metadata))
    metadata = {"ctxscope.table": table, "ctxscope.schema_version": str(SCHEMA_VERSION)}
    return pa.schema(fields, metadata=metadata)


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """The Arrow type of a field's annotation, and whether it may be null."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _arrow_type(members[0])[0], True
    arrow_type = _ARROW_TYPES.get(annotation)
    if arrow_type is None:
        raise TypeError(f"no Parquet column type for {annotation!r}")
    return arrow_type, False


def to_table(rows: Sequence[BaseModel], model: type[BaseModel], table: str) -> pa.Table:
    """``rows`` as an Arrow table of the export's schema."""
    schema = arrow_schema(model, table)
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    for row in rows:
        for name, column in columns.items():
            value = getattr(row, name)
            column.append(printable(value) if isinstance(value, str) else value)
    return pa.Table.from_pydict(columns, schema=schema)


class _Piece(NamedTuple):
    """One session's rows, as a worker sends them back."""

    row: FleetRow
    calls: pa.Table
    compactions: pa.Table


def _export_worker(path: str) -> _Piece:
    """Analyse one session with its calls and compactions (runs in a pool process)."""
    analysis = analyse(path, detail=True)
    return _Piece(
        analysis.row,
        to_table(analysis.calls, CallRow, "calls"),
        to_table(analysis.compactions, CompactionRow, "compactions"),
    )


def _crashed(path: str, message: str) -> _Piece:
    return _Piece(
        FleetRow(path=path, error=message),
        to_table([], CallRow, "calls"),
        to_table([], CompactionRow, "compactions"),
    )


def export(
    arguments: Sequence[str],
    to: Path,
    *,
    jobs: int | None = None,
    overwrite: bool = False,
    progress: ProgressFn | None = None,
) -> ExportSummary:
    """Analyse every session ``arguments`` name and write the three tables into ``to``.

    Raises :class:`ExportError` when no argument names a session, the folder cannot be made, or
    a table exists and ``overwrite`` is not set.
    """
    paths, problems = session_paths(arguments)
    if not paths:
        raise ExportError("; ".join(problems) or "no session found on this machine")
    targets = _targets(to, overwrite)
    sizes = {p: f.size for p in paths if (f := fingerprint(p)) is not None}
    rows: list[FleetRow] = []
    counts = {"calls": 0, "compactions": 0}
    with removed_on_signals(), _Writers(targets) as writers:
        for done, (path, piece) in enumerate(
            map_sessions(
                paths,
                _export_worker,
                jobs=jobs or default_jobs(),
                on_crash=_crashed,
                sizes=sizes,
            ),
            start=1,
        ):
            piece.row.size_bytes = sizes.get(path)
            rows.append(piece.row)
            writers.write("calls", piece.calls)
            writers.write("compactions", piece.compactions)
            counts["calls"] += piece.calls.num_rows
            counts["compactions"] += piece.compactions.num_rows
            if progress is not None:
                progress(done, len(paths), path)
        writers.write("sessions", to_table(rows, FleetRow, "sessions"))
        writers.commit()
    return ExportSummary(
        files=[targets[name] for name in TABLES],
        sessions=len(rows),
        calls=counts["calls"],
        compactions=counts["compactions"],
        errors=sum(1 for row in rows if row.error is not None),
        problems=problems,
    )


def _targets(to: Path, overwrite: bool) -> dict[str, Path]:
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{to}: cannot create the folder ({exc.strerror or exc})") from None
    try:
        return {name: destination(to / f"{name}.parquet", overwrite) for name in TABLES}
    except OutputRefused as exc:
        raise ExportError(str(exc)) from None


class _Writers:
    """A Parquet writer per table, each into a temporary file beside its target; ``commit``
    renames them into place, leaving the folder untouched should the export fail."""

    def __init__(self, targets: dict[str, Path]) -> None:
        self.targets = targets
        self.temps: dict[str, Path] = {}
        self.writers: dict[str, pq.ParquetWriter] = {}

    def __enter__(self) -> _Writers:
        return self

    def write(self, table: str, data: pa.Table) -> None:
        writer = self.writers.get(table)
        if writer is None:
            try:
                temporary = temporary_beside(self.targets[table])
            except OSError as exc:
                folder = self.targets[table].parent
                raise ExportError(f"{folder}: cannot write ({exc.strerror or exc})") from None
            self.temps[table] = temporary
            writer = self.writers[table] = pq.ParquetWriter(str(temporary), data.schema)
        if data.num_rows:
            writer.write_table(data)

    def commit(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()
        for table, temp in list(self.temps.items()):
            try:
                publish(temp, self.targets[table])
            except OSError as exc:
                target = self.targets[table]
                raise ExportError(f"{target}: cannot write ({exc.strerror or exc})") from None
            del self.temps[table]

    def __exit__(self, *exc: object) -> None:
        for writer in self.writers.values():
            writer.close()
        for temp in self.temps.values():
            discard(temp)
