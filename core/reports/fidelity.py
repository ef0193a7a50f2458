"""Fidelity over many sessions: does the recording agent's own preset do what the agent did?

``ctxscope fidelity PATH...`` loads every session the paths name, replays each under the preset
of the agent that recorded it (as its recorded version behaves, with the window and threshold
resolved from evidence), and reports one row per recorded compaction: what triggered it and why
we think so, where the replay compacted, and against which threshold. The total line counts the
automatic compactions reproduced at the same call.

It also intersects, per agent, version, provider, model and window, the intervals the sessions'
own compactions give the agent's threshold (:mod:`core.replay.inferred`): the tightest interval
many sessions agree on, or a conflict between them (reported, never hidden).

A session that fails to load is a row with its error; the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field

from core.formats import LoadError, load_session
from core.formats.session_paths import expand_paths
from core.model.session import Session
from core.replay import NATIVE_PRESET, InferredThreshold, Replayer, native_policy
from core.replay.results import SCHEMA_VERSION, Documented, FidelityRow

ProgressFn = Callable[[int, int, str], None]
"""Called before each session with ``(done, total, path)``."""


class FidelityEntry(Documented):
    """One recorded compaction of one session, and how the agent's preset replayed it."""

    file: str
    """The session file (or folder, or database) it was recorded in."""
    agent: str
    """The agent that recorded it (the session's format)."""
    version: str | None
    """The agent's version, when recorded."""
    provider: str | None
    """Who served the model, when recorded or evident."""
    model: str | None
    """The session's model."""
    window: int | None
    """The window the replay used."""
    window_source: str
    """Where that window comes from (``recorded``, ``table``, ``inferred``, ``user``)."""
    window_evidence: str | None
    """Why the window is what it is."""
    row: FidelityRow
    """The replay's fidelity row for this compaction (trigger and evidence, recorded and replay
    calls, the checked figure and the threshold)."""


class ThresholdGroup(Documented):
    """The agent's threshold as the sessions of one agent, version, provider, model and window
    agree on it."""

    agent: str
    """The agent."""
    version: str | None
    """Its version."""
    provider: str | None
    """The provider."""
    model: str | None
    """The model."""
    window: int | None
    """The window."""
    sessions: int
    """Sessions in the group."""
    compactions: int
    """Automatic compactions that bound the interval from above."""
    low: int | None
    """The largest figure any session's checks measured without compacting."""
    high: int | None
    """The smallest figure that made any session compact by itself."""
    rule_threshold: int | None
    """What the documented rule gives."""
    conflict: bool
    """The sessions disagree (or one of them does with itself): no single threshold explains
    them all."""
    note: str
    """The interval in words."""


class FileError(Documented):
    """A path that could not be read as a session."""

    file: str
    """The path."""
    error: str
    """Why, in one sentence."""


class FidelityReport(Documented):
    """``ctxscope fidelity --json``."""

    schema_version: int = SCHEMA_VERSION
    """Version of this JSON layout."""
    sessions: int
    """Sessions read."""
    entries: list[FidelityEntry] = Field(default_factory=list)
    """One per recorded compaction, session by session."""
    groups: list[ThresholdGroup] = Field(default_factory=list)
    """The threshold intervals, intersected per agent, version, provider, model and window."""
    errors: list[FileError] = Field(default_factory=list)
    """Paths that could not be read."""
    automatic: int
    """Automatic compactions (the agent's threshold, or a refused request) that can be replayed,
    in sessions whose recording agent is known (not our own format)."""
    reproduced: int
    """Of those, the ones the preset reproduced at the same call."""
    untestable: int
    """Automatic compactions that cannot be tested: the file starts at them, or does not hold
    the context the agent measured before them."""

    @property
    def share(self) -> float:
        """``reproduced / automatic`` (1.0 when there are none)."""
        return self.reproduced / self.automatic if self.automatic else 1.0

    def total_line(self) -> str:
        """The report's one-line verdict."""
        line = (
            f"automatic compactions reproduced at the same call: {self.reproduced}/"
            f"{self.automatic} ({self.share:.0%})"
        )
        if self.untestable:
            line += (
                f"; {self.untestable} more not testable (the file does not hold what came "
                "before them)"
            )
        return line


def fidelity_report(paths: Sequence[str], progress: ProgressFn | None = None) -> FidelityReport:
    """Replay every session ``paths`` name under its agent's preset (see the module docstring)."""
    files, problems = expand_paths(paths)
    report = FidelityReport(
        sessions=0,
        automatic=0,
        reproduced=0,
        untestable=0,
        errors=[FileError(file=p.split(": ", 1)[0], error=p) for p in problems],
    )
    groups: dict[tuple[object, ...], list[tuple[Session, InferredThreshold]]] = {}
    for done, path in enumerate(files):
        if progress is not None:
            progress(done, len(files), str(path))
        try:
            session = load_session(path)
        except (LoadError, OSError) as exc:
            report.errors.append(FileError(file=str(path), error=str(exc)))
            continue
        report.sessions += 1
        inferred = _session_rows(report, session, str(path))
        key = _group_key(session)
        groups.setdefault(key, []).append((session, inferred))
    report.groups = [_group(members) for members in groups.values()]
    return report


def _session_rows(report: FidelityReport, session: Session, file: str) -> InferredThreshold:
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    known = session.format in NATIVE_PRESET  # our own format records no agent to check
    for row in result.fidelity:
        report.entries.append(
            FidelityEntry(
                file=file,
                agent=session.format.value,
                version=session.agent_version,
                provider=session.provider,
                model=session.model,
                window=result.window,
                window_source=result.window_source,
                window_evidence=result.window_evidence,
                row=row,
            )
        )
        if not known:
            continue
        if row.outcome == "untestable":
            report.untestable += 1
        elif row.automatic:
            report.automatic += 1
            report.reproduced += row.outcome == "same"
    return replayer.inferred_threshold()


def _group_key(session: Session) -> tuple[object, ...]:
    return (
        session.format.value,
        session.agent_version,
        session.provider,
        session.model,
        session.context_window,
    )


def _group(members: list[tuple[Session, InferredThreshold]]) -> ThresholdGroup:
    session = members[0][0]
    intervals = [interval for _s, interval in members]
    lows = [i.low for i in intervals if i.low is not None]
    highs = [i.high for i in intervals if i.high is not None]
    low = max(lows) if lows else None
    high = min(highs) if highs else None
    conflict = any(i.conflict for i in intervals) or (
        low is not None and high is not None and low >= high
    )
    return ThresholdGroup(
        agent=session.format.value,
        version=session.agent_version,
        provider=session.provider,
        model=session.model,
        window=session.context_window,
        sessions=len(members),
        compactions=sum(i.compactions for i in intervals),
        low=low,
        high=high,
        rule_threshold=intervals[0].rule_threshold,
        conflict=conflict,
        note=_group_note(low, high, conflict, len(members)),
    )


def _group_note(low: int | None, high: int | None, conflict: bool, sessions: int) -> str:
    lower = f"({low:,}" if low is not None else "(0"
    upper = f"{high:,}]" if high is not None else "∞)"
    where = f"{sessions} session{'s' if sessions != 1 else ''}"
    if conflict:
        return f"{where} disagree: no single threshold in {lower}, {upper}"
    return f"threshold in {lower}, {upper} over {where}"
