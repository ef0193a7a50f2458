"""The engine: :class:`Replayer` keeps what runs on one session share, and runs a policy by
resuming the best earlier run (:mod:`~core.replay.incremental`), walking the rest
(:mod:`~core.replay.simulate`) and assembling the result (:mod:`~core.replay.timeline`).

What it keeps across runs:

* the message texts, and per estimator the token count of every message (one batched count; the
  shared :class:`~core.model.tokens.TokenCounter` caches by content, so nothing is ever counted twice);
* the recorded side per estimator (:mod:`~core.replay.recorded`; it does not depend on the policy);
* per truncation setting, the truncated content of every output over the limits
  (:mod:`~core.replay.truncation`);
* every compaction result, by its exact input (so a re-run that compacts the same messages reuses
  the summary — with a live LLM too), and the message states of earlier results;
* what makes a compaction that is *not* a repeat cheap: the serialised head entry of each message
  (:class:`core.algorithms.compact.EntryCache`) and, in the mock summariser it holds per LLM setting, what
  each transcript entry says. Compactions go through :func:`core.algorithms.compact.compact_outline`: the
  same pipeline as :func:`~core.algorithms.compact.compact`, without the per-message records only a person
  inspecting one compaction reads;
* the traces of the last runs (:class:`~core.replay.state.Trace`);
* per way of checking, the checks of a run that follows the recording (the evidence about the
  agent's threshold, :meth:`Replayer.recorded_checks`): taken from the run of the agent's own
  preset up to the first call where that run departs from the recording, and walked from there.

A run pauses the cyclic garbage collector (reference counting still frees everything):
collections walking the large, long-lived session cost a fifth of a run.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.gc_pause import gc_paused
from core.model.session import Message, Session
from core.model.tokens import OutputSizes, get_counter
from core.policy import Policy
from core.replay.checks import reply_recount
from core.replay.evidence import rule_spans, thresholds_from_evidence
from core.replay.incremental import ResumePlanner, can_follow, policy_key, restore
from core.replay.inferred import inferred_policy, intersect
from core.replay.policies import (
    call_windows,
    effective_window,
    is_recording_policy,
    native_policy,
    rule_thresholds,
)
from core.replay.recorded import RecordedSide, measure_recorded_side, placed
from core.replay.results import InferredThreshold, ReplayResult, ThresholdSpan
from core.replay.setting import Setting
from core.replay.simulate import ProgressFn, Run
from core.replay.state import Check, Item, Stuck, Trace
from core.replay.stuck import futile
from core.replay.timeline import MessageStates, assemble
from core.replay.truncation import Truncations

if TYPE_CHECKING:  # (imported where a compaction runs: a replay without one starts without them)
    from core.algorithms.compact import CompactionError, CompactionOutline, EntryCache
    from core.llm.protocol import DeltaCallback, Summarizer
    from core.replay.context import CompactionAt, ContextAt

SummarizerFactory = Callable[[Policy], "Summarizer"]

_MAX_CACHED_COMPACTIONS = 512

Thresholds = tuple[list[int | None], list[int | None], list[ThresholdSpan]]
"""A policy's window at each call, its threshold at each call, and the threshold's spans."""
_THRESHOLD_FIELDS = frozenset({"context_window", "compaction"})
"""The policy's fields its windows and thresholds are made of (:func:`call_windows`,
:func:`rule_thresholds`)."""

_LINES_AT_ONCE = 4096
"""How many tool outputs :meth:`Replayer.count_output_lines` counts the lines of at a time
(about 5 ms of a small-message session)."""

DEFAULT_WINDOW = 200_000
"""The window a compaction run now assumes when the session's is unknown (and says so)."""


