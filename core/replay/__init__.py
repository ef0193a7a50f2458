"""Replay a recorded session under a policy, holding the agent's actions fixed.

Entry points: :func:`replay` (one run), :class:`Replayer` (incremental re-simulation for the TUI,
which replays on every keystroke of a limit change) and :func:`compare` (several policies side by
side). The result models are the public API of docs/REPLAY_API.md.

The package, in the order a run uses it (docs/architecture.md draws it):

=================  ==================================================================================
``results``        what a replay returns: the result models, ``SCHEMA_VERSION``
``policies``       the recording agent's preset, the window and the threshold of a policy
``calls``          what the session is: calls, turns, recorded usage (whatever the policy)
``recorded``       what the recording did: its compactions, its context at every call per estimator
``truncation``     per truncation setting, what the policy sends of every tool output
``state``          the run state (context items, checkpoints) and the trace a run leaves
``checks``         the compaction check before a call and the overflow verdict of a call
``stuck``          compaction attempts that would end as the last one did
``rebuild``        the context after the policy's own compaction or pruning
``setting``        what a run reads that depends on its policy (window, threshold, counts, …)
``simulate``       the walk: one method per kind of event (message, call, check, compaction, …)
``incremental``    after a limit change, from which call a run can resume an earlier one
``fidelity``       how the replay matched each recorded compaction
``timeline``       the result assembled from a run's trace: points, message states, summary, notes
``context``        the context a run had at one message, and a compaction run on it now
``engine``         :class:`Replayer`: the caches shared by runs, the lock, ``run``, ``context_at``
``compare``        :func:`compare`
=================  ==================================================================================

How a replay walks a session
----------------------------
Messages are walked in order. Every message the agent produced or received is kept (the agent's
actions are fixed); what changes is what the *policy* would have put in the context window:

1. **Truncation.** Each tool output is truncated as the policy would (``spill=False``: nothing is
   written while simulating). Recorded outputs were already truncated by the recording agent, so a
   policy can only shorten them further (or add its hint to one just over a limit).
2. **Checks before each model call.** Before call *k* the policy looks at the context of the
   previous call *after its reply* (prompt + output: what opencode, Codex, pi and Claude Code all
   compare against their threshold), plus — when ``project_after_tool_results`` — the estimated
   tokens of everything added since (tool results the model has not seen yet: phase 2).
   ``check_before_each_call`` checks before every call; otherwise only before the first call of a
   turn (the end of the previous turn), with a projection that crossed mid-turn remembered until
   then. A usage figure older than a compaction is not used (pi's rule): after a compaction only
   the projection can fire until the next call has happened. When the check fires, pruning and
   compaction run right there (before call *k*, so the event's ``call_index`` is *k* and its
   ``trigger_call_index`` the call whose figure crossed the threshold). An attempt that changes
   nothing — nothing to compact, or no summary could be written — leaves the context as it was,
   so the next check fires again: each such attempt is counted (``noop_compactions``) and noted.
   One that provably ends as the last did is not made again: the same context, or a summary
   request that overflowed the summariser at every head size allowed, when the messages added
   since can only lengthen the head (:mod:`core.replay.stuck`); the context rebuilt (a compaction,
   a pruning, a recorded compaction taken) is a new start.
3. **The call.** The simulated context of call *k* (see below) is compared with the window. Over
   it, with ``overflow_recovery``, the policy compacts (trigger ``overflow``) and retries once; if
   the retry still does not fit, an ``overflow`` event records it.
4. **Recorded compactions.** Each compaction the recording holds rebuilds the *recorded* context
   (its summary and replacement messages, plus the messages it kept from ``first_kept_id``).
   Compactions the recording agent's own threshold cannot explain (below it, or marked ``manual``)
   were the user's ``/compact``: they are actions too, so every policy applies them where they
   happened (the recording agent's own policy by taking the recorded result, trigger ``manual``,
   kind ``recorded-compaction``; another policy by running its own compaction there). Automatic
   recorded compactions are the agent's decisions, which the policy replaces with its own.

The context at a model call: recorded + delta
---------------------------------------------
Two contexts are tracked side by side, in tokens of the policy's estimator:

* the **recorded** context: what the recording agent actually had (all messages, its own
  compactions applied); its size at call *k* is ``E_rec(k)``;
* the **simulated** context: what the policy would have had (outputs truncated, its own pruning
  and compactions applied); ``E_sim(k)``.

The figure the policy sees at call *k* is ``baseline(k) + r x (E_sim(k) - E_rec(k))``, where
``baseline(k)`` is the recording's own context at that call: the recorded usage (in the provider's
convention, ``CallPoint.recorded_kind``), or, for a call without usable usage (none recorded, or an
all-zero figure of an aborted call), the last recorded figure plus the estimated growth of the
recorded context since, or ``overhead + E_rec(k)`` when there is no recorded figure to start from
(or a recorded compaction came in between). ``overhead`` is the system prompt and tool schemas
the messages do not show: the first recorded context minus the estimated tokens of the messages
before it, floored at 0. ``r`` converts estimated tokens into the provider's: the median over
recorded calls of ``(recorded - overhead) / E_rec`` (1.0 without usage). It matters: on the pi
sample a chars/4 estimate undercounts Claude's tokenizer by about 30 %, so an unscaled delta
would leave a compacted context 30 % of the removed tokens too big.

Why this design: as long as the policy has changed nothing, both contexts hold the same messages,
the delta is exactly 0 and the policy sees the recorded figure itself — so replaying a session
under the recording agent's own policy fires where the agent fired (the fidelity report checks
this). After the first change, only the *difference* is estimated; the bulk of the figure stays
the provider's exact count, so estimation error is proportional to what changed, not to the whole
context. Without any usage every figure is ``overhead + E_sim`` and is labelled estimated. A
recorded overflow (stop reason ``length``, an overflow error, recorded prompt > window) stays an
overflow in the replay as long as the policy has removed nothing by then (delta >= 0).

When the recording agent's policy fires at the same call as one of its recorded automatic
compactions, the replay takes the recorded result (summary and kept messages) instead of writing
its own, so the rest of the replay keeps tracking the recording; the event says so.

Incremental re-simulation
-------------------------
A :class:`Replayer` keeps what does not depend on the policy (token counts, the recorded side,
truncated outputs, compaction results, message states) and the trace of its last runs: the state
at every model call, every check with the figures it measured, the events so far. A new policy
resumes from the last checkpoint its change cannot affect (:mod:`core.replay.incremental` says
which change resumes where; :mod:`core.replay.engine` what is cached).
"""

