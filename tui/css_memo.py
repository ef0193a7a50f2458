"""Each stylesheet of the app parsed once per process, not once per Textual stylesheet object.

Textual keeps the rules it parsed in a cache of each :class:`~textual.css.stylesheet.Stylesheet`,
but it makes a new stylesheet, with an empty cache, every time the CSS is refreshed (a theme set,
a mode's first screen), and the refresh clears the cache of the app's own: while a session opens,
the app's sheets were parsed three times and Textual's base widget's four (40 % of the 70 ms of
parsing before the first screen, on the interface thread while the first part is read). Here the
rules are kept per process, by everything the parse reads: the text, where it came from, its
place among the sheets, its scope and the CSS variables (a theme's colours) it was parsed with.

Textual never changes a rule set once parsed (it hands its own cached lists to each parse of one
stylesheet the same way), so two stylesheets may share them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.css.types import CSSLocation

MAX_PARSED = 256
"""Sheets kept at most (each theme's variables parse every sheet again: a few themes' worth)."""

_ParseRules = Callable[[Stylesheet, str, CSSLocation, bool, int, str], list[RuleSet]]

_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}


def share_parsed_css() -> None:
    """Have every stylesheet of this process take the rules of a sheet parsed before with the
    same variables (once per process; what Textual parses is unchanged)."""
    parse_rules: _ParseRules = Stylesheet._parse_rules
    if getattr(parse_rules, "shared_across_stylesheets", False):
        return

    def shared(
        self: Stylesheet,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (
            css,
            read_from,
            is_default_rules,
            tie_breaker,
            scope,
            tuple(self._variables.items()),
        )
        rules = _parsed.get(key)
        if rules is None:
            rules = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
            if len(_parsed) >= MAX_PARSED:
                _parsed.clear()
            _parsed[key] = rules
        return rules

    shared.shared_across_stylesheets = True  # type: ignore[attr-defined]
    Stylesheet._parse_rules = shared  # type: ignore[method-assign]
