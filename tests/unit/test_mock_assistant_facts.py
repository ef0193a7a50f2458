"""The mock's reading of an assistant entry: its finding and decision as the regexes they stand
for find them (a guard for the fast paths: one lowered copy shared by both searches, and no
folded copy of a text that holds no decision word)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.mock import _assistant_facts, _first_sentence, _one_line
from core.llm.mock_words import DECISION, FINDING

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")

_PIECES = st.sampled_from(
    [
        *DECISION.words,
        *FINDING.words,
        "I",
        "Will",
        "WILL",
        "i'll",
        "I'LL",
        "plan",
        "Plan is",
        "going",
        "decides",
        "chosen",
        "the",
        "issue",
        "x",
        "_",
        " ",
        "  ",
        "\n",
        "\t",
        "\x1c",
        ".",
        "!",
        "?",
        "é",
        "İ",
    ]
)


def _reference(text: str) -> tuple[str | None, str | None]:
    """(finding, decision) of an assistant text, read with the regexes alone."""
    finding = _first_sentence(text) if FINDING.pattern.search(text) else None
    folded = " ".join(text.split())
    decision = None
    for sentence in _SENTENCE_END.split(folded, maxsplit=6)[:6]:
        if DECISION.pattern.search(sentence):
            decision = _one_line(sentence)
            break
    return finding, decision


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_finding_and_decision_are_the_regexes(text: str) -> None:
    facts = _assistant_facts(text)
    stripped = text.strip()
    if not stripped:
        return
    assert facts.assistant == stripped
    assert (facts.finding, facts.decision) == _reference(stripped)


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_no_decision_word_in_the_folded_text_when_none_is_needed(text: str) -> None:
    if not text.isascii():
        return
    if DECISION.none_in_folded(text.lower()):
        assert DECISION.present(" ".join(text.split())) == ()


def test_a_text_without_the_needed_parts_is_not_folded() -> None:
    """The parts looked for first: the longest of each word, none holding another."""
    assert "decide" in DECISION.needed and "decided" not in DECISION.needed
    assert "will" in DECISION.needed and "i" not in DECISION.needed
    assert DECISION.none_in_folded("we ran the tests and they pass.")
    assert not DECISION.none_in_folded("i\nwill fix it.")
    assert _assistant_facts("I\n will fix it. Done.").decision == "I will fix it."