from __future__ import annotations

from core.overflow import RecordedKind
from core.replay.compare import compare
from core.replay.context import CompactionAt, ContextAt
from core.replay.engine import Replayer, SummarizerFactory, replay
from core.replay.policies import (
    INFERRED,
    NATIVE_PRESET,
    agent_version,
    effective_window,
    is_recording_policy,
    native_policy,
    policy_threshold,
)
from core.replay.results import (
    SCHEMA_VERSION,
    CallPoint,
    CompareResult,
    CompareRow,
    EventKind,
    FidelityRow,
    InferredThreshold,
    MessageState,
    Outcome,
    ReplayEvent,
    ReplayResult,
    ReplaySummary,
    ThresholdSpan,
    Trigger,
    cut_index,
)
from core.replay.simulate import ProgressFn, ReplayCancelled
from core.replay.truncation import sent_output

__all__ = [
    "INFERRED",
    "NATIVE_PRESET",
    "SCHEMA_VERSION",
    "CallPoint",
    "CompactionAt",
    "CompareResult",
    "CompareRow",
    "ContextAt",
    "EventKind",
    "FidelityRow",
    "InferredThreshold",
    "MessageState",
    "Outcome",
    "ProgressFn",
    "RecordedKind",
    "ReplayCancelled",
    "ReplayEvent",
    "ReplayResult",
    "ReplaySummary",
    "Replayer",
    "SummarizerFactory",
    "ThresholdSpan",
    "Trigger",
    "agent_version",
    "compare",
    "cut_index",
    "effective_window",
    "is_recording_policy",
    "native_policy",
    "policy_threshold",
    "replay",
    "sent_output",
]
