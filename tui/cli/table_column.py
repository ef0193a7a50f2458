"""A column of a command's table, as :func:`tui.cli.table_fit.fit_table` fits it.

Here, not beside the fitting: a command defines its columns as it loads, and one that prints
JSON (``sessions --json``) then never imports rich and the fitting that draws them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a fitted table."""

    header: str
    priority: int
    """Which columns stay longest: 1 is never left out, larger numbers go first."""
    justify: Literal["left", "right"] = "left"
    wrap: bool = False
    """A label that may wrap (folded where it has no space); else it is shown whole."""
    min_width: int = 14
    """The narrowest a wrapping column may become."""
    max_width: int | None = None
    """The widest it may become."""
    ellipsis: bool = False
    """A wrapping column that ends its label with "…" on one line rather than folding it."""
