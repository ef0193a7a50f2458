"""The walk: one run of the policy over the session's messages, one method per kind of event.

:meth:`Run.walk` goes through the messages in order (from a checkpoint of an earlier run, or the
start). Before each message it applies the recorded compactions that happened there
(:meth:`Run.apply_recorded_compaction`: the user's ``/compact``); at each model call
:meth:`Run.call_step` prunes at a turn end, makes the threshold check (which may compact or take
the recorded compaction) and works out the call's figures and overflow
(:meth:`Run.overflow`); each message a walk adds to the context goes through
:meth:`Run.on_message` (a truncation event when the policy truncates it).

The run writes into its :class:`~core.replay.state.Trace`: a checkpoint before every
call, or every k-th call of a long session (:func:`~core.replay.state.checkpoint_spacing`), the
check and the raw figures of every call, the events and notes. The engine assembles the result
from it (:mod:`core.replay.timeline`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core.model.fastmodel import build
from core.model.session import Provenance
from core.policy import Policy
from core.replay.calls import Calls
from core.replay.checks import CheckRules, fired_on, overflows, trigger_of
from core.replay.recorded import CallFigures, RecordedCompaction, RecordedCompactions
from core.replay.results import EventKind, ReplayEvent, Trigger, cut_index
from core.replay.setting import Setting
from core.replay.state import (
    Check,
    Item,
    PruneInput,
    State,
    Stuck,
    Trace,
    checkpoint_spacing,
)
from core.replay.stuck import FIRED_NOTE, Appended

if TYPE_CHECKING:  # (the algorithms load when a run first compacts or prunes; following an
    # earlier run, and rebuilding a context, when a run first does so)
    from core.algorithms.compact import CompactionError, CompactionOutline
    from core.replay.rebuild import Rebuilt
    from core.replay.shifted import Follower, Walk

ProgressFn = Callable[[int, int], None]
"""Called now and then with ``(messages_done, messages_total)``."""
CompactFn = Callable[
    [Sequence[Item], Policy, int, bool, int], "CompactionOutline | CompactionError"
]
"""``(items, policy, window, auto, now_ms)``: the engine's cached compaction."""
FutileFn = Callable[[Stuck, Sequence[Item], Policy], bool]
"""``(stuck, appended, policy)``: an attempt now would end as the stuck one did."""

_PROGRESS_EVERY = 512

_FIRED_BECAUSE: dict[str, str] = {
    "threshold": "the context crossed the threshold",
    "projection": "the projected context (with the tool results since the last call) crossed "
    "the threshold",
    "overflow": "the call would not fit the window",
    "manual": "the user compacted here in the recording",
    "recorded": "the recording compacted here",
}
"""Why a compaction was made, for its event's reason."""


_RECORDED = Provenance.RECORDED
_NOTHING_KEY = {trigger: f"nothing-{trigger}" for trigger in FIRED_NOTE}  # (a no-op's note key)


def _no_stretch(_call: int, _state: State) -> int:
    """No earlier run to follow (:meth:`core.replay.shifted.Follower.stretch`)."""
    return -1


class ReplayCancelled(Exception):
    """The run was cancelled through its ``cancel`` event."""


def _report(
    done: int, total: int, progress: ProgressFn | None, cancel: threading.Event | None
) -> None:
    """Now and then during a walk: stop when cancelled, else say how far it got."""
    if cancel is not None and cancel.is_set():
        raise ReplayCancelled("replay cancelled")
    if progress is not None:
        progress(done, total)


