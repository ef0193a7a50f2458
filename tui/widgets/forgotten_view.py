"""What a compaction cost, what its summary forgot and why it ran: the recall per kind of fact,
every dropped fact with the message it came from, the growth since the previous compaction and
the check that crossed the threshold.

The widget draws a :class:`~core.insights.compaction_records.CompactionReport` it is given
(:meth:`ForgottenView.show`); it scrolls. The compaction screen passes the report of the
compaction it shows, and the detail pane draws the same text (:func:`describe`) at a compaction
event — both from :class:`tui.insights.Insights`, worked out once per replay result in a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from core.insights.compaction_records import CompactionReport
from core.insights.cost import compaction_cost_label
from core.insights.forgotten_facts import Forgotten
from core.model.write_numbers import compact_tokens

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

    def show(self, report: CompactionReport | None, note: str | None = None) -> None:
        """Draw ``report`` (None: ``note``, or that no compaction is selected)."""
        self.report = report
        body = self.query_one("#forgotten-body", Static)
        if report is None and note is not None:
            body.update(Text(note, style=self._style("muted")))
            return
        body.update(self.describe(report))

    def show_forgotten(self, forgotten: Forgotten, title: str) -> None:
        """Draw what a compaction with no report (one run now) kept of its head."""
        self.report = None
        body = self.query_one("#forgotten-body", Static)
        body.update(describe_forgotten(forgotten, title, self._styles()))

    def _style(self, name: str) -> str:
        return str(self.get_component_rich_style(f"forgotten-view--{name}"))

    def describe(self, report: CompactionReport | None) -> Text:
        """The text the view shows for ``report``."""
        return describe(report, self._styles())

    def _styles(self) -> ForgottenStyles:
        return ForgottenStyles(
            title=self._style("title"),
            muted=self._style("muted"),
            kept=self._style("kept"),
            dropped=self._style("dropped"),
            warning=self._style("warning"),
        )


@dataclass(frozen=True, slots=True)
class ForgottenStyles:
    """The styles :func:`describe` draws with (the view's component classes, or a pane's own)."""

    title: Style | str = "bold"
    muted: Style | str = "dim"
    kept: Style | str = "green"
    dropped: Style | str = "red"
    warning: Style | str = "yellow"


def describe(report: CompactionReport | None, styles: ForgottenStyles = ForgottenStyles()) -> Text:
    """What the view (and the detail pane, at a compaction) shows for ``report``: what it cost
    (:func:`core.insights.cost.compaction_cost_label`), what its summary kept and dropped, why it ran."""
    text = Text()
    if report is None:
        text.append("No compaction selected.", styles.muted)
        return text
    why = report.why
    where = (
        f"recorded compaction {why.recorded_index}"
        if why.source == "recorded"
        else "replay compaction"
    )
    call = f" before call {why.call_index}" if why.call_index is not None else ""
    text.append(f"{where} · {why.trigger}{call}\n", styles.title)
    if report.cost is not None:
        text.append(f"cost: {compaction_cost_label(report.cost)}\n", styles.muted)
    if report.forgotten is not None:
        _forgotten(text, report.forgotten, styles)
    text.append("\nWhy it ran\n", styles.title)
    text.append(why.explanation + "\n")
    if why.by_tool:
        shares = ", ".join(f"{t.tool_name} {compact_tokens(t.tokens)}" for t in why.by_tool[:5])
        text.append(f"by tool: {shares}\n", styles.muted)
    return text


def describe_forgotten(
    forgotten: Forgotten, title: str, styles: ForgottenStyles = ForgottenStyles()
) -> Text:
    """What the view shows for a compaction known only by what its summary kept (one the
    compaction screen ran now): ``title``, then the recall and the dropped facts."""
    text = Text()
    text.append(f"{title}\n", styles.title)
    _forgotten(text, forgotten, styles)
    return text


def _forgotten(text: Text, forgotten: Forgotten, styles: ForgottenStyles) -> None:
    text.append("\nWhat the summary kept\n", styles.title)
    if not forgotten.readable:
        text.append(f"cannot tell: {forgotten.reason}\n", styles.warning)
        return
    if not forgotten.facts:
        text.append(f"no facts found in the {forgotten.head_messages} messages it replaced\n")
        return
    recall = f"{forgotten.recall:.0%}" if forgotten.recall is not None else "-"
    text.append(
        f"{forgotten.kept} of {forgotten.facts} facts ({recall}) from "
        f"{forgotten.head_messages} messages\n"
    )
    for k, kind in enumerate(forgotten.by_kind):  # one flowing line: the dropped facts follow
        style = styles.kept if kind.kept == kind.facts else styles.dropped
        text.append("  " if k else "", styles.muted)
        text.append(f"{kind.kind} ", styles.muted)
        text.append(f"{kind.kept}/{kind.facts}", style)
    text.append("\n")
    if forgotten.dropped:
        text.append("\nDropped\n", styles.title)
    for fact in forgotten.dropped:
        line = " ".join(fact.text.split())
        if len(line) > _FACT_WIDTH:
            line = line[: _FACT_WIDTH - 1] + "…"
        text.append(f"  #{fact.message_index:<5}", styles.muted)
        text.append(f"{fact.kind:<15}", styles.dropped)
        text.append(line)
        if fact.detail and fact.kind == "failed_command":
            text.append(f" — {fact.detail[:80]}", styles.muted)
        text.append("\n")
