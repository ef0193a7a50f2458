"""The recorded side: what the session itself says happened, whatever the policy.

* :class:`RecordedCompactions`: each compaction the recording holds — where it happened, the
  summary messages it owns, the first message it kept, the call it came before, and whether the
  recording agent's own threshold can explain it (else it was the user's ``/compact``).
* :class:`RecordedSide`: in one estimator's tokens, the recording's own context at every call
  (``E_rec``), its baseline figures (recorded, else projected), the overhead the messages do not
  show and the ratio between the provider's tokens and the estimator's. The simulation adds the
  policy's difference to these (``baseline + ratio x (E_sim - E_rec)``: :meth:`RecordedSide.figures`).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate, compress, repeat
from operator import add, and_, gt, mul
from typing import NamedTuple, cast

from core.algorithms.overflow import crosses
from core.model.session import CompactionEvent, Message, Provenance, Role, Session
from core.model.tokens import TokenCounter
from core.policy import Policy
from core.replay.calls import Calls, narrowest
from core.replay.policies import NATIVE_PRESET, native_policy, policy_threshold


def _join(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second[0].upper() + second[1:]


_MIN_RATIO = 0.25
_MAX_RATIO = 4.0

BaseItems = tuple[tuple[int, int], ...]
"""A recorded context right after a compaction: ``(message index, tokens)`` per message, where a
negative index ``-1 - k`` stands for the summary of recorded compaction ``k`` (no message holds it)."""


class RecordedCompaction:
    """One compaction of ``Session.compactions``, placed in the session."""

    __slots__ = (
        "before_recording",
        "evidence",
        "first_kept",
        "index",
        "inferred_manual",
        "kind",
        "m_c",
        "owned",
        "owned_end",
        "recorded_call",
        "rewound",
        "summary_message",
        "tokens_before",
        "trigger",
    )

    def __init__(self, index: int, m_c: int, trigger: str) -> None:
        self.index = index
        """Index into ``Session.compactions``."""
        self.m_c = m_c
        """The message it happened before."""
        self.trigger = trigger
        self.first_kept: int | None = None
        """The first message it kept verbatim (None: it kept none)."""
        self.owned: list[int] = []
        """The messages it wrote (its summary and the meta messages before it)."""
        self.owned_end = m_c
        """The message after the ones it owns (where the walk resumes)."""
        self.summary_message: Message | None = None
        """Its summary, when no message of the session holds it."""
        self.inferred_manual = False
        """Not the agent's own decision (the user's ``/compact``, or a hook's): every policy
        makes it where it happened."""
        self.recorded_call: int | None = None
        """The call it came before (or, after a failed call, that call)."""
        self.kind = trigger
        """Why it ran: ``auto``, ``manual``, ``overflow``, ``hook`` or ``unknown`` — the recorded
        trigger, or, for one the recording does not label, what the agent's threshold says."""
        self.evidence = ""
        """What :attr:`kind` rests on, in one sentence."""
        self.tokens_before: int | None = None
        """The context the agent measured before it, when recorded."""
        self.rewound = False
        """The user rewound past it: it never took effect (not applied, not evidence)."""
        self.before_recording = False
        """No model call of the file comes before it: the file starts at this compaction (its
        history is not in the file), so there is nothing to replay before it."""

    def consistent_with(self, figure: int | None) -> bool:
        """The figure a check measured before this compaction is of the size the agent recorded
        for it (at least half): else the file does not hold the context the agent had (a
        recording that starts mid-session, a transcript whose usage is not the agent's), and the
        compaction tells nothing about the agent's threshold."""
        recorded = self.tokens_before
        return not recorded or figure is None or figure * 2 >= recorded

    @property
    def automatic(self) -> bool:
        """The agent's own decision: its threshold (``auto``) or a refused request
        (``overflow``); these are what a replay of the agent must reproduce."""
        return self.kind in ("auto", "overflow") and not self.rewound


