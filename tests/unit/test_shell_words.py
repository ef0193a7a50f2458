"""``shell_words`` splits a command as ``shlex.split`` does (the facts' command keys use it on
the segments with quotes or escapes; shlex reads them a character at a time)."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.shell_words import shell_words

TRICKY = " \t\r\n'\"\\ab=-#;$`\x0b\x0cé\u00a0\u2028"
"""Blanks shlex knows and blanks it does not, both quotes, the escape, and plain characters."""


def _shlex(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _ours(text: str) -> list[str] | None:
    try:
        return shell_words(text)
    except ValueError:
        return None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        'grep -rn "foo bar" src/',
        "echo '' x",
        "a\\ b",
        'x "a\\"b\\c\\\\d\\$"',
        "a'b c'd\"e f\"g",
        "python -c 'print(1)' && ls",
        '"unclosed',
        "'unclosed",
        "end\\",
        '"end\\',
        "tab\there\nnew\rline",
        "odd\x0bblank\u00a0kept",
    ],
)
def test_known_commands_split_as_shlex_does(text: str) -> None:
    assert _ours(text) == _shlex(text)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=TRICKY, max_size=40))
def test_any_text_splits_as_shlex_does(text: str) -> None:
    assert _ours(text) == _shlex(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_any_unicode_splits_as_shlex_does(text: str) -> None:
    assert _ours(text) == _shlex(text)


SIMPLE = " 'ab=-#;$`\x0b\x0cé\u00a0\u2028"
"""The characters of a text the quick reading takes (the space, the single quote, the rest
plain): no double quote, escape, nor a blank but the space."""


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=SIMPLE, max_size=40))
def test_a_text_with_only_spaces_and_single_quotes_splits_as_shlex_does(text: str) -> None:
    assert _ours(text) == _shlex(text)
