"""Why a compaction ran and what its summary forgot: the growth since the previous compaction and
the check that crossed the threshold, the recall per kind of fact, every dropped fact with the
message it came from, and what the compaction cost.

The widget draws a :class:`~core.compactions.CompactionReport` it is given
(:meth:`ForgottenView.show`); it scrolls. Wiring: the compaction screen (and the detail of a
compaction event) passes the report of the compaction it shows — ``compaction_reports(session,
result, session_cost(session))`` computed once per replay result, in a worker.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.compactions import CompactionReport
from core.cost import compaction_cost_label
from core.units import compact_tokens

_FACT_WIDTH = 100


class ForgottenView(VerticalScroll):
    """One compaction: why, what it forgot, what it cost (see the module docstring)."""

    DEFAULT_CSS = """
    ForgottenView {
        height: 1fr;
        background: $surface;
        padding: 0 1;
    }
    ForgottenView > Static { width: 1fr; }
    ForgottenView > .forgotten-view--title { text-style: bold; }
    ForgottenView > .forgotten-view--muted { color: $text-muted; }
    ForgottenView > .forgotten-view--kept { color: $success; }
    ForgottenView > .forgotten-view--dropped { color: $error; }
    ForgottenView > .forgotten-view--warning { color: $text-warning; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "forgotten-view--title",
        "forgotten-view--muted",
        "forgotten-view--kept",
        "forgotten-view--dropped",
        "forgotten-view--warning",
    }

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.report: CompactionReport | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="forgotten-body")

    def show(self, report: CompactionReport | None) -> None:
        """Draw ``report`` (None: no compaction selected)."""
        self.report = report
        self.query_one("#forgotten-body", Static).update(self.describe(report))

    def _style(self, name: str) -> str:
        return str(self.get_component_rich_style(f"forgotten-view--{name}"))

    def describe(self, report: CompactionReport | None) -> Text:
        """The text the view shows for ``report``."""
        text = Text()
        if report is None:
            text.append("No compaction selected.", self._style("muted"))
            return text
        why = report.why
        where = (
            f"recorded compaction {why.recorded_index}"
            if why.source == "recorded"
            else "replay compaction"
        )
        call = f" before call {why.call_index}" if why.call_index is not None else ""
        text.append(f"{where} · {why.trigger}{call}\n", self._style("title"))
        text.append(why.explanation + "\n")
        if why.by_tool:
            shares = ", ".join(f"{t.tool_name} {compact_tokens(t.tokens)}" for t in why.by_tool[:5])
            text.append(f"by tool: {shares}\n", self._style("muted"))
        if report.cost is not None:
            text.append(f"cost: {compaction_cost_label(report.cost)}\n", self._style("muted"))
        self._forgotten(text, report)
        return text

    def _forgotten(self, text: Text, report: CompactionReport) -> None:
        forgotten = report.forgotten
        if forgotten is None:
            return
        text.append("\nWhat the summary kept\n", self._style("title"))
        if not forgotten.readable:
            text.append(f"cannot tell: {forgotten.reason}\n", self._style("warning"))
            return
        recall = f"{forgotten.recall:.0%}" if forgotten.recall is not None else "-"
        text.append(
            f"{forgotten.kept} of {forgotten.facts} facts ({recall}) from "
            f"{forgotten.head_messages} messages\n"
        )
        for kind in forgotten.by_kind:
            style = self._style("kept" if kind.kept == kind.facts else "dropped")
            text.append(f"  {kind.kind:<16}", self._style("muted"))
            text.append(f"{kind.kept:>4}/{kind.facts:<4} {kind.recall:>4.0%}\n", style)
        if forgotten.dropped:
            text.append("\nDropped\n", self._style("title"))
        for fact in forgotten.dropped:
            line = " ".join(fact.text.split())
            if len(line) > _FACT_WIDTH:
                line = line[: _FACT_WIDTH - 1] + "…"
            text.append(f"  #{fact.message_index:<5}", self._style("muted"))
            text.append(f"{fact.kind:<15}", self._style("dropped"))
            text.append(line)
            if fact.detail and fact.kind == "failed_command":
                text.append(f" — {fact.detail[:80]}", self._style("muted"))
            text.append("\n")