class RecordedCompactions:
    """The recorded compactions of a session and the messages they own."""

    def __init__(self, session: Session, calls: Calls) -> None:
        self.calls = calls
        n = calls.n
        self._ids: dict[str, int] | None = None
        self.owned = bytearray(n)
        """Messages a recorded compaction wrote (1, else 0: one byte a message)."""
        self.all: list[RecordedCompaction] = []
        self.at: dict[int, list[RecordedCompaction]] = {}
        """The recorded compactions by the message they happened before."""
        for c_index, event in enumerate(session.compactions):
            rc = self._place(c_index, event)
            for k in rc.owned:
                self.owned[k] = True
            self.all.append(rc)
            self.at.setdefault(rc.m_c, []).append(rc)
        self._infer_manual()
        self.walked = bytearray(map(gt, calls.main, self.owned))  # (main and not owned, in C)
        """Messages a walk adds to the context: in the main conversation and not owned by a
        recorded compaction, 1, else 0 (a byte a message)."""
        self._backwards: int | None = None
        self._automatic_by_call: dict[int, list[RecordedCompaction]] | None = None
        """The automatic compactions by the call they came before, in :attr:`all`'s order
        (:meth:`here`; made when first asked, after the placement)."""

    @property
    def session(self) -> Session:
        """The session (held weakly, by :attr:`calls`: see :attr:`Calls.session`)."""
        return self.calls.session

    def _place(self, c_index: int, event: CompactionEvent) -> RecordedCompaction:
        messages = self.session.messages
        n = self.calls.n
        rc = RecordedCompaction(c_index, max(0, min(event.message_index, n)), event.trigger)
        rc.tokens_before = event.tokens_before
        # What the compaction wrote: its summary, and the messages recorded with it (the kept
        # copies and re-injected context of Codex's replacement history, the files Claude Code
        # re-attaches) up to the next message of the conversation itself. They are the context
        # after it, and no part of the figure the agent checked before it.
        owned: list[int] = []
        j = rc.m_c
        while j < n and (messages[j].meta or messages[j].summary):
            owned.append(j)
            j += 1
        if not any(messages[k].summary for k in owned):
            owned = []
        rc.owned = owned
        rc.owned_end = owned[-1] + 1 if owned else rc.m_c
        if not owned and event.summary:
            rc.summary_message = Message(
                index=rc.m_c,
                id=f"recorded-summary:{c_index}",
                role=Role.USER,
                text=event.summary,
                summary=True,
            )
        if event.first_kept_id is not None:
            kept = self.ids().get(event.first_kept_id)
            if kept is not None and kept < rc.m_c:
                rc.first_kept = kept
        rc.recorded_call = self._recorded_call(rc)
        return rc

    def ids(self) -> dict[str, int]:
        """The first message of each id (made when a compaction names the first it kept)."""
        if self._ids is None:
            ids: dict[str, int] = {}
            for i, message in enumerate(self.session.messages):
                ids.setdefault(message.id, i)
            self._ids = ids
        return self._ids

    def _recorded_call(self, rc: RecordedCompaction) -> int | None:
        """The call a compaction came before (or, after a failed call, that call)."""
        call_of = self.calls.call_of
        prev_call = next((call_of[k] for k in range(rc.m_c - 1, -1, -1) if call_of[k] >= 0), None)
        if prev_call is not None and self.calls.fixed_overflow[prev_call] is not None:
            return prev_call
        if rc.owned_end > self.calls.n:
            return None
        return self.calls.next_call_or_none(rc.owned_end)

    def _infer_manual(self) -> None:
        """Label each recorded compaction with why it ran (:attr:`RecordedCompaction.kind`).

        A recorded trigger is taken as it is. One the recording does not label (pi writes none) is
        automatic when the context before it (``tokens_before``, else the last recorded figure
        after its reply) crosses the threshold of the recording agent's preset for that window,
        and the user's ``/compact`` when it does not. ``manual`` and ``hook`` ones are actions
        every policy repeats where they happened.
        """
        native = NATIVE_PRESET.get(self.session.format)
        policy = native_policy(self.session) if native is not None else None
        for rc, event in zip(self.all, self.session.compactions, strict=True):
            rc.evidence = event.trigger_evidence or (
                f"recorded as {event.trigger}" if event.trigger != "unknown" else ""
            )
            rc.before_recording = not any(
                self.calls.call_of[j] >= 0 for j in range(min(rc.m_c, self.calls.n))
            )
            rc.rewound = event.rewound
            if event.trigger == "unknown" and policy is not None and not rc.rewound:
                self._classify(rc, event, policy)
            rc.inferred_manual = rc.kind in ("manual", "hook") or rc.before_recording or rc.rewound

    def _classify(self, rc: RecordedCompaction, event: CompactionEvent, policy: Policy) -> None:
        """An unlabelled compaction: automatic when the context before it crossed the agent's
        threshold, else the user's."""
        limit = policy_threshold(self.session, policy)
        before = event.tokens_before or self._last_figure_before(rc.m_c)
        if not before or limit is None:
            return
        where = f"{before:,} tokens before it"
        if crosses(before, limit, policy):
            rc.kind = "auto"
            rc.evidence = _join(
                rc.evidence, f"{where} cross {policy.name}'s threshold of {limit:,}"
            )
        else:
            rc.kind = "manual"
            rc.evidence = _join(
                rc.evidence,
                f"{where} are below {policy.name}'s threshold of {limit:,}: the agent does not "
                "compact there by itself, so the user did",
            )

    def _last_figure_before(self, message_index: int) -> int | None:
        """The last recorded context (after its reply) of a call before ``message_index``."""
        call_of = self.calls.call_of
        after = self.calls.usage_after
        return next(
            (
                after[call_of[k]]
                for k in range(message_index - 1, -1, -1)
                if call_of[k] >= 0 and after[call_of[k]]
            ),
            None,
        )

    def here(self, c: int, kind: str = "auto") -> RecordedCompaction | None:
        """The automatic recorded compaction of ``kind`` (``auto``: the threshold's, just before
        call ``c``; ``overflow``: the recovery after call ``c`` was refused): the first of
        :attr:`all` there, found among the automatic ones of call ``c`` (a walk following the
        recording asks at every call it checks: not a scan of them all each time)."""
        by_call = self._automatic_by_call
        if by_call is None:
            by_call = self._automatic_by_call = {}
            for rc in self.all:
                if rc.recorded_call is not None and rc.automatic:
                    by_call.setdefault(rc.recorded_call, []).append(rc)
        for rc in by_call.get(c, ()):
            if rc.kind == kind or rc.kind == "unknown":
                return rc
        return None

    @property
    def carry_summaries(self) -> bool:
        """Some recorded compaction carries its summary text."""
        return any(rc.owned or rc.summary_message for rc in self.all)

    def backwards_without_compaction(self) -> int:
        """Recorded figures that fell with no compaction in between (counted once)."""
        if self._backwards is None:
            count = 0
            previous: int | None = None
            rc_calls = {rc.recorded_call for rc in self.all}
            for c, figure in enumerate(self.calls.usage_context):
                if figure is None:
                    continue
                if previous is not None and figure < previous and c not in rc_calls:
                    count += 1
                previous = figure
            self._backwards = count
        return self._backwards


