"""The compaction screen: run a compaction now, or look at the ones the replay made.

**Run now** (``r``, and on opening): the context the policy had at the selected message — its
last summary, the tail it kept, everything since, and the message itself, before anything the
policy did there (:meth:`core.replay.Replayer.compaction_at`) — is compacted in an async worker
with the policy's LLM: the offline mock, or the live OpenAI-compatible client when
``policy.llm.provider == "openai"``. The summary appears as it streams; ``x`` or Esc cancels a
running request. The screen then shows the tokens before → after (the replay's figure of that
context, then less what was removed; the messages' own estimate below), the head/tail split
(counts, message runs, tail tokens against the budget), what pruning replaced and why, the request
that was sent (collapsed) and what the model sees next. ``r`` on a replay compaction runs it again
on what the replay had right before it.

**Replay** (``[`` / ``]``): steps through the compactions of the :class:`~core.replay.ReplayResult`
(events of kind ``compact`` and ``recorded-compaction``), each with its trigger, head, tail, pruned
messages and summary, and — from its :class:`~core.insights.compaction_records.CompactionReport` — why it ran,
what it cost (:func:`core.insights.cost.compaction_cost_label`) and what its summary forgot (recall per kind
of fact, the dropped facts with their messages; a Codex remote compaction's summary is encrypted,
and the view says so). A compaction run now shows what its own summary kept of its head (worked out
in a thread once it is done). The reports come from the session screen (:class:`tui.insights.Insights`),
or are worked out here in a thread worker (group ``compaction-reports``) when it has none yet.

Enter jumps to the message in the session screen (posts :class:`~tui.messages.JumpToMessage`) and
closes this screen. Nothing here decides anything: figures come from the compaction result or the
replay events (and, for a recorded compaction, its recorded trigger and figures; :mod:`tui.figures`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.widgets import Collapsible, Label, Markdown, Static
from textual.worker import Worker, WorkerState

from core.algorithms.compact import CompactionError, CompactionResult
from core.insights.forgotten_facts import Forgotten
from core.llm.factory import make_summarizer
from core.llm.protocol import LLMError, Summarizer
from core.model.session import CompactionEvent, Message, Role, Session
from core.model.tokens import get_counter
from core.model.write_numbers import counted
from core.policy import Policy
from core.replay import CompactionAt, Replayer
from tui.compaction_stops import CompactionStop, compaction_stops
from tui.figures import (
    call_label,
    event_trigger,
    index_runs,
    not_replayed_reason,
    recorded_compaction_figures,
    recorded_trigger,
)
from tui.insights import Insights, compute_insights
from tui.messages import JumpToMessage
from tui.screens.compaction_text import (
    bar,
    cut_of,
    event_figures_note,
    forgotten_now,
    origin,
    preview,
)
from tui.widgets.footer import KeysFooter
from tui.widgets.forgotten_view import ForgottenView
from tui.widgets.message_list import role_label

if TYPE_CHECKING:
    from core.replay import ReplayEvent, ReplayResult

MAX_NEXT_ROWS = 300
"""Rows of "what the model sees next" drawn at most (the rest are counted)."""

MAX_REQUEST_CHARS = 6_000
"""Characters of each request message shown (the rest are counted)."""


class _ReportsReady(TextualMessage):
    """The compaction reports, worked out by the screen's own worker."""

    def __init__(self, insights: Insights) -> None:
        super().__init__()
        self.insights = insights


class _SummaryDelta(TextualMessage):
    """A piece of the summary arrived (posted from the summariser's callback)."""

    def __init__(self, run: int, piece: str) -> None:
        super().__init__()
        self.run = run
        self.piece = piece


