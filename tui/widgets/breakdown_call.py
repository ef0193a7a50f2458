"""The breakdown of one model call, beside the gauge: each category of :mod:`core.insights.breakdown` with
its tokens, its share of the call's recorded total and a bar, the tool outputs per tool, and the
call's cost (:mod:`core.insights.cost`).

The widget draws what it is given (:meth:`BreakdownCall.show`): the session screen passes the
selected call's :class:`~core.insights.breakdown.CallBreakdown` and :class:`~core.insights.cost.CallCost` when the
gauge (or the :class:`~tui.widgets.breakdown_chart.BreakdownChart`) selects a call.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widget import Widget

from core.insights.breakdown import CATEGORIES, CATEGORY_LABELS, CallBreakdown
from core.insights.cost import CallCost, format_usd
from core.model.write_numbers import compact_tokens

_BAR = 12
_TOOLS_SHOWN = 4


class BreakdownCall(Widget):
    """One call's context, category by category (see the module docstring)."""

    DEFAULT_CSS = """
    BreakdownCall {
        width: 44;
        height: auto;
        padding: 0 1;
        background: $surface;
    }
    BreakdownCall > .breakdown-chart--system_and_tools { color: $secondary; }
    BreakdownCall > .breakdown-chart--user { color: magenta; }
    BreakdownCall > .breakdown-chart--assistant_text { color: $primary-lighten-1; }
    BreakdownCall > .breakdown-chart--reasoning { color: mediumpurple; }
    BreakdownCall > .breakdown-chart--tool_calls { color: $warning-darken-2; }
    BreakdownCall > .breakdown-chart--tool_outputs { color: $warning; }
    BreakdownCall > .breakdown-chart--summaries { color: $success; }
    BreakdownCall > .breakdown-chart--attachments { color: $error-lighten-2; }
    BreakdownCall > .breakdown-chart--residual { color: $foreground 30%; }
    BreakdownCall > .breakdown-chart--muted { color: $text-muted; }
    BreakdownCall > .breakdown-chart--label { text-style: bold; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"breakdown-chart--{category}" for category in CATEGORIES),
        "breakdown-chart--muted",
        "breakdown-chart--label",
    }

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.call: CallBreakdown | None = None
        self.cost: CallCost | None = None

    def show(self, call: CallBreakdown | None, cost: CallCost | None = None) -> None:
        """Draw ``call`` (None: nothing selected) and its ``cost``."""
        self.call, self.cost = call, cost
        self.refresh(layout=True)

    def render(self) -> Text:
        call = self.call
        muted = self.get_component_rich_style("breakdown-chart--muted")
        if call is None:
            return Text("No call selected.", style=muted)
        how = "recorded" if call.total_provenance == "recorded" else "estimated"
        text = Text()
        text.append(
            f"call {call.call_index}", self.get_component_rich_style("breakdown-chart--label")
        )
        text.append(f" · {call.total_tokens:,} tokens {how}", muted)
        if self.cost is not None:
            text.append(f" · {format_usd(self.cost.total_usd)}", muted)
        total = max(call.total_tokens, 1)
        for category in CATEGORIES:
            value = call.tokens(category)
            style = self.get_component_rich_style(f"breakdown-chart--{category}")
            text.append("\n")
            text.append("█ ", style)
            text.append(
                f"{CATEGORY_LABELS[category]:<15}{compact_tokens(value):>7} {value / total:>4.0%} "
            )
            text.append("▇" * round(value / total * _BAR), style)
            if category == "tool_outputs":
                for name, tokens in list(call.tool_outputs_by_tool.items())[: self._tools_room()]:
                    shown = name if len(name) <= 13 else name[:12] + "…"
                    text.append(
                        f"\n    {shown:<13}{compact_tokens(tokens):>7} {tokens / total:>4.0%}",
                        muted,
                    )
        if call.scale < 1.0:
            text.append(f"\nestimates scaled ×{call.scale:.2f} to the recorded total", muted)
        return text

    def _tools_room(self) -> int:
        """How many tools to list under the tool outputs: :data:`_TOOLS_SHOWN`, or fewer when
        the widget has a fixed height (the session screen's band) and the categories, the first
        line and the scale note would not fit otherwise."""
        height = self.styles.height
        if height is None or height.is_auto or not self.size.height:
            return _TOOLS_SHOWN
        scaled = 1 if self.call is not None and self.call.scale < 1.0 else 0
        room = self.size.height - 1 - len(CATEGORIES) - scaled
        return max(0, min(_TOOLS_SHOWN, room))