class Replayer:
    """Replays one session under any number of policies, reusing work between runs.

    ``summarizer_factory(policy)`` gives the summariser for a policy (default: the policy's
    ``llm`` — the offline mock unless configured). Runs are serialised by a lock, so a TUI worker
    may call :meth:`run` from any thread.
    """

    MAX_TRACES = 6

    def __init__(
        self,
        session: Session,
        *,
        summarizer_factory: SummarizerFactory | None = None,
    ) -> None:
        self.session = session
        self._factory = summarizer_factory
        self._lock = threading.Lock()
        self._calls, self._recorded = placed(session)
        self._tokens = MessageTokens(session)
        self._sides: dict[str, RecordedSide] = {}
        self._truncations = Truncations(session, self._tokens)
        self._thresholds: tuple[tuple[Any, ...], Thresholds] | None = None
        """The last policy's windows and thresholds, by what they are made of (its window and
        compaction fields): a change of another field (truncation, pruning) keeps them."""
        self._planner = ResumePlanner(session, self._calls, self._truncations, self._sides)
        self._compactions: OrderedDict[tuple[Any, ...], CompactionOutline | CompactionError] = (
            OrderedDict()
        )
        self._entry_cache: EntryCache | None = None
        """Serialised head entries shared by this session's compactions (bounded LRU; made by
        the first compaction)."""
        self._summarizers: dict[tuple[Any, ...], Summarizer] = {}
        self._traces: OrderedDict[tuple[Any, ...], Trace] = OrderedDict()
        self._results: dict[tuple[Any, ...], ReplayResult] = {}
        """The result of each finished trace, by its key (kept here, not in the trace: a result
        reads its points from its trace, and a trace holding its result would be a reference
        cycle, freed by the cyclic collector rather than by reference counting)."""
        self._states = MessageStates(len(session.messages))
        self._recording_evidence: dict[tuple[Any, ...], list[ThresholdSpan]] = {}
        self._recounts: dict[tuple[str, str], list[int]] = {}
        """What the check counts again of each reply, by the way of counting it and the
        estimator (:meth:`_reply_recount`: a Setting is made for every run and for the
        inferred threshold, mostly of one policy)."""
        self._agent_checked: tuple[list[int], list[int]] | None = None
        """The last :meth:`_check_tokens` made from the agent's estimates, with the tokens sent
        it was made from (held: a cached truncation's list, which is not changed once made)."""

    # -- running -----------------------------------------------------------------------------

    def run(
        self,
        policy: Policy,
        *,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> ReplayResult:
        """Replay the session under ``policy``, resuming from the most recent run it can."""
        with self._lock, gc_paused():
            key = policy_key(policy)
            trace = self._traces.get(key)
            if trace is not None and trace.finished:
                self._traces.move_to_end(key)
                return self._results[key]
            setting = self._setting(policy)
            trace = Trace(policy)
            trace.key = key
            trace.flat = policy.by_name()
            trace.windows, trace.thresholds = setting.windows, setting.limits
            old, resume = self._planner.best_trace(self._traces.values(), policy, trace.flat, trace)
            result = self._simulate(setting, trace, old, resume, progress, cancel)
            trace.finished = True
            self._traces[key] = trace
            self._results[key] = result
            if len(self._traces) > self.MAX_TRACES:
                gone, _trace = self._traces.popitem(last=False)
                del self._results[gone]
            return result

    def _simulate(
        self,
        setting: Setting,
        trace: Trace,
        old: Trace | None,
        resume: int,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
    ) -> ReplayResult:
        state, pos, resume = restore(trace, old, resume, self._calls)
        run = Run(
            self._calls,
            self._recorded,
            setting,
            trace,
            state,
            compact=self._compact,
            futile=self._futile,
            earlier=self._followed_run(old, trace),
        )
        run.walk(pos, progress, cancel)
        return assemble(self._calls, self._recorded, setting, trace, resume, self._states)

    def _followed_run(self, old: Trace | None, trace: Trace) -> Trace | None:
        """The run ``trace``'s walk may follow where their contexts differ by a constant (the one
        it resumed from, when complete and walked alike: :func:`can_follow`)."""
        calls = len(self._calls)
        if old is None or old.final is None or len(old.deltas) != calls:
            return None
        if len(old.checkpoints) != calls or not can_follow(old.flat, trace.flat):
            return None
        return old

    def count_output_lines(self, cancel: threading.Event | None = None) -> None:
        """Count the lines of every tool output now, a stretch at a time (a run waiting for
        the lock gets it between two), unless ``cancel`` is set: a change of a line limit then
        reads no output (the TUI calls this while it waits for the user; a one-shot command,
        which replays once, does not). Then, likewise, the recorded side's figures as the
        arrays a run following an earlier one adds to (:meth:`RecordedSide.lane_columns`: 2
        lists of 10^5 calls copied, otherwise in the first limit change that moves a
        compaction)."""
        with self._lock:
            todo = self._truncations.uncounted_lines()
        for start in range(0, len(todo), _LINES_AT_ONCE):
            if cancel is not None and cancel.is_set():
                return
            with self._lock:
                self._truncations.count_lines(todo[start : start + _LINES_AT_ONCE])
        with self._lock:
            self._truncations.keep_by_lines()
        if cancel is not None and cancel.is_set():
            return
        with self._lock:
            for side in list(self._sides.values()):
                side.lane_columns()

    def release_compaction_caches(self) -> None:
        """Drop the serialised head entries kept to make later compactions cheap (up to
        :attr:`EntryCache.max_chars` characters). A one-shot command calls this once its replay is
        done: what it does next (the inferred threshold's walk following the recording, the
        report) makes no compaction of its own, and a later one would serialise its head again
        with the same result. The compaction results themselves are kept (a live LLM is not asked
        twice)."""
        with self._lock:
            self._entry_cache = None  # (a later compaction starts a new one)

    def _setting(self, policy: Policy) -> Setting:
        estimator = policy.estimator
        truncation = self._truncations.of(policy)
        windows, rule, spans = self._windows_and_thresholds(policy)
        setting = Setting(
            policy=policy,
            window=effective_window(self.session, policy),
            windows=windows,
            limits=rule,
            native=is_recording_policy(self.session, policy),
            counter=get_counter(estimator),
            tokens=self.tokens(estimator),
            rec=self._recorded_side(estimator),
            truncation=truncation,
            items=self._truncations.items(truncation, estimator, self._recorded.walked),
            check_tokens=self._check_tokens(policy, truncation.tokens),
            reply_recount=self._reply_recount(policy),
            spans=spans,
        )
        return setting

    def _windows_and_thresholds(self, policy: Policy) -> Thresholds:
        """The window and the threshold at each call, and the threshold's spans (made again
        only when the policy's window or compaction fields change)."""
        key = policy.key(include=_THRESHOLD_FIELDS)
        last = self._thresholds
        if last is not None and last[0] == key:
            return last[1]
        windows = call_windows(self.session, policy, self._calls.calls)
        rule = rule_thresholds(self.session, policy, windows)
        made = (windows, rule, rule_spans(rule))
        self._thresholds = (key, made)
        return made

    def _reply_recount(self, policy: Policy) -> list[int]:
        """What the check counts again of each reply (empty when the policy counts nothing),
        worked out once per way of counting and estimator (the list is only read)."""
        mode = policy.compaction.recount_reply_blocks
        if mode == "none":
            return []
        key = (mode, policy.estimator)
        found = self._recounts.get(key)
        if found is None:
            count = get_counter(policy.estimator).count
            found = [reply_recount(message, policy, count) for message in self.session.messages]
            self._recounts[key] = found
        return found

    # -- one message, looked at closely ------------------------------------------------------

    def context_at(self, policy: Policy, message_index: int, *, through: bool = False) -> ContextAt:
        """The context ``policy`` had right before message ``message_index`` — its last summary,
        the tail it kept, everything since — before anything it did there; with ``through``,
        message ``message_index`` too (:mod:`core.replay.context`)."""
        key = policy_key(policy)
        while True:  # (another thread's runs may push the trace out between the two locks)
            self.run(policy)
            with self._lock, gc_paused():
                trace = self._traces.get(key)
                if trace is None or not trace.finished:
                    continue
                self._traces.move_to_end(key)
                from core.replay.context import context_before

                return context_before(
                    self._calls,
                    self._recorded,
                    self._setting(policy),
                    trace,
                    message_index,
                    through=through,
                    compact=self._compact,
                    futile=self._futile,
                )

    async def compaction_at(
        self,
        policy: Policy,
        message_index: int,
        *,
        through: bool = True,
        summarizer: Summarizer | None = None,
        on_delta: DeltaCallback | None = None,
        default_window: int = DEFAULT_WINDOW,
    ) -> CompactionAt:
        """Run ``policy``'s compaction now on :meth:`context_at` (streaming the summary to
        ``on_delta``), with ``summarizer`` or the policy's LLM; a session whose window is
        unknown is compacted for ``default_window``. Raises
        :class:`core.algorithms.compact.CompactionError`."""
        import asyncio  # (only a compaction needs it: `analyze --json` starts without it)

        from core.algorithms.compact import compact
        from core.llm.factory import make_summarizer
        from core.replay.context import CompactionAt

        context = await asyncio.to_thread(self.context_at, policy, message_index, through=through)
        window = context.window or effective_window(self.session, policy)
        used = window or default_window
        if summarizer is None:
            summarizer = make_summarizer(policy.llm, context_limit_tokens=used)
        result = await compact(
            context.messages,
            policy,
            summarizer,
            window=used,
            counter=get_counter(policy.estimator),
            auto=False,
            on_delta=on_delta,
            token_counts=context.tokens,
        )
        return CompactionAt(context, result, used, bool(window))

    def inferred_threshold(self) -> InferredThreshold:
        """The interval the session's own compactions give the recording agent's threshold
        (:mod:`core.replay.inferred`)."""
        native = native_policy(self.session)
        with self._lock, gc_paused():
            spans = self._native_spans(native)
            if spans is None:  # (the rule's spans: the setting's own)
                return intersect(self._windows_and_thresholds(native)[2], native)
        return intersect(spans, native)

    def _native_spans(self, native: Policy) -> list[ThresholdSpan] | None:
        """:meth:`_recording_spans` of the recording agent's preset ``native`` (None: it has
        no threshold at any call); a Setting is made only when they are not known yet (for
        the walk), and the policy's key worked out once."""
        _windows, limits, _rule = self._windows_and_thresholds(native)
        if not any(limits):
            return None
        key = policy_key(native)
        spans = self._recording_evidence.get(key)
        if spans is None:
            spans = self._recording_spans(self._setting(native), key)
        return spans

    def inferred_policy(self) -> Policy:
        """The recording agent's preset with the threshold the session shows (``--policy
        inferred``)."""
        return inferred_policy(native_policy(self.session), self.inferred_threshold())

    def _recording_spans(
        self, setting: Setting, key: tuple[Any, ...] | None = None
    ) -> list[ThresholdSpan]:
        """The stretches of ``setting``'s threshold evidence (:func:`thresholds_from_evidence`
        of :meth:`recorded_checks`), worked out once per policy (``key``: its
        :func:`policy_key`, when the caller has it).
        Only the spans are kept: the checks they come from, one per call (~10 MB at 50,000
        calls), are freed once read."""
        if key is None:
            key = policy_key(setting.policy)  # (every field: the way of checking and the rule)
        spans = self._recording_evidence.get(key)
        if spans is None:
            checks = self.recorded_checks(setting, key)
            _limits, spans = thresholds_from_evidence(
                self._recorded, checks, setting.limits, setting.policy
            )
            self._recording_evidence[key] = spans
        return spans

    def recorded_checks(
        self, setting: Setting, key: tuple[Any, ...] | None = None
    ) -> Sequence[Check | None]:
        """What ``setting``'s threshold check measures before each call when the run makes
        exactly the recording's compactions (the evidence about the agent's threshold:
        :mod:`core.replay.evidence`). One quick walk (not kept: :meth:`_recording_spans` keeps
        what the evidence makes of it; the checks are read from its trace's columns, each made
        when read: a list of them all was 7 MB at 50,000 calls; ``key``: the policy's
        :func:`policy_key`, when the caller has it)."""
        follow = replace(setting, follow_recording=True, spans=[])
        trace = Trace(setting.policy)
        trace.windows, trace.thresholds = setting.windows, setting.limits
        state, pos, _resumed = restore(trace, *self._followed(setting, key), self._calls)
        Run(
            self._calls,
            self._recorded,
            follow,
            trace,
            state,
            compact=self._compact,
            futile=self._futile,
        ).walk(pos, None, None)
        checks = Trace(setting.policy)  # (the checks alone: the walk's states and columns go)
        checks.made = trace.made
        return checks.checks

    def _followed(
        self, setting: Setting, key: tuple[Any, ...] | None = None
    ) -> tuple[Trace | None, int]:
        """A finished run of ``setting``'s own policy, when it is the recording agent's, and the
        call up to which its context is the one a run following the recording has
        (:attr:`Trace.first_divergence`): up to there its checks are the ones such a run makes,
        and the walk following the recording resumes from it."""
        if not setting.native:
            return None, 0
        trace = self._traces.get(policy_key(setting.policy) if key is None else key)
        if trace is None or not trace.finished or trace.final is None:
            return None, 0
        calls = len(self._calls)
        return trace, calls if trace.first_divergence is None else trace.first_divergence

    def _check_tokens(self, policy: Policy, sent: list[int]) -> list[int]:
        """What each message adds to the checked figure: the agent's own estimate where the
        policy uses it and the session has one, else the tokens the policy sends."""
        if not policy.compaction.use_agent_estimates:
            return sent
        last = self._agent_checked
        if last is not None and last[0] is sent:
            return last[1]
        checked = [
            estimate if (estimate := message.agent_estimate_tokens) is not None else tokens
            for message, tokens in zip(self.session.messages, sent, strict=True)
        ]
        self._agent_checked = (sent, checked)
        return checked

    # -- per-estimator data ------------------------------------------------------------------

    def tokens(self, estimator: str) -> list[int]:
        """Tokens of every message under ``estimator`` (counted once, then cached)."""
        return self._tokens(estimator)

    def _recorded_side(self, estimator: str) -> RecordedSide:
        side = self._sides.get(estimator)
        if side is None:
            side = measure_recorded_side(
                self._recorded, self.tokens(estimator), get_counter(estimator)
            )
            self._sides[estimator] = side
        return side

    # -- compactions -------------------------------------------------------------------------

    def _summarizer(self, policy: Policy, window: int | None) -> Summarizer:
        if self._factory is not None:
            return self._factory(policy)
        # The mock's context limit is the window; a live endpoint knows its own, and one client
        # per LLM setting keeps one failure budget for the whole run.
        key = (policy.llm.key(), window if policy.llm.provider == "mock" else None)
        cached = self._summarizers.get(key)
        if cached is None:
            from core.llm.factory import make_summarizer

            cached = make_summarizer(policy.llm, context_limit_tokens=window)
            self._summarizers[key] = cached
        return cached

    def _compact(
        self,
        items: Sequence[Item],
        policy: Policy,
        window: int,
        auto: bool,
        now_ms: int,
    ) -> CompactionOutline | CompactionError:
        """Run :func:`core.algorithms.compact.compact_outline` on a context (cached by its exact input).

        The key is everything the outcome depends on: the policy's estimator, pruning, split,
        compaction and LLM settings, the window, whether it is automatic, the summariser
        factory, and each item's message id, tokens and session index, plus the text of items
        that are not session messages (summaries and continuations written by earlier
        compactions) and of session messages the run sent changed (a truncated output: two
        truncation settings can cut it to as many tokens with other words, or name another
        spill folder). It is a tuple of values the session already holds (ids, counts, texts),
        hashed without copying them; at most :data:`_MAX_CACHED_COMPACTIONS` results are kept
        (least recently used first out), each a :class:`core.algorithms.compact.CompactionOutline`
        (the summary, the output messages, ids and prune reasons: no request text).
        """
        messages = [item.message for item in items]
        tokens = [item.tokens for item in items]
        key = (
            policy.key(include={"estimator", "pruning", "split", "compaction", "llm"}),
            window,
            auto,
            id(self._factory),
            tuple([message.id for message in messages]),
            tuple(tokens),
            tuple([item.index for item in items]),
            tuple([item.message.text for item in items if item.index < 0]),
            _changed_texts(items, self.session.messages),
        )
        cached = self._compactions.get(key)
        if cached is not None:
            self._compactions.move_to_end(key)
            return cached
        from core.algorithms.compact import CompactionError, EntryCache, compact_outline
        from core.llm.summary_templates import forget_transcripts

        if self._entry_cache is None:
            self._entry_cache = EntryCache()
        summarizer = self._summarizer(policy, window)
        coroutine = compact_outline(
            messages,
            policy,
            summarizer,
            window=window,
            counter=get_counter(policy.estimator),
            auto=auto,
            token_counts=tokens,
            now_ms=now_ms,
            entry_cache=self._entry_cache,
        )
        outcome: CompactionOutline | CompactionError
        try:
            if getattr(summarizer, "needs_event_loop", True):
                outcome = _run_coroutine(coroutine)
            else:  # the offline mock: no event loop made, nor asyncio imported
                outcome = _run_stepped(coroutine)
        except CompactionError as exc:
            # Kept for its message and flags; not its traceback, whose frames hold the head and
            # the last summary request (megabytes for a long head), nor the error behind it.
            outcome = exc.with_traceback(None)
            outcome.__cause__ = outcome.__context__ = None
        finally:
            forget_transcripts()  # (the request's head, megabytes, is read by now)
        self._compactions[key] = outcome
        if len(self._compactions) > _MAX_CACHED_COMPACTIONS:
            self._compactions.popitem(last=False)
        return outcome

    def _futile(self, stuck: Stuck, appended: Sequence[Item], policy: Policy) -> bool:
        """An attempt now would end as ``stuck`` did (:func:`core.replay.stuck.futile`)."""
        return futile(stuck, appended, policy, self._calls.linked_back())

    def recording_checks(self) -> dict[int, int]:
        """The check on the recording before each recorded automatic compaction, by its
        recorded index: what the recording agent's preset measures there when the run makes
        exactly the recording's compactions (the ``high`` of :meth:`inferred_threshold`'s
        stretches; :data:`core.insights.named_figures.RECORDING_CHECK`)."""
        with self._lock, gc_paused():
            spans = self._native_spans(native_policy(self.session))
        if spans is None:
            return {}
        return {
            span.recorded_index: span.high
            for span in spans
            if span.recorded_index is not None and span.high is not None
        }


class MessageTokens:
    """Tokens of every message of a session under an estimator, counted once per estimator
    (what the :class:`Replayer` and its :class:`~core.replay.truncation.Truncations` share: an
    object of its own rather than the replayer's bound method, which, kept by the truncations
    the replayer keeps, would make a reference cycle of the replayer)."""

    __slots__ = ("_cached", "_session", "outputs")

    def __init__(self, session: Session) -> None:
        self._session = session
        self._cached: dict[str, list[int]] = {}
        self.outputs: OutputSizes | None = None
        """The session's tool outputs, listed by the first count (which reads them all)."""

    def __call__(self, estimator: str) -> list[int]:
        """Tokens of every message under ``estimator``."""
        cached = self._cached.get(estimator)
        if cached is None:
            messages = self._session.messages
            outputs: OutputSizes | None = {} if self.outputs is None else None
            counter = get_counter(estimator)
            cached = self._cached[estimator] = counter.messages_tokens(messages, outputs)
            if outputs is not None:
                self.outputs = outputs
        return cached


_loops = threading.local()


def _run_coroutine(coroutine: Coroutine[Any, Any, CompactionOutline]) -> CompactionOutline:
    """Run ``coroutine`` to completion, also from a thread that already runs an event loop.

    A private loop per thread is kept and reused (``asyncio.run`` would install a SIGINT handler
    on the main thread each time, and its repr of the task formats every message of the head).
    """
    import asyncio  # only when a compaction runs: a replay without one starts faster

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # run outside the except block: its RuntimeError is no cause of anything
        loop = getattr(_loops, "loop", None)
        if loop is None or loop.is_closed():
            # made in an empty context: the loop's own reader keeps the context it was made in
            # for as long as the thread lives (a TUI worker's: its screen and its session)
            loop = contextvars.Context().run(asyncio.new_event_loop)
            _loops.loop = loop
        return loop.run_until_complete(coroutine)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = _run_coroutine(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="ctxscope-compaction")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    result: CompactionOutline = box["value"]
    return result


def _run_stepped(coroutine: Coroutine[Any, Any, CompactionOutline]) -> CompactionOutline:
    """Run ``coroutine`` to completion by hand, for a summariser that awaits nothing an event
    loop must complete (``needs_event_loop`` of :class:`core.llm.protocol.Summarizer`): a bare yield
    (``asyncio.sleep(0)``, a cancellation point) resumes at once, as a loop would resume it."""
    while True:
        try:
            awaited = coroutine.send(None)
        except StopIteration as done:
            result: CompactionOutline = done.value
            return result
        if awaited is not None:
            coroutine.close()
            raise RuntimeError(
                f"the summariser awaited {type(awaited).__name__} without an event loop "
                "(it says needs_event_loop = False)"
            )


def replay(
    session: Session,
    policy: Policy,
    *,
    summarizer: Summarizer | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> ReplayResult:
    """Replay ``session`` under ``policy`` once (see :mod:`core.replay`).

    ``summarizer`` overrides the policy's LLM for every compaction.
    """
    factory = (lambda _policy: summarizer) if summarizer is not None else None
    return Replayer(session, summarizer_factory=factory).run(
        policy, progress=progress, cancel=cancel
    )


def _changed_texts(
    items: Sequence[Item], session: Sequence[Message]
) -> tuple[tuple[str, str], ...]:
    """The text and output of each session message ``items`` hold a changed copy of (a
    truncated tool output), for a key that tells two such copies apart."""
    return tuple(
        [
            (message.text, result.output if (result := message.tool_result) else "")
            for item in items
            if item.index >= 0 and (message := item.message) is not session[item.index]
        ]
    )