class Run:
    """One walk of the session under one policy; its state is the :class:`State` it started from
    (a checkpoint's copy, or a fresh one), updated in place."""

    def __init__(
        self,
        calls: Calls,
        recorded: RecordedCompactions,
        setting: Setting,
        trace: Trace,
        state: State,
        *,
        compact: CompactFn,
        futile: FutileFn,
        earlier: Trace | None = None,
    ) -> None:
        self.calls = calls
        self.recorded = recorded
        self.setting = setting
        self.policy = setting.policy
        self.trace = trace
        self.state = state
        self.events = trace.events
        self._noted = {key for _when, key, _text in trace.run_notes}
        """The keys of the notes the trace holds (:meth:`note`)."""
        self._compact = compact
        self._futile = futile
        self.messages = calls.session.messages
        self.turn_end_prune = setting.policy.pruning.enabled and setting.policy.pruning.budget_rule
        # What every call and message reads, bound once per run (a walk reads them ~10^5 times).
        rec = setting.rec
        self._sent = setting.truncation.tokens
        self._truncated = setting.truncation.truncated
        self._check_tokens = setting.check_tokens
        self._tokens = setting.tokens
        self._limits = setting.limits
        self._windows = setting.windows
        self._turn_start = calls.turn_start
        self._first_of_turn = calls.first_of_turn
        self._main = calls.main
        self._after_reply = calls.after_reply
        self._e_rec_cov = rec.e_rec_cov
        self._baseline = rec.baseline
        self._baseline_prompt = rec.baseline_prompt
        self._baseline_after = rec.baseline_after
        self._baseline_prov = rec.baseline_prov
        self._e_rec_after = rec.e_rec_after
        self._estimated = setting.counter.provenance
        self._ratio = rec.ratio
        # (the trace's lists are the ones restored before the run starts: never replaced during it)
        self._add_check = trace.made.adder()  # (written to the columns as the walk goes on)
        trace.call_messages = calls.calls
        self._rec = rec
        self._follow = setting.follow_recording
        self._reasons = setting.recorded_reasons(calls)
        self._check_each = setting.policy.compaction.check_before_each_call
        self._rules = CheckRules(setting.policy)
        self._faithful = setting.native or setting.follow_recording
        self._auto_calls = {
            rc.recorded_call
            for rc in recorded.all
            if rc.automatic and rc.kind in ("auto", "unknown")
        }
        """The calls :meth:`RecordedCompactions.here` finds an automatic compaction before."""
        self.follower: Follower | None = None
        """Takes the stretches where the run follows ``earlier`` (a run it walks alike:
        :func:`core.replay.shifted.can_follow`) from that run's trace."""
        if earlier is not None:
            from core.replay.shifted import Follower

            self.follower = Follower(self._walk(), earlier)

    def _walk(self) -> Walk:
        """What a :class:`~core.replay.shifted.Follower` reads of this run."""
        from core.replay.shifted import Walk

        return Walk(
            self.setting,
            self.calls,
            self.recorded,
            self.trace,
            self.events,
            self._rules,
            self._reasons,
            self._auto_calls,
        )

    # -- the walk ----------------------------------------------------------------------------

    def walk(
        self,
        pos: int,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        *,
        stop: int | None = None,
    ) -> None:
        """Walk from message ``pos`` (the checkpoint's) to the end of the session, or up to
        message ``stop`` (not included: the state is then the one before it)."""
        n = self.calls.n if stop is None else min(stop, self.calls.n)
        follower = self.follower if stop is None else None
        stretch = follower.stretch if follower is not None else _no_stretch
        while pos >= 0:
            pos = self._walk_span(pos, n, progress, cancel, stretch)
        state = self.state
        state.n_events = len(self.events)
        self.trace.final = state.copy()
        if progress is not None:
            progress(n, n)

    def _walk_span(
        self,
        pos: int,
        n: int,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
        stretch: Callable[[int, State], int],
    ) -> int:
        """Walk messages ``pos`` to ``n`` (not included), up to a stretch that follows the earlier
        run (``stretch``: :meth:`core.replay.shifted.Follower.stretch`, tried at each call whose
        checkpoint is kept). Returns the message the walk goes on from after that stretch (-1:
        the walk got to ``n``)."""
        state = self.state
        events = self.events
        checkpoint = self.trace.checkpoints.append
        pending_at = self.trace.pending.append
        copy = State.copy
        # (a run following the recording is read for its checks alone: no state to resume from)
        every = len(self.calls) + 1 if self._follow else checkpoint_spacing(len(self.calls))
        call_of = self.calls.call_of
        rc_at = self.recorded.at
        walked = self.recorded.walked
        recount = self.setting.reply_recount
        on_call = self.call_step()
        sent, check_tokens, turn_start = self._sent, self._check_tokens, self._turn_start
        truncated, reasoning = self._truncated, self.calls.reasoning
        flush_checks = self.trace.made.flush
        next_progress = pos + _PROGRESS_EVERY
        for i in range(pos, n):
            if i >= next_progress:
                next_progress = i + _PROGRESS_EVERY
                _report(i, n, progress, cancel)
                flush_checks()  # (the checks added since, as columns: CheckColumns.adder)
            c = call_of[i]
            if c >= 0:
                if c % every:
                    checkpoint(None)
                else:
                    jumped = stretch(c, state)  # (taken from the earlier run's trace)
                    if jumped >= 0:
                        return jumped
                    state.n_events = len(events)
                    checkpoint(copy(state))
                pending_at(state.pending)
                if i in rc_at:
                    self.recorded_before(i)
                on_call(c, i)
            elif i in rc_at:
                self.recorded_before(i)
            # Message i joins the context, as the policy truncates it (unless it is in a recorded
            # context taken ahead of the walk: an overflow recovery).
            if walked[i] and i >= state.base_pos:
                state.e_sim += sent[i]
                tokens = check_tokens[i]
                if turn_start[i]:
                    # A user message started a turn: the reasoning of the turn before it moves to
                    # the earlier turns', and the check's count since the prompt starts over.
                    state.reasoning_before_prev = state.reasoning_before
                    state.reasoning_before += state.reasoning_turn
                    state.reasoning_turn = 0
                    state.since_prompt = 0
                state.since_call += tokens
                state.since_prompt += tokens
                if reasoning is not None:
                    state.reasoning_turn += reasoning[i]
                if truncated[i]:
                    self.truncate_event(i)
            if c >= 0:
                state.since_call = recount[i] if recount and walked[i] else 0
                state.prev_e_cov = state.e_sim
        return -1

    def recorded_before(self, i: int) -> None:
        """The recorded compactions that happened before message ``i``."""
        state = self.state
        for rc in self.recorded.at[i]:
            state.rec_base_change = True
            if rc.inferred_manual and not rc.rewound:
                self.apply_recorded_compaction(rc, i)

    def truncate_event(self, i: int) -> None:
        """Message ``i`` joined the context truncated."""
        truncation = self.setting.truncation
        self.event(
            "truncate",
            i,
            truncation.reasons.get(i, "truncated"),
            call_index=self.calls.next_call_or_none(i + 1),
            tokens_before=self._tokens[i],
            tokens_after=self._sent[i],
            at_message_index=i,
        )

    def call_step(self) -> Callable[[int, int], None]:
        """Model call ``c`` (message ``i``) as a function ``step(c, i)``: turn-end pruning, the
        threshold check before it (:meth:`check_step`), then the context it sends and whether
        that overflows. What it reads is bound once per walk (a walk makes ~10^5 steps)."""
        state = self.state
        tokens, main, after_reply = self._tokens, self._main, self._after_reply
        first_of_turn, turn_end_prune = self._first_of_turn, self.turn_end_prune
        check = self.check_step()
        add_check = self._add_check
        add_delta = self.trace.deltas.append
        event_ids = self.trace.event_ids
        e_rec_cov, ratio, reasons, windows = (
            self._e_rec_cov,
            self._ratio,
            self._reasons,
            self._windows,
        )
        baseline, baseline_prompt = self._baseline, self._baseline_prompt
        baseline_after, baseline_prov = self._baseline_after, self._baseline_prov
        e_rec_after, estimated = self._e_rec_after, self._estimated
        # (the calls' rows, as columns: state.WALKED_COLUMNS)
        columns = self.trace.columns
        add_figure = columns["simulated_tokens"].append
        add_overflow = columns["overflow_simulated"].append
        add_provenance = columns["simulated_provenance"].append

        def step(c: int, i: int) -> None:
            starts_turn = first_of_turn[c] == 1  # (a bool, as the check keeps it)
            if turn_end_prune and starts_turn and c > 0:
                self.prune_at_turn_end(i, c)
            reply = tokens[i] if main[i] else 0
            add_check(check(c, i, starts_turn, reply))
            # The call's figures (RecordedSide.figures, written out: once per call).
            if not after_reply[c]:
                reply = 0
            delta = state.e_sim + reply - e_rec_cov[c]
            scaled = round(delta * ratio)
            prompt = baseline_prompt[c] + scaled
            if prompt < 0:
                prompt = 0
            reason = reasons[c]
            add_delta(delta)
            window = windows[c]
            if window and (prompt > window or (delta >= 0 and reason is not None)):
                figures, overflow = self.overflow(
                    c, i, reply, self.setting.rec.figures(c, state.e_sim + reply), reason
                )
                delta, figure, _prompt, after = figures
            else:
                overflow = False
                # (a run following the recording takes the recorded figures' own int objects:
                # not two new ones a call, kept to the end of a 100 MB session's command)
                figure = baseline[c] + scaled if scaled else baseline[c]
                if figure < 0:
                    figure = 0
                after = baseline_after[c] + scaled if scaled else baseline_after[c]
                if after < 0:
                    after = 0
            add_figure(figure)
            add_overflow(overflow)
            add_provenance(baseline_prov[c] if delta == 0 else estimated)
            if state.pending_events:
                event_ids[c] = state.pending_events
                state.pending_events = ()
            # What the next check will look at (prev_e_cov once the reply is in the context).
            state.prev_call = c
            state.prev_figure = after
            state.prev_baseline_figure = baseline_after[c]
            state.prev_e_rec_cov = e_rec_after[c]
            state.rebased = False
            state.rec_base_change = False

        return step

    # -- checks and overflows ----------------------------------------------------------------

    def check_step(self) -> Callable[[int, int, bool, int], Check]:
        """The threshold check before a call, as a function of ``(c, i, starts_turn,
        reply_tokens)`` with what it reads bound once per walk (``reply_tokens``: message
        ``i``'s tokens when it is the main agent's). It compacts when it fires (the recording
        agent's policy takes the recorded compaction where the recording compacted).

        It measures with :meth:`CheckRules.measurer` and decides as :meth:`CheckRules.decide`
        does, written out here (one frame fewer per call; the same results:
        ``tests/unit/test_replay_walk_step.py``)."""
        state, provenances = self.state, self.trace.columns["simulated_provenance"]
        limits, check_each = self._limits, self._check_each
        faithful, follow, auto_calls = self._faithful, self._follow, self._auto_calls
        measure = self._rules.measurer(state, self._rec)
        auto, strict = self._rules.auto, self._rules.strict
        recorded_prov = _RECORDED

        def check(c: int, i: int, starts_turn: bool, reply_tokens: int) -> Check:
            limit = limits[c]
            checks_now = check_each or starts_turn
            if not checks_now and faithful:
                # The agent compacted by itself here: whatever its documented schedule, it checked.
                checks_now = c in auto_calls
            # How its figure was made (CallPoint.check_basis): from the previous call's recorded
            # usage as it is, or projected from it, or estimated.
            prev = state.prev_call
            made = measure(
                c,
                reply_tokens,
                checks_now,
                starts_turn,
                limit,
                prev >= 0 and provenances[prev] is recorded_prov,
            )
            if follow:
                return self.follow(made, c, i)
            if limit is None or not auto:
                if c in auto_calls:
                    self.diverged()
                return made
            # CheckRules.decide: a limit of 0 never fires, pi compares with ">", the others ">=".
            base, proj = made.base, made.proj
            if limit <= 0:
                base_hit = proj_hit = False
            elif strict:
                base_hit = base is not None and base > limit
                proj_hit = proj is not None and proj > limit
            else:
                base_hit = base is not None and base >= limit
                proj_hit = proj is not None and proj >= limit
            if proj_hit:
                state.pending = True
            if checks_now and (base_hit or state.pending):
                state.pending = False
                made = self.fire(made, c, i, limit)
            elif c in auto_calls:
                self.diverged()  # a run following the recording takes the compaction recorded here
            return made

        return check

    def fire(self, check: Check, c: int, i: int, limit: int | None) -> Check:
        """The check before call ``c`` fired: compact (the recording agent's policy takes the
        recorded compaction where the recording compacted). Returns the check, fired."""
        trigger = trigger_of(check, limit, self.policy)
        figure = fired_on(check, trigger)
        auto = self._auto_calls  # (adopt_recorded finds one at these calls alone: asked there)
        adopted = self.setting.native and c in auto and self.adopt_recorded(c, i, trigger, figure)
        if not adopted:
            self.compact(i, c, trigger, c - 1 if c > 0 else None, figure)
            if c in auto:
                self.diverged()  # a run following the recording takes the compaction recorded here
        return check.fired_as(trigger)

    def diverged(self) -> None:
        """The context departs here from the one a run following the recording has
        (:attr:`Trace.first_divergence`)."""
        if self.trace.first_divergence is None:
            self.trace.first_divergence = max(0, len(self.trace.checkpoints) - 1)

    def follow(self, check: Check, c: int, i: int) -> Check:
        """Following the recording: the check fires exactly where the recording compacted by
        itself before call ``c``, taking the recorded compaction. Returns the check as it
        ends."""
        if self.recorded.here(c) is None:
            return check
        figure = check.proj if check.proj is not None else (check.base or 0)
        check = check.fired_as("recorded")
        self.adopt_recorded(c, i, "recorded", figure)
        return check

    def overflow(
        self, c: int, i: int, reply: int, figures: CallFigures, recorded_reason: str | None
    ) -> tuple[CallFigures, bool]:
        """Call ``c`` would not fit the window: compact and retry once (overflow recovery), else
        record the overflow. Returns the call's figures and whether it still overflows.

        The recording agent's policy takes the recording's own recovery when there is one, as
        does a run that follows the recording."""
        trace = self.trace
        window = self.setting.windows[c]
        assert window
        if trace.first_overflow_call is None:
            trace.first_overflow_call = c
        recovery = self.policy.compaction.overflow_recovery
        follow = self.setting.follow_recording
        faithful = self.setting.native or follow
        taken = faithful and self.adopt_recorded(c, i, "overflow", figures.prompt, kind="overflow")
        # The recording agent's policy recovers where the recording did, and only there: where
        # the recording overflowed and did not recover, neither does its replay.
        recorded_only = faithful and recorded_reason is not None and figures.delta >= 0
        own = recovery and not follow and not recorded_only
        if taken or (own and self.compact(i, c, "overflow", c, figures.prompt)):
            figures = self.setting.rec.figures(c, self.state.e_sim + reply)
            if not overflows(figures.prompt, window, recorded_reason, figures.delta >= 0):
                return figures, False
        prompt = figures.prompt
        recorded_over = recorded_reason is not None and figures.delta >= 0
        because = (
            " (the recording overflowed here and the policy removed nothing)"
            if recorded_over and prompt <= window
            else ""
        )
        retried = (
            "; compacting and retrying once did not make it fit."
            if recovery
            else "; overflow recovery is off."
        )
        self.event(
            "overflow",
            i,
            f"The call would send {prompt:,} tokens to a {window:,}-token window{because}{retried}",
            call_index=c,
            tokens_before=prompt,
            at_message_index=i,
        )
        return figures, True

    # -- compactions -------------------------------------------------------------------------

    def compact(
        self, at: int, call: int | None, trigger: Trigger, trigger_call: int | None, figure: int
    ) -> bool:
        """The policy's own compaction before message ``at`` (``figure``: the context that made
        it fire); True when it changed anything."""
        window = self.setting.windows[call] if call is not None else self.setting.window
        if not window or self.futile_now(at, call, trigger):
            return False
        items = self.context_items(at)
        if not items:
            return False
        # Any attempt depends on how the policy compacts, whatever comes of it.
        if self.trace.first_compaction_call is None:
            self.trace.first_compaction_call = max(0, len(self.trace.checkpoints) - 1)
        now = self.now_ms(at)
        if self.policy.pruning.enabled:
            self.note_prune_input(at, now)
        outcome = self._compact(items, self.policy, window, trigger != "manual", now)
        from core.algorithms.compact import CompactionError

        if isinstance(outcome, CompactionError) or not (outcome.compacted or outcome.pruned_ids):
            self.came_to_nothing(outcome, at, call, trigger)
            return False
        state = self.state
        before = state.e_sim
        from core.replay.rebuild import after_compaction

        rebuilt = after_compaction(outcome, items, self.setting.counter)
        self.diverged()
        self.rebase(rebuilt.items, at)
        after_tokens = max(0, figure - round(self.setting.rec.ratio * (before - state.e_sim)))
        where = {"call_index": call, "trigger": trigger, "at_message_index": at}
        if outcome.compacted:
            self.compaction_events(outcome, rebuilt, figure, after_tokens, trigger_call, where)
        else:
            self.event(
                "prune",
                rebuilt.pruned[0] if rebuilt.pruned else at,
                f"Nothing to summarise, but pruning freed {before - state.e_sim:,} tokens. "
                f"{outcome.reason}",
                meta=rebuilt.meta,
                tokens_before=figure,
                tokens_after=after_tokens,
                pruned_indices=rebuilt.pruned,
                trigger_call_index=trigger_call,
                **where,
            )
        return True

    def futile_now(self, at: int, call: int | None, trigger: Trigger) -> bool:
        """An attempt before message ``at`` would end as the last one did: it is not made, only
        noted (:func:`core.replay.stuck.futile`)."""
        stuck = self.state.stuck
        if stuck is None:
            return False
        appended = Appended(self.setting.items, self.messages, self.recorded.walked, stuck.at, at)
        if not self._futile(stuck, appended, self.policy):
            return False
        self.state.stuck = Stuck(at, stuck.failed, stuck.too_large, stuck.why)
        self.changed_nothing(at, call, trigger, stuck.failed, stuck.why)
        return True

    def came_to_nothing(
        self,
        outcome: CompactionOutline | CompactionError,
        at: int,
        call: int | None,
        trigger: Trigger,
    ) -> None:
        """The attempt failed, or found nothing to compact: the context stays as it was."""
        from core.algorithms.compact import CompactionError

        if isinstance(outcome, CompactionError):
            too_large = outcome.too_large and not outcome.head_may_shrink
            stuck = Stuck(at, True, too_large, str(outcome))
        else:
            stuck = Stuck(at, False, False, outcome.reason)
        self.state.stuck = stuck
        self.changed_nothing(at, call, trigger, stuck.failed, stuck.why)

    def compaction_events(
        self,
        outcome: CompactionOutline,
        rebuilt: Rebuilt,
        figure: int,
        after_tokens: int,
        trigger_call: int | None,
        where: dict[str, Any],
    ) -> None:
        """The events of a compaction that summarised a head (and of its continuation)."""
        at = where["at_message_index"]
        self.event(
            "compact",
            cut_index(rebuilt.head, rebuilt.tail, at),
            f"Compacted because {_FIRED_BECAUSE[where['trigger']]} ({figure:,} tokens): "
            f"{len(rebuilt.head)} messages ({rebuilt.head_tokens:,} tokens) summarised, "
            f"{len(rebuilt.tail)} kept. {outcome.reason}",
            meta=rebuilt.meta,
            tokens_before=figure,
            tokens_after=after_tokens,
            head_indices=rebuilt.head,
            tail_indices=rebuilt.tail,
            pruned_indices=rebuilt.pruned,
            summary=outcome.summary,
            dropped_head_messages=outcome.dropped_head_messages,
            trigger_call_index=trigger_call,
            summary_tokens=rebuilt.summary_tokens,
            **where,
        )
        if rebuilt.continued:
            self.event(
                "continue",
                at,
                "A synthetic message asks the agent to carry on after the automatic compaction.",
                **where,
            )

    def adopt_recorded(
        self, c: int, i: int, trigger: Trigger, figure: int, *, kind: str = "auto"
    ) -> bool:
        """Take the recorded compaction of ``kind`` at call ``c`` (the recording agent's policy
        fired where the recording compacted); False when there is none to take."""
        rc = self.recorded.here(c, kind)
        rec = self.setting.rec
        if rc is None or rc.index not in rec.bases:
            return False
        before = self.context_items(i)
        self.take(rc, i)
        base_items = rec.bases[rc.index][0]
        owned = self.recorded.owned
        # After it, call c sends the recording's own context: its figure is the recorded one.
        after_reply = self.calls.kinds[c] == "after-reply" and self.calls.main[i]
        reply = self.setting.tokens[i] if after_reply else 0
        after_tokens = rec.figures(c, self.state.e_sim + reply).prompt
        because = (
            f"the provider refused the call ({figure:,} tokens)"
            if kind == "overflow"
            else f"the context crossed the threshold ({figure:,} tokens)"
        )
        self.event(
            "compact",
            i,
            f"Compacted because {because}, where the recording compacted: the recorded summary "
            "and kept messages are used.",
            call_index=c,
            trigger=trigger,
            tokens_before=figure,
            tokens_after=after_tokens,
            head_indices=self.summarised(before, rc, i),
            tail_indices=[j for j, _t in base_items if j >= 0 and not owned[j]],
            summary=self.calls.session.compactions[rc.index].summary,
            trigger_call_index=c - 1 if c > 0 else None,
            at_message_index=i,
            recorded_index=rc.index,
            summary_tokens=sum(t for j, t in base_items if j < 0 or owned[j]),
        )
        if self.trace.first_compaction_call is None:
            self.trace.first_compaction_call = max(0, len(self.trace.checkpoints) - 1)
        return True

    def apply_recorded_compaction(self, rc: RecordedCompaction, i: int) -> None:
        """A manual compaction of the recording, before message ``i``: an action of the user, so
        every policy makes it (the recording agent's by taking the recorded result)."""
        nxt = self.calls.next_call_or_none(i)
        if not (self.setting.native or rc.before_recording):
            state = self.state
            figure = state.prev_figure + (state.e_sim - state.prev_e_cov)
            if self.compact(i, nxt, "manual", None, figure):
                last = self.events[-1] if self.events else None
                if last is not None and last.kind in ("compact", "prune"):
                    last.recorded_index = rc.index
            return
        state = self.state
        before = self.context_items(i)
        figure = state.prev_figure + (state.e_sim - state.prev_e_cov)
        e_before = state.e_sim
        self.take(rc, i)
        rec = self.setting.rec
        base_items = rec.bases[rc.index][0]
        owned = self.recorded.owned
        recorded = self.calls.session.compactions[rc.index]
        # The recording's own figures lead; else the replay's, as for the policy's compactions.
        tokens_before = recorded.tokens_before
        if tokens_before is None and not rc.before_recording:
            tokens_before = figure
        tokens_after = recorded.tokens_after
        if tokens_after is None and tokens_before is not None:
            tokens_after = max(0, tokens_before - round(rec.ratio * (e_before - state.e_sim)))
        reason = (
            "The recording starts at this compaction (what came before it is not in the file): "
            "the replay starts from its summary and kept messages."
            if rc.before_recording
            else f"The {'hook' if rc.kind == 'hook' else 'user'} compacted here in the recording "
            "(not the agent's own threshold); the recorded summary and kept messages are used."
        )
        self.event(
            "recorded-compaction",
            rc.first_kept if rc.first_kept is not None else i,
            reason,
            call_index=nxt,
            trigger="recorded" if rc.before_recording else "manual",
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            head_indices=self.summarised(before, rc, i),
            tail_indices=[j for j, _t in base_items if j >= 0],
            summary=recorded.summary,
            at_message_index=i,
            recorded_index=rc.index,
            summary_tokens=sum(t for j, t in base_items if j < 0 or owned[j]),
        )

    def prune_at_turn_end(self, at: int, call: int) -> None:
        """opencode's budget rule: prune old tool outputs at the end of every turn."""
        items = self.context_items(at)
        counter = self.setting.counter
        now = self.now_ms(at)
        self.note_prune_input(at, now)
        from core.algorithms.prune import prune

        outcome = prune(
            [item.message for item in items],
            self.policy.pruning,
            counter=counter,
            now_ms=now,
        )
        if self.trace.first_prune_call is None:
            self.trace.first_prune_call = max(0, len(self.trace.checkpoints) - 1)
        if not outcome.pruned_ids:
            return
        from core.replay.rebuild import after_pruning

        rebuilt = after_pruning(outcome, items, counter)
        before = self.state.e_sim
        self.rebase(rebuilt.items, at)
        self.event(
            "prune",
            rebuilt.pruned[0] if rebuilt.pruned else at,
            f"At the end of the turn, {outcome.summary[0].lower()}{outcome.summary[1:]}",
            meta=rebuilt.meta,
            call_index=call,
            tokens_before=before,
            tokens_after=self.state.e_sim,
            pruned_indices=rebuilt.pruned,
            at_message_index=at,
        )

    def note_prune_input(self, at: int, now: int) -> None:
        """Keep what a pruning about to run is given (:attr:`Trace.prune_inputs`)."""
        state = self.state
        self.trace.prune_inputs.append(
            PruneInput(
                max(0, len(self.trace.checkpoints) - 1),
                state.base,
                state.base_pos,
                at,
                now,
                self.setting.items,
            )
        )

    def changed_nothing(
        self, at: int, call: int | None, trigger: Trigger, failed: bool, why: str
    ) -> None:
        """Note a compaction attempt that left the context as it was."""
        self.trace.noops.append(len(self.trace.checkpoints))
        key = "failed" if failed else _NOTHING_KEY[trigger]
        text = ""
        if key not in self._noted:  # (a later note of the key keeps no text: made for the first)
            where = f"call {call}" if call is not None else f"message {at}"
            fired = FIRED_NOTE[trigger].format(where=where, at=at)  # (the trigger's, per attempt)
            if failed:
                text = f"{fired}, but the compaction failed: {why}"
            else:
                text = f"{fired}, but there was nothing to compact: {why}"
        self.note(key, text)

    def summarised(self, before: Sequence[Item], rc: RecordedCompaction, at: int) -> list[int]:
        """The session messages of the context ``before`` a recorded compaction taken before
        message ``at`` that it did not keep: what its summary replaced."""
        base_items, start = self.setting.rec.bases[rc.index]
        kept = {j for j, _t in base_items if j >= 0}
        return [
            item.index
            for item in before
            if item.index >= 0 and item.index not in kept and not start <= item.index < at
        ]

    # -- the context -------------------------------------------------------------------------

    def walk_items(self, start: int, stop: int) -> list[Item]:
        """The items the walk added from message ``start`` up to ``stop``."""
        return [item for item in self.setting.items[start:stop] if item is not None]

    def context_items(self, at: int) -> list[Item]:
        """The simulated context before message ``at``."""
        return [*self.state.base, *self.walk_items(self.state.base_pos, at)]

    def rebase(self, items: Sequence[Item], at: int) -> None:
        """The context is rebuilt as ``items``, the walk adding messages from ``at`` on."""
        state = self.state
        state.base = tuple(items)
        state.base_pos = at
        state.base_tokens = sum(item.tokens for item in items)
        state.e_sim = state.base_tokens
        state.rebased = True
        state.stuck = None
        state.recount_reasoning(state.base)

    def take(self, rc: RecordedCompaction, at: int) -> None:
        """The context becomes the recorded one right after ``rc`` (its summary and the messages
        it kept, then what the walk added since), as the policy truncates them."""
        base_items, start = self.setting.rec.bases[rc.index]
        owned = self.recorded.owned
        all_items = self.setting.items
        items: list[Item] = []
        for j, tokens in base_items:
            if j < 0:
                assert rc.summary_message is not None
                items.append(Item(rc.summary_message, -1, tokens))
            elif owned[j]:
                items.append(Item(self.messages[j], j, tokens))
            else:
                item = all_items[j]
                assert item is not None  # in the recorded context, so in the main one
                items.append(item)
        self.rebase(items, start)
        main = self.calls.main
        ttok = self.setting.truncation.tokens
        self.state.e_sim += sum(ttok[j] for j in range(start, at) if main[j] and not owned[j])

    def now_ms(self, at: int) -> int:
        """The time of message ``at`` (epoch ms; 0 when unknown): the pruner's stamp."""
        messages = self.messages
        stamp = messages[min(at, len(messages) - 1)].timestamp if messages else None
        if stamp:
            try:
                return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
            except ValueError:
                pass
        return 0

    # -- events and notes --------------------------------------------------------------------

    def event(
        self,
        kind: EventKind,
        message_index: int,
        reason: str,
        *,
        meta: dict[int, str] | None = None,
        **fields: Any,
    ) -> int:
        """Add a :class:`ReplayEvent` (attached to the next call) and return its id."""
        full = {
            "kind": kind,
            "message_index": message_index,
            "call_index": fields.get("call_index"),
            "trigger": fields.get("trigger"),
            "reason": reason,
            "tokens_before": fields.get("tokens_before"),
            "tokens_after": fields.get("tokens_after"),
            "head_indices": fields.get("head_indices", []),
            "tail_indices": fields.get("tail_indices", []),
            "pruned_indices": fields.get("pruned_indices", []),
            "summary": fields.get("summary"),
            "dropped_head_messages": fields.get("dropped_head_messages", 0),
            "trigger_call_index": fields.get("trigger_call_index"),
            "at_message_index": fields.get("at_message_index"),
            "summary_tokens": fields.get("summary_tokens"),
            "recorded_index": fields.get("recorded_index"),
        }
        events = self.events
        events.append(build(ReplayEvent, full))
        event_id = len(events) - 1
        if meta:
            self.trace.compaction_meta[event_id] = meta
        self.state.pending_events = (*self.state.pending_events, event_id)
        return event_id

    def note(self, key: str, text: str) -> None:
        """A note of the run (grouped by ``key`` in the result, which shows the first of each
        key's text: a later one of the key is kept, for its place and its count, without its
        text; a session failing 5,000 compactions held 2.5 MB of them)."""
        noted = self._noted
        if key in noted:
            text = ""
        else:
            noted.add(key)
        self.trace.run_notes.append((len(self.trace.checkpoints), key, text))
