"""``marked_sentences`` finds the text's marker matches once and keeps the sentences one starts
in; it must give the sentences a search of each sentence gives (the definition below)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.conversation_facts import (
    _DECISION,
    _INSTRUCTION,
    _MAX_SENTENCE,
    _SENTENCE,
    marked_sentences,
)

MARKERS = [_INSTRUCTION, _DECISION]


def _searched(text: str, marker: re.Pattern[str]) -> list[str]:
    """The definition: each sentence, stripped, of the right length, that the marker matches."""
    out = []
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip(" -*#>\t")
        if 12 <= len(sentence) <= _MAX_SENTENCE and marker.search(sentence):
            out.append(sentence)
    return out


PIECES = [
    "don't",
    "dont",
    "do not",
    "never",
    "Always",
    "must",
    "ONLY",
    "make sure",
    "keep",
    "required",
    "requires",
    "no need",
    "decided",
    "instead of",
    "the fix is",
    "the bug was",
    "I'll use",
    "we'll use",
    "ill use",
    "switched to",
    "switch to",
    "chose",
    "plan is",
    "approach is",
    "root cause",
    "going with",
    "the",
    "code",
    "tests",
    "x",
    "only_one",
    "alwaysx",
    "\u0130",
    "\u212a",
    "é",
]
GLUE = [
    " ",
    "  ",
    ". ",
    "! ",
    "? ",
    ".\n",
    "\n",
    "\n\n",
    "- ",
    "* ",
    "# ",
    "> ",
    "\t",
    "",
    "-",
    ".",
    "'",
]

texts = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(GLUE)), max_size=40).map(
    lambda parts: "".join(piece + glue for piece, glue in parts)
)


@settings(max_examples=800, deadline=None)
@given(texts, st.sampled_from(MARKERS))
def test_marked_sentences_are_the_searched_ones(text: str, marker: re.Pattern[str]) -> None:
    assert list(marked_sentences(text, marker)) == _searched(text, marker)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.sampled_from(MARKERS))
def test_any_text_gives_the_searched_sentences(text: str, marker: re.Pattern[str]) -> None:
    assert list(marked_sentences(text, marker)) == _searched(text, marker)


@pytest.mark.parametrize(
    ("text", "marker", "expected"),
    [
        ("We decided to keep it. Nothing else here at all.", _DECISION, ["We decided to keep it."]),
        (
            "- never push to main on Fridays\n* ok then, fine by me",
            _INSTRUCTION,
            ["never push to main on Fridays"],
        ),
        ("Short. don't", _INSTRUCTION, []),
        (
            "The root cause was a race.  Then I'll use a lock here.",
            _DECISION,
            ["The root cause was a race.", "Then I'll use a lock here."],
        ),
        ("\u212aeep this one in mind. Fine.", _INSTRUCTION, ["\u212aeep this one in mind."]),
    ],
)
def test_known_texts(text: str, marker: re.Pattern[str], expected: list[str]) -> None:
    assert list(marked_sentences(text, marker)) == expected == _searched(text, marker)


BLANKS = ["\n", "\n\n", " \n", "\n  ", "\n\t", ".\n ", "\r\n", "\xa0\n", "\n\xa0", "\n\u2028", " "]
"""Blanks around newlines: a stretch of the text is cut only after a newline that a character
other than a blank follows (``_cut_before``, ``_cut_after``)."""

long_texts = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(PIECES), st.sampled_from(GLUE + BLANKS)),
        st.tuples(
            st.sampled_from(["plain words here", "x" * 40, "é word"]), st.sampled_from(BLANKS)
        ),
    ),
    max_size=80,
).map(lambda parts: "".join(piece + glue for piece, glue in parts))


@settings(max_examples=800, deadline=None)
@given(long_texts, st.sampled_from(MARKERS))
def test_a_stretch_of_the_text_gives_the_searched_sentences(
    text: str, marker: re.Pattern[str]
) -> None:
    # only the stretch from the first match's cut to the last one's is split
    assert list(marked_sentences(text, marker)) == _searched(text, marker)


@pytest.mark.parametrize(
    "text",
    [
        "Some words first here.\n\xa0we decided to keep the old parser.\nthe fix is elsewhere now",
        "Intro line without marks\n\u2028the root cause was a race\n\n\rgoing with a lock for now",
        "a.\n\x0bwe chose the simple path here\n and then the bug was gone for good",
    ],
)
def test_a_cut_keeps_a_blank_that_begins_a_sentence(text: str) -> None:
    # a newline followed by a blank the sentences are not stripped of is no place to cut
    assert list(marked_sentences(text, _DECISION)) == _searched(text, _DECISION)
    assert _searched(text, _DECISION)
