"""The mock's error-line search: the first error word as the plain search finds it.

``_find_error_word`` searches each word with ``str.find``, bounded by the best match so far;
the answer must be the first whole-word match that trying every word at every position finds
(a guard for any faster rewrite of the search).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.mock import (
    _ERROR_WORDS,
    _NO_FACTS,
    _NO_FAIL_WORDS,
    _error_words_in,
    _find_error_word,
    _lower_in_place,
    _no_error_word,
    _one_line,
    _tool_result_facts,
)


def _plain_first(lowered: str, start: int) -> int | None:
    """The first index at or after ``start`` where an error word occurs with no letter or digit
    on either side: every position tried, every word."""
    for at in range(start, len(lowered)):
        for word in _ERROR_WORDS:
            end = at + len(word)
            if (
                lowered.startswith(word, at)
                and (at == 0 or not lowered[at - 1].isalnum())
                and (end == len(lowered) or not lowered[end].isalnum())
            ):
                return at
    return None


_PIECES = st.sampled_from(
    [
        *_ERROR_WORDS,
        "fail",
        "FAIL",
        "Failed",
        "FAILURE",
        "fails",
        "xerror",
        "Error:",
        "_",
        " ",
        "\n",
        "a",
        "7",
        "no",
        "not",
        "found",
        "é",
        "ß",
        "İ",
        "\t",
        "panics",
        "denied.",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXTS, st.integers(min_value=0, max_value=40))
def test_the_first_error_word_is_the_plain_search_s(text: str, start: int) -> None:
    lowered = text.lower()
    expected = _plain_first(lowered, start)
    assert _find_error_word(lowered, start) == expected


def _plain_errors(
    body: str,
    lower: Callable[[str], str] = str.lower,
    first: Callable[[str, int], int | None] = _plain_first,
) -> tuple[str, ...]:
    """The error lines of a tool result, every error word tried from each position (``lower``
    and ``first``: how the text is lowered and the first error word found in it)."""
    name, _, text = body.partition("\n")
    lowered = lower(text)
    lines: list[str] = []
    position = 0
    for _ in range(2):
        found = first(lowered, position)
        if found is None:
            break
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        start = text.rfind("\n", 0, found) + 1
        lines.append(_one_line(f"{name.strip() or 'tool'}: {text[start:end].strip()}"))
        position = end
    return tuple(lines)


@settings(max_examples=300, deadline=None)
@given(_TEXTS.filter(lambda t: t.isascii()))
def test_a_tool_result_s_error_lines_are_the_plain_search_s(text: str) -> None:
    body = "bash\n" + text
    assert _tool_result_facts(body).errors == _plain_errors(body)


def test_error_lines_are_found_in_any_case() -> None:
    assert _tool_result_facts("bash\nok\nbuild FAILED here\nFailure: x").errors == (
        "bash: build FAILED here",
        "bash: Failure: x",
    )


def test_an_error_line_after_characters_whose_lower_case_is_longer_is_the_right_line() -> None:
    """``İ`` lowers to two characters: the error word's position must still be read in the
    original text (it was read 30 characters too far here, past the end of the output)."""
    body = "bash\n" + "İ" * 30 + "\nok\nerror: boom\nmore"
    assert _tool_result_facts(body).errors == ("bash: error: boom",)


@settings(max_examples=400, deadline=None)
@given(_TEXTS, st.integers(min_value=0, max_value=40))
def test_the_words_that_occur_at_all_find_what_every_word_finds(text: str, start: int) -> None:
    """``_tool_result_facts`` searches only the words ``_error_words_in`` says occur: the same
    first error word as trying all of them, in any case and with characters outside ASCII."""
    lowered = _lower_in_place(text)
    present = _error_words_in(lowered)
    assert present == tuple(word for word in _ERROR_WORDS if word in lowered)
    assert _find_error_word(lowered, start, present) == _find_error_word(lowered, start)


def test_fail_is_searched_once_for_the_two_words_that_hold_it() -> None:
    # Where "fail" is not, "failed" and "failure" are not looked for: every other word is.
    assert tuple(w for w in _ERROR_WORDS if w not in ("failed", "failure")) == _NO_FAIL_WORDS
    assert _error_words_in("a fatal fail") == ("fatal",)
    assert _error_words_in("it failed: failure") == ("failed", "failure")


def test_an_output_with_no_error_word_tells_nothing() -> None:
    assert _error_words_in("all good: 3 passed, 0 skipped") == ()
    assert _error_words_in("0 errors") == ("error",)  # (not a whole word: no error line)
    assert _tool_result_facts("bash\nall good\nERRORS: none") is _NO_FACTS
    assert _tool_result_facts("bash\nall good\nErRoR: one").errors == ("bash: ErRoR: one",)


_ANY_TEXTS = st.lists(
    st.one_of(_PIECES, st.sampled_from(["\u212a", "TRACEBAC", "→", "Ł", "\u0130", "ΣE"])),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_ANY_TEXTS)
def test_a_text_with_no_error_word_is_told_from_its_ascii_letters(text: str) -> None:
    """``_no_error_word``, the search on the ASCII characters lowered (every other one a
    ``?``), says no more than the search on the whole text lowered: where it says none there
    is none (the Kelvin sign, ``K``, lowers to an ASCII ``k``: such a text is searched whole)."""
    if _no_error_word(text):
        assert _error_words_in(_lower_in_place(text)) == ()
    if "\u212a" not in text:
        assert _no_error_word(text) == (_error_words_in(_lower_in_place(text)) == ())
    # (the whole text lowered in place, as before the ASCII test)
    body = "bash\n" + text
    assert _tool_result_facts(body).errors == _plain_errors(body, _lower_in_place, _find_error_word)


def test_the_kelvin_sign_makes_an_error_word() -> None:
    assert _tool_result_facts("bash\nTRACEBAC\u212a here\nok").errors == (
        "bash: TRACEBAC\u212a here",
    )