class CallFigures(NamedTuple):
    """A call as the policy sees it: each figure is the recording's plus ``ratio x delta``."""

    delta: int
    """Simulated minus recorded context, in estimated tokens (0: the policy changed nothing)."""
    figure: int
    """The context in the recorded convention (before or after the reply)."""
    prompt: int
    """The prompt sent (what must fit the window)."""
    after_reply: int
    """The context after the reply (what the next check starts from)."""


class RecordedSide:
    """The recording's own context at every call, in one estimator's tokens (policy-independent)."""

    __slots__ = (
        "_lane_columns",
        "baseline",
        "baseline_after",
        "baseline_prompt",
        "baseline_prov",
        "bases",
        "e_rec_after",
        "e_rec_cov",
        "overhead",
        "overhead_known",
        "ratio",
    )

    def __init__(self) -> None:
        self.e_rec_cov: array[int] = array("q")
        """Estimated recorded context at each call, on the side of the reply its figure is on
        (this and :attr:`e_rec_after` are array columns: no int object per call)."""
        self.ratio = 1.0
        """Recorded tokens per estimated token: the median over recorded calls of
        ``(recorded - overhead) / estimated recorded context`` (1.0 without usage)."""
        self.baseline: list[int] = []
        self.baseline_prompt: list[int] | array[int] = []
        self.baseline_after: list[int] = []
        """The recording's context after each call's reply (what agents check their threshold on)."""
        self.e_rec_after: array[int] = array("q")
        """Estimated recorded context including each call's reply."""
        self.baseline_prov: list[Provenance] = []
        self.bases: dict[int, tuple[BaseItems, int]] = {}
        """Recorded compaction index -> (context items, walk start)."""
        self.overhead = 0
        self.overhead_known = False
        self._lane_columns: tuple[array[int], array[int]] | tuple[()] | None = None
        """(made when first asked for; empty when a figure does not fit)"""

    def lane_columns(self) -> tuple[array[int], array[int]] | None:
        """:attr:`baseline` and :attr:`baseline_after` as unsigned 4-byte arrays, made when first
        asked for (a run following an earlier one adds to them a column at a time:
        :mod:`core.replay.lanes`); None when a figure does not fit (the lists are kept: a run
        following the recording shares their int objects)."""
        if self._lane_columns is None:
            try:
                self._lane_columns = (array("I", self.baseline), array("I", self.baseline_after))
            except OverflowError:
                self._lane_columns = ()
        return self._lane_columns or None

    def figures(self, c: int, e_sim_cov: int) -> CallFigures:
        """Call ``c`` as the policy sees it, from its simulated context ``e_sim_cov`` (estimated
        tokens, on the side of the reply the recorded figure is measured on)."""
        return self.figures_of_delta(c, e_sim_cov - self.e_rec_cov[c])

    def figures_of_delta(self, c: int, delta: int) -> CallFigures:
        """Call ``c`` as the policy sees it, from the difference ``delta`` between its simulated
        and recorded contexts (a trace's :attr:`~core.replay.state.Trace.deltas`)."""
        scaled = round(delta * self.ratio)
        return CallFigures(
            delta,
            max(0, self.baseline[c] + scaled),
            max(0, self.baseline_prompt[c] + scaled),
            max(0, self.baseline_after[c] + scaled),
        )


