"""Fidelity over many sessions: does the recording agent's own preset do what the agent did?

``ctxscope fidelity PATH...`` loads every session the paths name, replays each under the preset
of the agent that recorded it (as its recorded version behaves), and reports one row per recorded
compaction: what triggered it and why we think so, where the replay compacted, and against which
threshold. The total line counts the automatic compactions reproduced at the same call. Each is a
prediction: the preset's threshold comes from the agent's rule (:mod:`core.agents.constants`), never
from the compactions being scored.

With ``learn``, each session is replayed a second time with the threshold learned from the
*other* sessions given of the same agent, version, provider, model and window (leave-one-out:
:func:`core.replay.inferred.learned`), and each row says how that did and which sessions taught
it. A session whose group has no other session with an automatic compaction learns nothing.

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
from core.insights.named_figures import CompactionFigures, compaction_figures, recording_checks
from core.model.session import Session
from core.replay import NATIVE_PRESET, InferredThreshold, Replayer, native_policy
from core.replay.inferred import learned, learned_policy
from core.replay.results import SCHEMA_VERSION, Documented, FidelityRow, Outcome

ProgressFn = Callable[[int, int, str], None]
"""Called before each session with ``(done, total, path)``."""


class LearnedOutcome(Documented):
    """How a replay with a threshold learned from other sessions matched one compaction."""

    threshold: int
    """The threshold learned (leave-one-out) from the other sessions of the same group."""
    learned_from: list[str]
    """The sessions whose compactions taught it (never the one scored)."""
    outcome: Outcome
    """As :attr:`FidelityRow.outcome`, under the learned threshold."""
    replay_call_index: int | None
    """The call the matching replay compaction fired before."""
    call_delta: int | None
    """Replay call - recorded call."""


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
    figures: CompactionFigures | None = None
    """Its named figures (at message, the agent's count, the check, the last prompt, the tokens
    after: :mod:`core.insights.named_figures`), as every other output states them."""
    recording_check: int | None = None
    """:data:`core.insights.named_figures.RECORDING_CHECK` before it (None: not an automatic
    compaction, or nothing measured)."""
    learned: LearnedOutcome | None = None
    """With ``--learn``: the outcome under the threshold the other sessions of its group teach
    (None: not asked for, or no other session taught one)."""


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
    learn: bool = False
    """Thresholds were also learned leave-one-out from the other sessions (``--learn``)."""
    learned_automatic: int = 0
    """Testable automatic compactions for which the other sessions taught a threshold."""
    learned_reproduced: int = 0
    """Of those, the ones the learned threshold reproduced at the same call."""

    @property
    def share(self) -> float:
        """``reproduced / automatic`` (1.0 when there are none)."""
        return self.reproduced / self.automatic if self.automatic else 1.0

    def total_line(self) -> str:
        """The report's one-line verdict."""
        line = (
            f"automatic compactions reproduced at the same call: {self.reproduced}/"
            f"{self.automatic} ({self.share:.0%}), predicted by each agent's rule (no threshold "
            "taken from the compactions scored)"
        )
        if self.untestable:
            line += (
                f"; {self.untestable} more not testable (the file does not hold what came "
                "before them)"
            )
        if self.learn:
            untaught = self.automatic - self.learned_automatic
            line += (
                f"; with a threshold learned from the other sessions of the same agent version, "
                f"provider and model (leave-one-out): {self.learned_reproduced}/"
                f"{self.learned_automatic}"
            )
            if untaught:
                line += f" ({untaught} with no other session to learn from)"
        return line


class _Member:
    """One session read: what the learning pass needs of it."""

    __slots__ = ("entries", "file", "inferred", "replayer", "session")

    def __init__(
        self,
        file: str,
        session: Session,
        inferred: InferredThreshold,
        entries: list[FidelityEntry],
        replayer: Replayer | None,
    ) -> None:
        self.file = file
        self.session = session
        self.inferred = inferred
        self.entries = entries
        self.replayer = replayer


def fidelity_report(
    paths: Sequence[str], progress: ProgressFn | None = None, *, learn: bool = False
) -> FidelityReport:
    """Replay every session ``paths`` name under its agent's preset, and with ``learn`` under the
    threshold its group's other sessions teach (see the module docstring)."""
    files, problems = expand_paths(paths)
    report = FidelityReport(
        sessions=0,
        automatic=0,
        reproduced=0,
        untestable=0,
        learn=learn,
        errors=[FileError(file=p.split(": ", 1)[0], error=p) for p in problems],
    )
    groups: dict[tuple[object, ...], list[_Member]] = {}
    for done, path in enumerate(files):
        if progress is not None:
            progress(done, len(files), str(path))
        try:
            session = load_session(path)
        except (LoadError, OSError) as exc:
            report.errors.append(FileError(file=str(path), error=str(exc)))
            continue
        report.sessions += 1
        member = _session_rows(report, session, str(path), keep=learn)
        groups.setdefault(_group_key(session), []).append(member)
    report.groups = [
        _group([(m.session, m.inferred) for m in members]) for members in groups.values()
    ]
    if learn:
        for members in groups.values():
            _learn(report, members)
    return report


def _learn(report: FidelityReport, members: list[_Member]) -> None:
    """Replay each member with the threshold the group's other members teach."""
    for member in members:
        if member.replayer is None or member.session.format not in NATIVE_PRESET:
            continue
        others = [m for m in members if m is not member]
        native = native_policy(member.session)
        threshold = learned([m.inferred for m in others], native)
        if threshold is None:
            continue
        sources = [m.file for m in others if m.inferred.high is not None]
        result = member.replayer.run(learned_policy(native, threshold, sources))
        rows = {row.recorded_index: row for row in result.fidelity}
        for entry in member.entries:
            row = rows.get(entry.row.recorded_index)
            if row is None:
                continue
            entry.learned = LearnedOutcome(
                threshold=threshold,
                learned_from=sources,
                outcome=row.outcome,
                replay_call_index=row.replay_call_index,
                call_delta=row.call_delta,
            )
            if entry.row.automatic and entry.row.outcome != "untestable":
                report.learned_automatic += 1
                report.learned_reproduced += row.outcome == "same"


def _session_rows(report: FidelityReport, session: Session, file: str, *, keep: bool) -> _Member:
    replayer = Replayer(session)
    result = replayer.run(native_policy(session))
    known = session.format in NATIVE_PRESET  # our own format records no agent to check
    recording = recording_checks(replayer) if known else {}
    entries: list[FidelityEntry] = []
    figures = compaction_figures(session, result)
    for row in result.fidelity:
        entries.append(
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
                figures=figures[row.recorded_index],
                recording_check=recording.get(row.recorded_index),
            )
        )
        if not known:
            continue
        if row.outcome == "untestable":
            report.untestable += 1
        elif row.automatic:
            report.automatic += 1
            report.reproduced += row.outcome == "same"
    report.entries.extend(entries)
    return _Member(
        file, session, replayer.inferred_threshold(), entries, replayer if keep else None
    )


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
