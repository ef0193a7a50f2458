"""Many sessions at once: one row of figures per session (``ctxscope fleet``, the picker).

:func:`analyse` loads one session, replays it under the preset of the agent that recorded it
(as its version behaves, its threshold by the agent's rule, as ``ctxscope fidelity`` does) and sums it up in a :class:`~core.fleet.session_rows.FleetRow`: agent, version, provider, model, window
and where it comes from, calls, peak context and its share of the window, recorded compactions by
trigger, overflows, how the preset reproduced the compactions, the threshold interval the
session's own compactions give, and the cost (unknown until the session's cost is computed).
With ``detail`` it also gives a row per model call and per recorded compaction (the Parquet
export's tables, :mod:`core.fleet.export`).

:func:`fleet` does it for every session some paths name (files, folders, globs; by default the
sessions discovery finds on this machine) in parallel processes (:mod:`core.fleet.session_pool`), and
keeps every row in the analysis cache (:mod:`core.analysis_cache`) under the file's path, size
and modification time, so that a second run over unchanged files only reads the cache.

For the session picker: :func:`cached_rows` (the rows the cache already holds, instantly),
:func:`session_row` (one session's row: from the cache, else analysed now and cached) and
:func:`fleet_rows` (many, in parallel, as they finish).

A session that cannot be loaded or analysed is a row with its ``error``; the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError

from core.analysis_cache import AnalysisCache, Fingerprint, fingerprint
from core.fleet.session_rows import (
    ROW_VERSION,
    CallRow,
    CompactionRow,
    FleetRow,
    call_rows,
    compaction_rows,
    session_figures,
)
from core.fleet.subagent_info import SubagentInfo
from core.formats import LoadError, load_session
from core.formats.session_paths import expand_paths
from core.formats.subagents import calls_during, child_paths, compaction_run_of, is_compaction_run
from core.gc_pause import gc_paused
from core.insights.cost import SessionCost, session_cost
from core.model.json_text import model_json
from core.model.session import Role, Session
from core.replay import Replayer, native_policy
from core.replay.results import SCHEMA_VERSION, Documented, InferredThreshold, ReplayResult

if TYPE_CHECKING:  # (the process pool and discovery: a fleet run's, not a sub-agent's figures)
    from core.fleet.session_pool import StopFn

CACHE_KIND = "fleet-row"
"""The kind of analysis fleet rows are cached as."""

ProgressFn = Callable[[int, int, str], None]
"""Called as sessions finish, with ``(done, total, path)``."""


class SessionAnalysis(BaseModel):
    """What :func:`analyse` gives: the row, and with ``detail`` the calls and compactions."""

    row: FleetRow
    calls: list[CallRow] = Field(default_factory=list)
    compactions: list[CompactionRow] = Field(default_factory=list)


class FleetReport(Documented):
    """``ctxscope fleet --json``."""

    schema_version: int = SCHEMA_VERSION
    """Version of this JSON layout."""
    rows: list[FleetRow]
    """One per session, fullest first (by ``peak_share``, then ``peak_tokens``); sessions that
    could not be read last."""
    problems: list[str] = Field(default_factory=list)
    """Arguments that named no session."""
    analysed: int = 0
    """Sessions analysed in this run."""
    cached: int = 0
    """Sessions whose row came from the cache."""
    seconds: float = 0.0
    """Wall time of the run."""


# -- one session ----------------------------------------------------------------------------


def analyse(path: str, *, detail: bool = False) -> SessionAnalysis:
    """Load and replay one session (see the module docstring); never raises for a bad one."""
    started = time.perf_counter()
    try:
        session = load_session(path)
    except (LoadError, OSError) as exc:
        return SessionAnalysis(row=FleetRow(path=path, error=_sentence(exc)))
    except Exception as exc:  # a loader's bug must not end a run over hundreds of sessions
        return SessionAnalysis(row=FleetRow(path=path, error=_bug("load", exc)))
    try:
        result, inferred = native_replay(session)
    except Exception as exc:
        return SessionAnalysis(row=FleetRow(path=path, error=_bug("replay", exc)))
    cost = row_cost(session)
    row = session_figures(path, session, result, inferred, cost)
    row.analysis_seconds = round(time.perf_counter() - started, 4)
    if not detail:
        return SessionAnalysis(row=row)
    return SessionAnalysis(
        row=row,
        calls=call_rows(path, session, result),
        compactions=compaction_rows(path, session, result, cost),
    )


def native_replay(session: Session) -> tuple[ReplayResult, InferredThreshold]:
    """``session`` replayed under its agent's preset, and the threshold interval its own
    compactions give (a fleet row's replay; ``bench/fleet.py`` times it as a step)."""
    replayer = Replayer(session)
    return replayer.run(native_policy(session)), replayer.inferred_threshold()


def row_cost(session: Session) -> SessionCost | None:
    """The session's cost; None should pricing fail (the row's other figures still stand)."""
    try:
        return session_cost(session, each_call=False)
    except Exception:  # a price table that cannot be read is no reason to lose the row
        return None


def subagent_summaries(session: Session) -> list[SubagentInfo]:
    """The sub-agents ``session`` started (:func:`core.formats.subagents.child_paths`), each loaded and
    replayed on its own: its figures are the ones ``ctxscope fleet`` shows for it."""
    infos: list[SubagentInfo] = []
    for path in child_paths(session):
        row = analyse(path).row
        started = row.started_at.isoformat() if row.started_at else None
        ended = row.last_message_at.isoformat() if row.last_message_at else None
        run_of = compaction_run_of(session, ended) if is_compaction_run(row.session_id) else None
        # A compaction's run ran at its compaction (its first lines are the parent's history).
        span = calls_during(session, ended if run_of is not None else started, ended)
        infos.append(
            SubagentInfo(
                id=row.session_id,
                path=path,
                agent=row.agent,
                model=row.model,
                calls=row.calls,
                peak_tokens=row.peak_tokens,
                compactions=row.compactions,
                started_at=started,
                ended_at=ended,
                parent_calls=list(span) if span is not None else None,
                compaction_of=run_of,
                error=row.error,
            )
        )
        if run_of is not None:
            infos[-1].compaction_prompt, infos[-1].compaction_answer = _given_and_answered(path)
    return infos


def _given_and_answered(path: str) -> tuple[str | None, str | None]:
    """A compaction run's last instruction and its answer (None when it cannot be read)."""
    try:
        run = load_session(path)
    except (LoadError, OSError):
        return None, None
    prompt = next((m.text for m in reversed(run.messages) if m.role is Role.USER and m.text), None)
    answer = next((m.text for m in reversed(run.model_calls()) if m.text), None)
    return prompt, answer


def analyse_row(path: str) -> FleetRow:
    """:func:`analyse` without the detail (the fleet's worker), with the cyclic garbage
    collector paused throughout and nothing frozen. No reference cycle runs through a session,
    its replay or its results (``tests/unit/test_replay_freed.py``): once the row is made,
    reference counting frees them all, and the collector's next young collection finds only the
    row's own few objects instead of walking the whole session (frozen, as a single load freezes
    what it built, anything a cycle kept would stay in memory to the end of the run)."""
    with gc_paused(freeze=False):
        return analyse(path).row


def _sentence(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


BUG_NOTE = "(a bug in ctxscope)"
"""Ends the error of a row whose analysis raised: ctxscope's fault, not the file's."""
CRASH_PREFIXES = ("the analysis process died", "the analysis failed")
"""Start the error of a row whose analysis process died or failed (see :mod:`session_pool`)."""


def _bug(stage: str, exc: BaseException) -> str:
    return f"cannot {stage} it: {type(exc).__name__}: {_sentence(exc)} {BUG_NOTE}"


def crashed(row: FleetRow) -> bool:
    """Whether ``row`` records a crash of ctxscope (not a file it could not read)."""
    error = row.error
    return error is not None and (error.endswith(BUG_NOTE) or error.startswith(CRASH_PREFIXES))


# -- many sessions ----------------------------------------------------------------------------


@cache
def analysis_version() -> str:
    """What the cache keys rows by besides the file: :data:`ROW_VERSION` and ctxscope's version."""
    # (importlib.metadata here: ``analyze`` of a session with sub-agents needs none of it)
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        installed = package_version("ctxscope")
    except PackageNotFoundError:
        installed = "unknown"
    return f"{ROW_VERSION}:{installed}"


def default_cache() -> AnalysisCache:
    """The cache in the user's cache folder (``$XDG_CACHE_HOME/ctxscope``)."""
    return AnalysisCache(version=analysis_version())


def session_paths(arguments: Sequence[str]) -> tuple[list[str], list[str]]:
    """The sessions ``arguments`` name (files, folders, globs), or, with none, every session
    discovery finds on this machine; and one message per argument that names none."""
    if not arguments:
        from core.formats.discovery import discover_sessions

        return [found.path for found in discover_sessions(describe=False)], []
    files, problems = expand_paths(arguments)
    return [str(p) for p in files], problems


def cached_rows(paths: Sequence[str], cache: AnalysisCache | None = None) -> dict[str, FleetRow]:
    """The rows the cache holds for ``paths`` as they are now (nothing is analysed)."""
    cache = cache if cache is not None else default_cache()
    prints = {p: f for p in paths if (f := fingerprint(p)) is not None}
    return _decode(cache.get_many(CACHE_KIND, prints))


def session_row(path: str, cache: AnalysisCache | None = None) -> FleetRow:
    """One session's row: from the cache (default: the user's) when the file is unchanged,
    else analysed now, in this thread, and cached. For the picker, one discovered session
    (``DiscoveredSession.path``) at a time, from a worker thread."""
    rows = list(fleet_rows([path], jobs=1, cache=cache if cache is not None else default_cache()))
    return rows[0][0]


def fleet_rows(
    paths: Sequence[str],
    *,
    jobs: int | None = None,
    cache: AnalysisCache | None = None,
    progress: ProgressFn | None = None,
    stop: StopFn | None = None,
) -> Iterator[tuple[FleetRow, bool]]:
    """``(row, from_cache)`` for every path: the cached rows first, then the others as their
    analyses finish (in ``jobs`` processes, default one per core). ``cache=None`` analyses
    everything and stores nothing. ``stop`` ends the run early (the rows analysed so far are
    cached all the same)."""
    prints = {p: f for p in paths if (f := fingerprint(p)) is not None}
    hits = _decode(cache.get_many(CACHE_KIND, prints)) if cache is not None else {}
    total, done = len(paths), 0
    for path in paths:
        if path in hits:
            done += 1
            if progress is not None:
                progress(done, total, path)
            yield hits[path], True
    from core.fleet.session_pool import default_jobs, map_sessions

    todo = [p for p in paths if p not in hits]
    sizes = {p: f.size for p, f in prints.items()}
    fresh: list[tuple[str, Fingerprint, bytes]] = []
    crashed: set[str] = set()

    def on_crash(path: str, message: str) -> FleetRow:
        crashed.add(path)  # not cached: the next run tries again
        return FleetRow(path=path, error=message)

    try:
        for path, row in map_sessions(
            todo,
            analyse_row,
            jobs=jobs or default_jobs(),
            on_crash=on_crash,
            sizes=sizes,
            stop=stop,
        ):
            row.size_bytes = sizes.get(path)
            if path in prints and path not in crashed and row.error is None:  # errors: retried
                fresh.append((path, prints[path], model_json(row, indent=None).encode()))
            done += 1
            if progress is not None:
                progress(done, total, path)
            yield row, False
    finally:
        if cache is not None:
            cache.put_many(CACHE_KIND, fresh)


def fleet(
    arguments: Sequence[str],
    *,
    jobs: int | None = None,
    use_cache: bool = True,
    progress: ProgressFn | None = None,
    cache: AnalysisCache | None = None,
) -> FleetReport:
    """``ctxscope fleet``: the rows of every session ``arguments`` name (see
    :func:`session_paths`), fullest first."""
    started = time.perf_counter()
    paths, problems = session_paths(arguments)
    store = (cache if cache is not None else default_cache()) if use_cache else None
    report = FleetReport(rows=[], problems=problems)
    for row, from_cache in fleet_rows(paths, jobs=jobs, cache=store, progress=progress):
        report.rows.append(row)
        report.cached += from_cache
        report.analysed += not from_cache
    report.rows.sort(key=_fullest_first)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _fullest_first(row: FleetRow) -> tuple[bool, float, int, str]:
    return (
        row.error is not None,
        -(row.peak_share if row.peak_share is not None else -1.0),
        -(row.peak_tokens or 0),
        row.path,
    )


def _decode(stored: dict[str, bytes]) -> dict[str, FleetRow]:
    rows: dict[str, FleetRow] = {}
    for path, data in stored.items():
        try:
            row = FleetRow.model_validate_json(data)
        except ValidationError:
            continue  # written by another layout of the row: analysed again
        if row.error is None:  # an error row is never trusted: the file may be readable now
            rows[path] = row
    return rows
