"""Each stylesheet parsed once per process (tui.css_memo): the rules a stylesheet is given are
the ones Textual parses, shared only between stylesheets with the same variables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from textual.css import parse as textual_parse
from textual.css import stylesheet as textual_stylesheet
from textual.css.stylesheet import Stylesheet

from tui.css_memo import share_parsed_css

CSS = """
Label.note { color: $accent; padding: 0 1; }
#body > Horizontal { height: 1fr; background: $panel; }
"""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts Textual's parser is given (after the memo is installed)."""
    share_parsed_css()
    seen: list[str] = []
    parse = textual_parse.parse

    def counted(scope: str, css: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(css)
        return parse(scope, css, *args, **kwargs)

    monkeypatch.setattr(textual_stylesheet, "parse", counted)
    yield seen


def _sheet(variables: dict[str, str], css: str = CSS, where: str = "test-css-memo") -> Stylesheet:
    sheet = Stylesheet(variables=variables)
    sheet.add_source(css, read_from=(where, ""))
    sheet.parse()
    return sheet


def _described(sheet: Stylesheet) -> list[tuple[Any, ...]]:
    return [
        (tuple(rule.selector_names), sorted(rule.styles.get_rules().items(), key=str))
        for rule in sheet.rules
    ]


def _parsed_by_textual(variables: dict[str, str], css: str = CSS) -> list[tuple[Any, ...]]:
    sheet = Stylesheet(variables=variables)
    rules = list(
        textual_parse.parse("", css, ("test-css-memo", ""), variable_tokens=sheet._variable_tokens)
    )
    return [
        (tuple(rule.selector_names), sorted(rule.styles.get_rules().items(), key=str))
        for rule in rules
    ]


def test_a_sheet_is_parsed_once_for_stylesheets_with_the_same_variables(
    parses: list[str],
) -> None:
    variables = {"accent": "#ff0000", "panel": "#101010"}
    first = _sheet(dict(variables), where="test-css-memo-once")
    second = _sheet(dict(variables), where="test-css-memo-once")  # (as a refresh makes one)
    assert parses.count(CSS) == 1
    assert all(a is b for a, b in zip(first.rules, second.rules, strict=True))
    assert _described(second) == _parsed_by_textual(variables)


def test_other_variables_parse_the_sheet_again(parses: list[str]) -> None:
    red = _sheet({"accent": "#ff0000", "panel": "#101010"}, where="test-css-memo-vars")
    blue = _sheet({"accent": "#0000ff", "panel": "#101010"}, where="test-css-memo-vars")
    assert parses.count(CSS) == 2
    assert _described(red) != _described(blue)
    assert _described(blue) == _parsed_by_textual({"accent": "#0000ff", "panel": "#101010"})


def test_invalid_css_still_fails_each_time(parses: list[str]) -> None:
    bad = "Label { colour: red; }"
    for _ in range(2):
        with pytest.raises(Exception, match=r"(?i)css|style"):
            _sheet({}, css=bad, where="test-css-memo-bad")