class CompactionScreen(Screen[None]):
    """Run compaction now on a selected turn with the mock or live LLM; head/tail split, pruned,
    request, summary as it streams, tokens before -> after, what the model sees next; step through
    the replay's compactions with [ and ]."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "rerun", "Run now", id="compaction.run-now"),
        Binding("left_square_bracket", "step(-1)", "Prev", key_display="[", id="compaction.prev"),
        Binding("right_square_bracket", "step(1)", "Next", key_display="]", id="compaction.next"),
        Binding("enter", "jump", "Go to msg", id="compaction.jump"),
        Binding("x", "cancel", "Cancel", id="compaction.cancel"),
        Binding("escape", "back", "Back", id="compaction.back"),
    ]

    SHOW_TIMINGS: ClassVar[bool] = True
    """Show how long the compaction took (screenshots turn it off: it varies run to run)."""

    CSS_PATH = Path(__file__).with_name("compaction.tcss")
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (Screen declares it)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (Screen declares it)

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "compaction-screen--before",
        "compaction-screen--after",
        "compaction-screen--muted",
        "compaction-screen--head",
        "compaction-screen--tail",
        "compaction-screen--summary",
    }

    def __init__(
        self,
        session: Session,
        policy: Policy,
        message_index: int,
        result: ReplayResult | None = None,
        *,
        summarizer: Summarizer | None = None,
        replayer: Replayer | None = None,
        insights: Insights | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.policy = policy
        self.message_index = max(0, min(message_index, len(session.messages) - 1))
        """The message compaction runs at (the selected one)."""
        self.through = True
        """The run includes :attr:`message_index` itself (False: right before it, as a replay
        compaction there)."""
        self.result = result
        self._summarizer = summarizer
        self.replayer = replayer if replayer is not None else Replayer(session)
        """Where the context at a message comes from (the session screen's, whose runs it
        shares)."""
        self.insights = insights if insights is not None and insights.result is result else None
        """Why each compaction ran, what it forgot and cost (None: being worked out)."""
        self.events: list[CompactionStop] = (
            compaction_stops(session, result) if result is not None else []
        )
        """The compactions ``[`` and ``]`` step through, in order: the replay's, and the recorded
        ones it did not apply (the session screen's list draws both)."""
        self.position: int | None = None
        """Index into :attr:`events` being shown; None while showing a compaction run now."""
        self.compaction: CompactionResult | None = None
        """The last compaction run now."""
        self.run_now: CompactionAt | None = None
        """The last compaction run now, with the context it ran on and its figures."""
        self.run_now_forgotten: Forgotten | None = None
        """What the summary of the compaction run now kept of its head."""
        self.status = "idle"
        """``idle``, ``running``, ``done``, ``cancelled``, ``failed`` or ``nothing``."""
        self.summary_text = ""
        """The summary shown (streamed in as it arrives)."""
        self._run_id = 0
        self._streaming_run: int | None = None
        self._summary_dirty = False
        self._summary_shown: str | None = None
        self._summary_lock = asyncio.Lock()
        self._worker: Worker[None] | None = None

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="cs-header"):
            yield Label("Compaction", id="cs-title")
            yield Label("", id="cs-mode")
            yield Label("", id="cs-status")
        with Horizontal(id="cs-body"):
            with VerticalScroll(id="cs-left"):
                yield Label("Tokens", classes="cs-heading")
                yield Static("", id="cs-tokens")
                yield Label("Head / tail", classes="cs-heading")
                yield Static("", id="cs-split")
                yield Label("Pruned", classes="cs-heading")
                yield Static("", id="cs-pruned")
                with Collapsible(title="Request", collapsed=True, id="cs-request"):
                    yield Static("", id="cs-request-text", markup=False)
            with Vertical(id="cs-right"):
                yield Label("Summary", classes="cs-heading", id="cs-summary-heading")
                with VerticalScroll(id="cs-summary-box"):
                    yield Markdown("", id="cs-summary")
                yield Label("Why it ran · what it cost · what it forgot", classes="cs-heading")
                yield ForgottenView(id="cs-forgotten")
                yield Label("What the model sees next", classes="cs-heading", id="cs-next-heading")
                with VerticalScroll(id="cs-next-box"):
                    yield Static("", id="cs-next")
        yield KeysFooter()

    def on_mount(self) -> None:
        if self.result is not None and (self.insights is None or self.insights.reports is None):
            self._work_out_reports(self.session, self.result, self.insights)
        self.action_run()

    @work(
        thread=True,
        exclusive=True,
        group="compaction-reports",
        exit_on_error=False,
        description="Why each compaction ran, what it forgot and cost",
    )
    def _work_out_reports(
        self, session: Session, result: ReplayResult, previous: Insights | None
    ) -> None:
        self.post_message(_ReportsReady(compute_insights(session, result, previous)))

    def on__reports_ready(self, event: _ReportsReady) -> None:
        self.insights = event.insights
        self._show_report()

    def _show_report(self) -> None:
        """The report of the compaction shown (a note while running one now)."""
        view = self.query_one("#cs-forgotten", ForgottenView)
        view.set_class(self.position is None and self.run_now_forgotten is None, "-note")
        if self.position is None and self.run_now_forgotten is not None:
            view.show_forgotten(self.run_now_forgotten, "the compaction run now")
            return
        if self.position is None:
            view.show(
                None,
                "[ ] steps to the replay's compactions: why each ran, what it cost and what "
                "its summary forgot.",
            )
            return
        stop = self.events[self.position]
        insights = self.insights
        if insights is None or insights.reports is None:
            view.show(None, "working it out…")
            return
        report = (
            insights.report_for(stop.event_id, stop.event)
            if stop.event is not None
            else insights.report_for_recorded(stop.recorded_index)
        )
        view.show(report, None if report is not None else "No report for this compaction.")

    # -- run now ---------------------------------------------------------------------------------

    def action_run(self, message_index: int | None = None, *, through: bool = True) -> None:
        """Run compaction now at ``message_index`` (default: the selected message), on the
        context up to and with it (``through``), or right before it."""
        if message_index is not None:
            self.message_index = max(0, min(message_index, len(self.session.messages) - 1))
        self.through = through
        if self._worker is not None and self._worker.is_running:
            self._worker.cancel()
        self.position = None
        self._run_id += 1
        self._streaming_run = self._run_id
        self.compaction = None
        self.run_now = None
        self.run_now_forgotten = None
        self.summary_text = ""
        self._set_status("running")
        self._show_mode()
        self._clear_views()
        self._show_report()
        self._worker = self._run(self._run_id, self.message_index, through)

    @work(exclusive=True, group="compaction", exit_on_error=False)
    async def _run(self, run: int, message_index: int, through: bool) -> None:
        policy = self.policy
        try:
            summarizer = self._summarizer or make_summarizer(policy.llm)
        except LLMError as exc:
            self._finish(run, None, "failed", f"The summary LLM is not usable: {exc}")
            return

        def on_delta(piece: str) -> None:
            self.post_message(_SummaryDelta(run, piece))

        try:
            done = await self.replayer.compaction_at(
                policy, message_index, through=through, summarizer=summarizer, on_delta=on_delta
            )
        except CompactionError as exc:
            self._finish(run, None, "failed", f"Compaction failed: {exc}")
            return
        except asyncio.CancelledError:
            if run == self._run_id and self.is_attached:
                self._set_status("cancelled")
                self.app.notify("Compaction cancelled.", timeout=3)
            raise
        if not done.context.messages:
            self._finish(run, None, "nothing", "There is no message to compact here.")
            return
        forgotten = None
        if done.result.compacted and done.result.summary:
            forgotten = await asyncio.to_thread(forgotten_now, done)
        self._finish(run, done, "done" if done.result.compacted else "nothing", None, forgotten)

    def _finish(
        self,
        run: int,
        done: CompactionAt | None,
        status: str,
        error: str | None,
        forgotten: Forgotten | None = None,
    ) -> None:
        if run != self._run_id or not self.is_attached:
            return
        self._streaming_run = None
        self.run_now = done
        self.run_now_forgotten = forgotten
        self._show_report()
        self.compaction = done.result if done is not None else None
        self._set_status(status)
        if error:
            self.app.notify(
                error,
                title="Compaction",
                severity="warning" if status == "nothing" else "error",
                timeout=10,
            )
            self.query_one("#cs-tokens", Static).update(Text(error, style="bold"))
            return
        if done is not None:
            self.summary_text = done.result.summary
            self._render_summary()
            self._show_compaction(done)

    def on__summary_delta(self, event: _SummaryDelta) -> None:
        # deltas still queued when the run finished (or was replaced) are already in the result
        if event.run != self._streaming_run or self.position is not None:
            return
        self.summary_text += event.piece
        self._render_summary()

    @property
    def drawn(self) -> bool:
        """The compaction has ended (or was never run) and the summary on screen is its last
        text: nothing more is coming."""
        if self.status == "running" or self._summary_dirty:
            return False
        shown = self._summary_shown
        return shown == self.summary_text or (shown is None and not self.summary_text)

    def _render_summary(self) -> None:
        """Show :attr:`summary_text` soon (deltas arriving together are drawn once)."""
        if not self._summary_dirty:
            self._summary_dirty = True
            self.set_timer(0.05, self._flush_summary)

    async def _flush_summary(self) -> None:
        self._summary_dirty = False
        # One Markdown update at a time, always of the latest text: updates that overlap
        # interleave their blocks.
        async with self._summary_lock:
            text = self.summary_text
            if text == self._summary_shown:
                return
            await self.query_one("#cs-summary", Markdown).update(text)
            self._summary_shown = text
        if self.status == "running":
            self.query_one("#cs-summary-box", VerticalScroll).scroll_end(animate=False)

    def action_cancel(self) -> None:
        """Cancel a running compaction (the LLM request is abandoned)."""
        if self._worker is not None and self._worker.is_running:
            self._worker.cancel()
            self._set_status("cancelled")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._worker and event.state == WorkerState.ERROR:
            error = event.worker.error
            self._set_status("failed")
            self.app.notify(
                f"Compaction failed: {type(error).__name__}: {error}",
                title="Compaction",
                severity="error",
            )

    def action_back(self) -> None:
        if self._worker is not None and self._worker.is_running:
            self.action_cancel()
            return
        self.dismiss(None)

    # -- replay events ---------------------------------------------------------------------------

    def action_step(self, step: int) -> None:
        """Show the previous (-1) or next (+1) compaction of the replay."""
        if not self.events:
            reason = "no replay result yet" if self.result is None else "the replay made none"
            self.app.notify(f"No compaction to step through: {reason}.", timeout=3)
            return
        if self.position is None:
            current = self.message_index
            if step > 0:
                after = [k for k, stop in enumerate(self.events) if self._cut(stop) > current]
                target = after[0] if after else None
            else:
                before = [k for k, stop in enumerate(self.events) if self._cut(stop) <= current]
                target = before[-1] if before else None
        else:
            target = self.position + step
            if not 0 <= target < len(self.events):
                target = None
        if target is None:
            self.app.notify("No further compaction that way.", timeout=2)
            return
        self.show_event(target)

    def show_event(self, position: int) -> None:
        """Show the replay's compaction number ``position`` (index into :attr:`events`)."""
        self.action_cancel()
        self._streaming_run = None
        self.position = position
        stop = self.events[position]
        event = stop.event
        if event is None:
            self.summary_text = self._recorded(stop).summary or ""
        else:
            self.summary_text = event.summary or ""
        self._set_status("replay" if event is not None else "recorded")
        self._show_mode()
        self._clear_views()
        if event is None:
            self._show_recorded(stop)
        else:
            self._show_event(stop.event_id, event)
        self._show_report()

    def _recorded(self, stop: CompactionStop) -> CompactionEvent:
        """The recorded compaction of a stop the replay did not apply."""
        assert stop.recorded_index is not None
        return self.session.compactions[stop.recorded_index]

    def _cut(self, stop: CompactionStop) -> int:
        """Where a stop's split is: a replay compaction's cut, a recorded one's first message."""
        return cut_of(stop.event) if stop.event is not None else stop.message_index

    @property
    def current_message(self) -> int:
        """The message Enter jumps to."""
        if self.position is not None:
            return self._cut(self.events[self.position])
        return self.message_index

    def action_jump(self) -> None:
        """Select the message in the session screen and close this one."""
        self.app.post_message(JumpToMessage(self.current_message))
        if self._worker is not None and self._worker.is_running:
            self._worker.cancel()
        self.dismiss(None)

    # -- drawing ---------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"compaction-screen--{name}", partial=True)

    def _set_status(self, status: str) -> None:
        self.status = status
        label = self.query_one("#cs-status", Label)
        words = {
            "running": "summarising… (x: cancel)",
            "done": "done",
            "cancelled": "cancelled",
            "failed": "failed",
            "nothing": "nothing to compact",
            "replay": "from the replay",
            "recorded": "from the recording (not replayed)",
            "idle": "",
        }
        label.update(words.get(status, status))
        label.set_classes(f"-{status}")

    def _show_mode(self) -> None:
        mode = self.query_one("#cs-mode", Label)
        if self.position is None:
            llm = self.policy.llm
            model = "mock LLM" if llm.provider == "mock" else f"{llm.model or '?'} (live)"
            if self._summarizer is not None:
                model = f"{self._summarizer.name} LLM"
            steps = f" · [ ] {counted(len(self.events), 'compaction')}" if self.events else ""
            where = "at" if self.through else "right before"
            mode.update(
                f"run now {where} message #{self.message_index} · {self.policy.name} · "
                f"{model}{steps}"
            )
        else:
            from core.insights.named_figures import compaction_at  # (the replay is loaded)

            stop = self.events[self.position]
            place = f"{self.position + 1}/{len(self.events)}"
            event = stop.event
            if event is None:
                k = stop.recorded_index
                assert k is not None
                trigger, _evidence = recorded_trigger(self.session, self.result, k)
                at = compaction_at(self.session, None, k)
                mode.update(f"recorded {place} (#{k}, not replayed) at message #{at} · {trigger}")
                return
            call = f" · {call_label(event.call_index)}" if event.call_index is not None else ""
            at = compaction_at(self.session, event, None)
            cut = cut_of(event)
            where = f"#{at}" if cut == at else f"#{at} (cut #{cut})"
            mode.update(
                f"replay {place}{origin(event)} at message {where}{call} · {event_trigger(event)}"
            )

    def _clear_views(self) -> None:
        self.query_one("#cs-tokens", Static).update("")
        self.query_one("#cs-split", Static).update("")
        self.query_one("#cs-pruned", Static).update("")
        self.query_one("#cs-request-text", Static).update("")
        self.query_one("#cs-request", Collapsible).title = "Request"
        self.query_one("#cs-next", Static).update("")
        self._render_summary()

    def _tokens_text(
        self, before: int | None, after: int | None, notes: Sequence[tuple[str, str]]
    ) -> Text:
        """Before → after with bars, then ``(label, text)`` lines saying what the figures are."""
        text = Text()
        if before is not None and after is None:  # (a recorded compaction with the agent's count)
            text.append("before ", style="bold")
            text.append(f"{before:>9,} ")
            text.append(bar(before, max(before, 1), 16), style=self._style("before"))
            text.append("\nafter  ", style="bold")
            text.append("not recorded", style="dim")
        elif before is None or after is None:
            text.append("No token figures for this compaction.", style="dim")
        else:
            scale = max(before, after, 1)
            saved = before - after
            if before and saved >= 0:
                ratio = saved / before
                change = f" −{ratio:.1%}" if after and ratio >= 0.995 else f" −{ratio:.0%}"
            else:
                change = f" +{-saved:,}"
            text.append("before ", style="bold")
            text.append(f"{before:>9,} ")
            text.append(bar(before, scale, 16), style=self._style("before"))
            text.append("\nafter  ", style="bold")
            text.append(f"{after:>9,} ")
            text.append(bar(after, scale, 16), style=self._style("after"))
            text.append(change, style="bold")
        for label, line in notes:
            text.append(f"\n{label}" if label else "\n", style="bold")
            text.append(line, style="dim")
        return text

    def _show_compaction(self, done: CompactionAt) -> None:
        r = done.result
        context = done.context
        counter = get_counter(self.policy.estimator)
        window_note = (
            f"window {done.window:,}"
            if done.window_known
            else f"window unknown: {done.window:,} assumed"
        )
        notes: list[tuple[str, str]] = []
        if context.figure is not None:
            if context.at_call:
                what = f"what the check before {call_label(context.call_index)} measured"
            elif context.call_index is not None:
                what = f"{call_label(context.call_index)} after its reply + what came since"
            else:
                what = "no call before it: the system prompt + the messages"
            notes.append(("", f"context: {what} ({context.basis or 'estimated'})"))
        notes.append(
            (
                "messages ",
                f"{r.tokens_before:,} → {r.tokens_after:,} {counter.provenance} "
                f"({self.policy.estimator}) · {window_note}",
            )
        )
        usage = ""
        if r.usage is not None:
            usage = (
                f" · LLM {r.usage.input_tokens:,} in / {r.usage.output_tokens:,} out"
                f" ({r.usage.provenance})"
            )
        timing = f" · {r.duration_s * 1000:,.0f} ms" if self.SHOW_TIMINGS else ""
        notes.append(("", f"{r.model or 'no model'}{timing}{usage}"))
        before = context.figure if context.figure is not None else r.tokens_before
        after = done.figure_after if done.figure_after is not None else r.tokens_after
        self.query_one("#cs-tokens", Static).update(self._tokens_text(before, after, notes))
        self.query_one("#cs-split", Static).update(self._split_text(r, context.rebuilt_at))
        self.query_one("#cs-pruned", Static).update(self._pruned_text(r))
        self._show_request(r)
        self._show_next(r.output_messages)

    def _split_text(self, r: CompactionResult, rebuilt_at: int) -> Text:
        by_id = {m.id: m for m in self.session.messages}
        head = [by_id[i].index for i in r.head_ids if i in by_id]
        tail = [by_id[i].index for i in r.tail_ids if i in by_id]
        pinned = [by_id[i].index for i in r.pinned_ids if i in by_id]
        text = Text()
        text.append("head ", style=self._style("head"))
        earlier = len(r.head_ids) - len(head)
        summary = " (with the earlier summary)" if earlier else ""
        text.append(f"{len(r.head_ids):,} messages {index_runs(head)}{summary} summarised\n")
        text.append("tail ", style=self._style("tail"))
        if r.tail_ids:
            verb = "user messages kept" if r.strategy == "codex" else "messages kept"
            text.append(f"{len(r.tail_ids):,} {verb} {index_runs(tail)}")
        else:
            text.append("none kept: everything is in the summary")
        if r.split is not None:
            s = r.split
            text.append(
                f"\ntail {s.tail_tokens:,} tokens (budget {s.budget_tokens:,}, "
                f"usable {s.usable_tokens:,})"
            )
            if s.moved_for_tool_pair:
                text.append(f"; cut moved {s.moved_for_tool_pair} earlier to keep a tool pair")
        if r.pinned_ids:
            n = len(r.pinned_ids)
            text.append(
                f"\n{n} leading system/context message{'s' if n != 1 else ''} "
                f"{index_runs(pinned)} kept as is"
            )
        if r.dropped_head_messages:
            text.append(
                f"\n{r.dropped_head_messages} oldest head messages left out: the request overflowed"
            )
        if rebuilt_at:
            text.append(
                f"\nthe context was last rebuilt before message #{rebuilt_at} (a compaction)",
                style="dim",
            )
        text.append(f"\n{r.strategy} strategy, {r.template} template", style="dim")
        if r.updated_previous_summary:
            text.append(" (updating the earlier summary)", style="dim")
        text.append(f"\n{r.reason}", style="dim")
        return text

    def _pruned_text(self, r: CompactionResult) -> Text:
        text = Text()
        if r.prune is None:
            text.append("Pruning is off in this policy.", style="dim")
            return text
        pruned = [d for d in r.prune.decisions if d.pruned]
        if not pruned:
            text.append(r.prune.summary or "Nothing pruned.", style="dim")
            return text
        text.append(f"{r.prune.summary}\n", style="dim")
        by_id = {m.id: m for m in self.session.messages}
        for d in pruned[:50]:
            index = by_id[d.id].index if d.id in by_id else d.index
            text.append(f"#{index} ", style="bold")
            text.append(f"{d.tool_name or 'tool'} ")
            text.append(f"{d.detail}\n", style="dim")
        if len(pruned) > 50:
            text.append(f"… and {len(pruned) - 50} more\n", style="dim")
        return text

    def _show_request(self, r: CompactionResult) -> None:
        collapsible = self.query_one("#cs-request", Collapsible)
        if not r.request_messages:
            collapsible.title = "Request: none (nothing to summarise)"
            return
        chars = sum(len(m.content) for m in r.request_messages) + len(r.prompt)
        collapsible.title = f"Request · {len(r.request_messages)} msgs + prompt · {chars:,} chars"
        parts: list[str] = [f"max_tokens {r.max_tokens:,} · model {r.model or '?'}"]
        for m in [*r.request_messages, None]:
            role, content = ("user (prompt)", r.prompt) if m is None else (m.role, m.content)
            shown = content[:MAX_REQUEST_CHARS]
            more = len(content) - len(shown)
            parts.append(f"── {role} ──\n{shown}" + (f"\n… {more:,} more chars" if more else ""))
        self.query_one("#cs-request-text", Static).update("\n\n".join(parts))

    def _show_next(self, messages: Sequence[Message]) -> None:
        counter = get_counter(self.policy.estimator)
        text = Text()
        shown = messages[:MAX_NEXT_ROWS]
        counts = counter.messages_tokens(shown)
        for message, tokens in zip(shown, counts, strict=True):
            role = role_label(message)
            style = self._style("summary") if message.summary else Style()
            text.append(f"#{message.index:<5}", style="dim")
            text.append(f"{role:<9}", style=style + Style(bold=True))
            text.append(f"{tokens:>8,}  ", style="dim")
            text.append(preview(message) + "\n", style=style)
        if len(messages) > MAX_NEXT_ROWS:
            text.append(f"… and {len(messages) - MAX_NEXT_ROWS:,} more messages", style="dim")
        heading = self.query_one("#cs-next-heading", Label)
        count = len(messages)
        heading.update(f"What the model sees next · {count:,} message{'' if count == 1 else 's'}")
        self.query_one("#cs-next", Static).update(text)

    def _show_event(self, event_id: int, e: ReplayEvent) -> None:
        result = self.result
        assert result is not None
        states = result.messages
        notes: list[tuple[str, str]] = [("", event_figures_note(e))]
        if e.recorded_index is not None:
            trigger, evidence = recorded_trigger(self.session, result, e.recorded_index)
            figures = recorded_compaction_figures(self.session, result, e.recorded_index)
            notes.append(("recorded ", f"compaction #{e.recorded_index}, {trigger}: {figures}"))
            if evidence:
                notes.append(("", evidence))
        notes.append(("", e.reason))
        self.query_one("#cs-tokens", Static).update(
            self._tokens_text(e.tokens_before, e.tokens_after, notes)
        )
        text = Text()
        text.append("head ", style=self._style("head"))
        text.append(f"{len(e.head_indices):,} messages {index_runs(e.head_indices)} summarised\n")
        text.append("tail ", style=self._style("tail"))
        if e.tail_indices:
            text.append(f"{len(e.tail_indices):,} messages kept {index_runs(e.tail_indices)}")
        else:
            text.append("none kept: everything is in the summary")
        tail_tokens = sum(
            states[i].tokens_after_truncation for i in e.tail_indices if i < len(states)
        )
        if e.tail_indices:
            text.append(f"\ntail {tail_tokens:,} tokens")
            window = result.window
            if window and result.policy.compaction.strategy == "tail":
                usable = max(window - result.policy.compaction.reserve_tokens, 0)
                budget = result.policy.split.tail_budget(usable)
                text.append(f" (budget {budget:,}, usable {usable:,})")
        if e.dropped_head_messages:
            text.append(f"\n{e.dropped_head_messages} oldest head messages left out of the request")
        if e.summary_tokens:
            text.append(f"\nsummary {e.summary_tokens:,} tokens")
        text.append(f"\nevent {event_id} · {e.kind} · trigger {event_trigger(e)}", style="dim")
        self.query_one("#cs-split", Static).update(text)

        pruned = Text()
        if not e.pruned_indices:
            pruned.append("Nothing pruned at this compaction.", style="dim")
        for i in e.pruned_indices[:50]:
            reason = states[i].prune_reason if i < len(states) else None
            pruned.append(f"#{i} ", style="bold")
            pruned.append(f"{reason or 'pruned'}\n", style="dim")
        if len(e.pruned_indices) > 50:
            pruned.append(f"… and {len(e.pruned_indices) - 50} more", style="dim")
        self.query_one("#cs-pruned", Static).update(pruned)
        self.query_one(
            "#cs-request", Collapsible
        ).title = "Request sent: not kept by the replay (r runs this compaction now)"
        next_messages: list[Message] = []
        if e.summary:
            anchor = min(e.head_indices) if e.head_indices else e.message_index
            next_messages.append(
                Message(
                    index=anchor,
                    id=f"summary:event-{event_id}",
                    role=Role.SYSTEM,
                    text=e.summary,
                    summary=True,
                )
            )
        count = len(self.session.messages)
        kept = [i for i in e.tail_indices if i < count]
        next_messages.extend(self.session.messages[i] for i in kept)
        self._show_next(next_messages)

    def _show_recorded(self, stop: CompactionStop) -> None:
        """A recorded compaction the replay did not apply: the recording's own figures and
        summary, and why the replay did not make it (nothing of the replay's to show)."""
        compaction = self._recorded(stop)
        k = stop.recorded_index
        assert k is not None
        trigger, evidence = recorded_trigger(self.session, self.result, k)
        figures = recorded_compaction_figures(self.session, self.result, k)
        notes: list[tuple[str, str]] = [
            ("recorded ", f"compaction #{k}, {trigger}: {figures}"),
            ("", not_replayed_reason(compaction, self.policy)),
        ]
        if evidence:
            notes.append(("", evidence))
        before, after = compaction.tokens_before, compaction.tokens_after
        if self.result is not None:  # the named figures, as the note under the bars says them
            from core.insights.named_figures import compaction_figures  # (the replay is loaded)

            named = compaction_figures(self.session, self.result)[k]
            before, after = named.agent_count, named.tokens_after
        self.query_one("#cs-tokens", Static).update(self._tokens_text(before, after, notes))
        split = Text()
        split.append(
            f"The recording continues from message #{stop.message_index}"
            f"{' (its summary)' if self._is_summary(stop.message_index) else ''}; "
            "the replay under this policy did not make this compaction, so it has no head or "
            "tail of its own here.",
            style="dim",
        )
        self.query_one("#cs-split", Static).update(split)
        self.query_one("#cs-pruned", Static).update(
            Text("Not replayed: nothing pruned here by this policy.", style="dim")
        )
        self.query_one(
            "#cs-request", Collapsible
        ).title = "Request sent: the recording's own (r runs a compaction here now)"
        next_messages: list[Message] = []
        if compaction.summary:
            next_messages.append(
                Message(
                    index=stop.message_index,
                    id=f"summary:recorded-{k}",
                    role=Role.SYSTEM,
                    text=compaction.summary,
                    summary=True,
                )
            )
        self._show_next(next_messages)

    def _is_summary(self, index: int) -> bool:
        messages = self.session.messages
        return 0 <= index < len(messages) and messages[index].summary

    @on(Collapsible.Expanded, "#cs-request")
    def _request_opened(self, event: Collapsible.Expanded) -> None:
        event.stop()
        if self.position is not None:
            self.app.notify("Press r to run this compaction now and see its request.", timeout=3)

    def action_rerun(self) -> None:
        """Run compaction now: at the selected message, or on what the replay had right before
        the replay compaction shown."""
        if self.position is None:
            self.action_run(through=self.through)
            return
        stop = self.events[self.position]
        event = stop.event
        if event is None:
            at = stop.message_index
        else:
            at = (
                event.at_message_index
                if event.at_message_index is not None
                else event.message_index
            )
        self.action_run(at, through=False)
