"""Several policies over one session, side by side (``ctxscope compare``)."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the package's __init__ imports this module: it loads no replay engine)
    from core.model.session import Session
    from core.policy import Policy
    from core.replay.compare_results import CompareResult, CompareRow
    from core.replay.engine import Replayer
    from core.replay.results import ReplayResult
    from core.replay.simulate import ProgressFn


def compare(
    session: Session,
    policies: Sequence[Policy],
    *,
    progress: ProgressFn | None = None,
    replayer: Replayer | None = None,
) -> CompareResult:
    """Replay ``session`` under each policy and put the figures side by side."""
    from core.replay.compare_results import CompareResult
    from core.replay.engine import Replayer
    from core.replay.policies import effective_window

    engine = replayer or Replayer(session)
    rows: list[CompareRow] = []
    per_policy: list[tuple[str, list[str]]] = []
    total = max(1, len(policies)) * max(1, len(session.messages))
    for position, policy in enumerate(policies):
        offset = position * max(1, len(session.messages))

        def step(done: int, _total: int, offset: int = offset) -> None:
            if progress is not None:
                progress(offset + done, total)

        result = engine.run(policy, progress=step if progress is not None else None)
        rows.append(_row(policy, result))
        per_policy.append((policy.name, result.notes))
    window = effective_window(session, policies[0]) if policies else session.context_window
    return CompareResult(
        session_id=session.id, window=window, rows=rows, notes=_shared_notes(per_policy)
    )


def _row(policy: Policy, result: ReplayResult) -> CompareRow:
    from core.replay.compare_results import CompareRow
    from core.replay.results import Outcome

    counts = dict.fromkeys(typing.get_args(Outcome), 0)
    for row in result.fidelity:
        counts[row.outcome] += 1
    return CompareRow(
        policy=policy.name,
        description=policy.description,
        window=result.window,
        threshold=result.threshold,
        summary=result.summary,
        fidelity=counts,
    )


def _shared_notes(per_policy: list[tuple[str, list[str]]]) -> list[str]:
    """Notes every policy shares once; the others with the policy they belong to."""
    notes: list[str] = []
    for name, policy_notes in per_policy:
        for note in policy_notes:
            if all(note in other for _n, other in per_policy):
                if note not in notes:
                    notes.append(note)
            else:
                notes.append(f"{name}: {note}")
    return notes