def measure_recorded_side(
    recorded: RecordedCompactions, tokens: list[int], counter: TokenCounter
) -> RecordedSide:
    """The :class:`RecordedSide` of a session in the tokens of ``counter`` (``tokens``: every
    message's count under it)."""
    side = RecordedSide()
    # (the per-call columns are lists as they are filled, an int appended without parsing a
    # format; each becomes an array once made: narrowest)
    e_cov: list[int] = []
    changed_before = _recorded_contexts(side, e_cov, recorded, tokens, counter)
    calls = recorded.calls
    # Overhead: the first recorded figure minus the estimated messages before it.
    for c, figure in enumerate(calls.usage_context):
        if figure is not None:
            side.overhead = max(0, figure - e_cov[c])
            side.overhead_known = True
            break
    else:
        # No call recorded its prompt (Copilot CLI): the loader's measured size of what the
        # messages do not show (the tool definitions), when the file gives it.
        measured = calls.session.metadata.get("context_overhead")
        if isinstance(measured, int) and measured > 0:
            side.overhead = measured
            side.overhead_known = True
    e_after: list[int] = []
    _baselines(side, e_cov, e_after, calls, tokens, changed_before, counter.provenance)
    overhead = side.overhead
    ratios = sorted(
        (figure or 0) / cov - overhead / cov
        for figure, cov in zip(calls.usage_context, e_cov, strict=False)  # (one per call)
        if figure is not None and cov > 0
    )
    if ratios:
        side.ratio = min(_MAX_RATIO, max(_MIN_RATIO, ratios[len(ratios) // 2]))
    # (read only from here on: 4 bytes a call where the figures fit, as they do but in a
    # session of more than 2**31 tokens)
    side.e_rec_cov = cast("array[int]", narrowest(e_cov))
    side.e_rec_after = cast("array[int]", narrowest(e_after))
    side.baseline_prompt = narrowest(side.baseline_prompt)
    return side


def _recorded_contexts(
    side: RecordedSide,
    e_cov: list[int],
    recorded: RecordedCompactions,
    tok: list[int],
    counter: TokenCounter,
) -> bytearray:
    """Fill ``e_cov`` (the estimated recorded context at each call) and ``side.bases`` walking
    the recorded context; per call, whether a recorded compaction came since the previous
    call (1, else 0)."""
    calls = recorded.calls
    is_call, walked = calls.is_call, recorded.walked
    # per call: its reply is in its recorded context (measured after it, in the main conversation)
    reply_in = bytes(map(and_, calls.after_reply, compress(calls.main, is_call)))
    base_sum = 0
    walk = 0
    walk_start = 0
    n = calls.n
    in_ctx = bytearray(n)  # (1: the message is in the recorded context; a byte a message)
    # no message before this one is in the recorded context (before the first compaction any
    # may be; after one, only what it kept and what came after it)
    first_in_context = 0
    changed_before = bytearray(len(calls))
    changed = False
    start = 0
    # The messages between two places where the recording compacted, each stretch by running
    # sums in C (no step per message); a stretch's compactions come before its first message.
    for stop in [*sorted(at for at in recorded.at if 0 <= at < n), n]:
        first_walked = min(max(start, walk_start), stop)
        # the tokens each message adds to the walk (none before the walk's start), summed up:
        # sums[k] is the walk before message start + k
        weights = bytes(first_walked - start) + walked[first_walked:stop]
        stretch_tok = tok[start:stop]
        sums = list(accumulate(map(mul, stretch_tok, weights), initial=walk))
        called = is_call[start:stop]
        c0 = len(e_cov)
        e_cov += map(
            add,
            map(add, repeat(base_sum), compress(sums, called)),
            map(mul, compress(stretch_tok, called), reply_in[c0 : c0 + called.count(1)]),
        )
        if changed and len(e_cov) > c0:
            changed_before[c0] = 1
            changed = False
        walk = sums[-1]
        if first_walked < stop:
            # (flags of 0 and 1: the OR of their bytes read as ints is each message's OR)
            in_ctx[first_walked:stop] = (
                int.from_bytes(in_ctx[first_walked:stop], "little")
                | int.from_bytes(walked[first_walked:stop], "little")
            ).to_bytes(stop - first_walked, "little")
        if stop == n:
            break
        for rc in recorded.at[stop]:
            if rc.rewound:
                continue  # the conversation went on without it
            items = _context_after(rc, in_ctx, tok, counter, first_in_context)
            first_in_context = rc.m_c if rc.first_kept is None else rc.first_kept
            base_sum = sum(t for _j, t in items)
            walk = 0
            walk_start = rc.owned_end
            side.bases[rc.index] = (items, walk_start)
            changed = True
        start = stop
    return changed_before


def _context_after(
    rc: RecordedCompaction,
    in_ctx: bytearray | list[bool],
    tok: list[int],
    counter: TokenCounter,
    first_in_context: int = 0,
) -> BaseItems:
    """The recorded context right after ``rc`` (its summary, then what it kept); updates
    ``in_ctx``, the messages in the recorded context (no message before ``first_in_context``
    is in it: the messages from there to ``rc`` leave it, each compaction clearing only what
    came since the one before and what that one kept, not the whole session before it)."""
    kept: list[tuple[int, int]] = []
    m_c = rc.m_c
    if rc.first_kept is not None:
        kept = [
            (j, tok[j]) for j in compress(range(rc.first_kept, m_c), in_ctx[rc.first_kept : m_c])
        ]
    if first_in_context < m_c:
        in_ctx[first_in_context:m_c] = repeat(False, m_c - first_in_context)
    summary_items: list[tuple[int, int]] = [(j, tok[j]) for j in rc.owned]
    if rc.summary_message is not None:
        summary_items.append((-1 - rc.index, counter.count(rc.summary_message.text)))
    for j, _t in kept:
        in_ctx[j] = True
    for j in rc.owned:
        in_ctx[j] = True
    return tuple(summary_items + kept)


def _baselines(
    side: RecordedSide,
    e_cov: list[int],
    e_after: list[int],
    calls: Calls,
    tok: Sequence[int],
    changed_before: bytearray,
    estimated: Provenance,
) -> None:
    """Baselines: recorded, else projected from the last recorded figure, else estimated;
    ``e_after``: filled with the estimated recorded context after each call's reply."""
    # (what each call reads, bound once: this runs once per call of a 100 MB session)
    main, after_reply, usage_context, usage_prompt, usage_after = (
        calls.main,
        calls.after_reply,
        calls.usage_context,
        calls.usage_prompt,
        calls.usage_after,
    )
    # the context after each call's reply: the main agent's reply added where the figure is
    # measured before it
    at = calls.calls
    add_after = e_after.append
    for cov, i, after in zip(e_cov, at, after_reply, strict=True):
        add_after(cov if after or not main[i] else cov + tok[i])
    recorded = Provenance.RECORDED
    if None not in usage_context and None not in usage_prompt and all(usage_after):
        # every call recorded its figures (as nearly every session's do): the loop below takes
        # each as it is (tests/unit/test_replay_recorded_side.py)
        side.baseline.extend(cast("list[int]", usage_context))
        side.baseline_prompt.extend(cast("list[int]", usage_prompt))
        side.baseline_after.extend(cast("list[int]", usage_after))
        side.baseline_prov += repeat(recorded, len(usage_context))
        return
    add_baseline = side.baseline.append
    add_prompt, add_baseline_after = side.baseline_prompt.append, side.baseline_after.append
    add_prov, overhead = side.baseline_prov.append, side.overhead
    last: tuple[int, int] | None = None
    for c, i in enumerate(at):
        if changed_before[c]:
            last = None
        figure = usage_context[c]
        if figure is not None:
            prompt = usage_prompt[c]
            add_baseline(figure)
            add_prompt(prompt if prompt is not None else figure)
            add_baseline_after(usage_after[c] or figure)
            add_prov(recorded)
            last = (figure, e_cov[c])
            continue
        cov = e_cov[c]
        reply = tok[i] if main[i] else 0
        after = after_reply[c]
        value = max(0, last[0] + cov - last[1]) if last is not None else overhead + cov
        add_baseline(value)
        add_prompt(max(0, value - reply) if after else value)
        add_baseline_after(value if after else value + reply)
        add_prov(estimated)


def placed(session: Session) -> tuple[Calls, RecordedCompactions]:
    """``session``'s calls and recorded compactions, placed once per session and shared by the
    replay and the reports that walk the recording (each placing takes a third of a second on
    100 MB); placed again when the session has grown (a live file) or is another object (a
    copy). Both are read-only once placed."""
    size = (id(session), len(session.messages), len(session.compactions))
    known = session.derived.get("placed")
    if known is not None and known[0] == size:
        calls: Calls = known[1]
        recorded: RecordedCompactions = known[2]
        return calls, recorded
    calls = Calls(session)
    recorded = RecordedCompactions(session, calls)
    session.derived["placed"] = (size, calls, recorded)
    return calls, recorded


def turn_count(session: Session) -> int:
    """The real user turns of ``session`` (its messages that are :attr:`Message.is_turn_start`),
    counted from the column the placing of the calls already read (one flag per message)
    rather than by asking each of a 100 MB session's 100,000 messages again. The one count of
    turns: ``analyze``'s session facts and the fleet's rows both read it."""
    return placed(session)[0].turn_start.count(1)
