"""The pieces of each marker are found by the marker's text, not by the compiled pattern: a
pattern's hash is worked out over its compiled code at every lookup (2 µs, once per user and
assistant message of every head), a text's once."""

from __future__ import annotations

from core.insights import conversation_facts as facts


def test_the_marker_pieces_are_keyed_by_text() -> None:
    assert all(type(key) is str for key in facts._MARKER_WORDS)
    for marker in (facts._INSTRUCTION, facts._DECISION):
        assert facts._MARKER_WORDS[marker.pattern]


def test_the_markers_still_find_their_sentences() -> None:
    text = "We looked around. The root cause is a stale cache in the loader. Fine."
    assert list(facts.marked_sentences(text, facts._DECISION)) == [
        "The root cause is a stale cache in the loader."
    ]
    assert facts._may_match("Never push to main", facts._INSTRUCTION)
    assert facts._matches("always run the tests", facts._INSTRUCTION)
