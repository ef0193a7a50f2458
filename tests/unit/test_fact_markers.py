"""The cheap pre-tests of conversation_facts never skip a text its case-blind markers match."""

from __future__ import annotations

import random
import re
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.conversation_facts import (
    _DECISION,
    _ESCAPES,
    _EXIT_CODE,
    _FOLDS_TO_ASCII,
    _INSTRUCTION,
    _LOWERS_TO_ASCII,
    _PLAIN,
    _SENTENCE,
    _TEST,
    _WORD,
    FactMemo,
    NormalisedText,
    _command_key,
    _ends_say_exit,
    _exit_code,
    _match_starts,
    _matches,
    _may_match,
    ascii_lower,
    extract_facts,
    words,
)
from core.insights.identifier_scan import _FUNCTION, _TEST_NAME, function_names, names_of_tests
from core.model.session import ToolResult
from tests.support.builders import SessionBuilder

_PIECES = [
    "Don't",
    "DO NOT",
    "do  not",
    "Never",
    "always",
    "MUST",
    "shouldn't",
    "make sure",
    "ensure",
    "only",
    "avoid",
    "without",
    "Instead of",
    "prefer",
    "keep",
    "remember",
    "important",
    "no need",
    "not allowed",
    "Required",
    "decided",
    "Decision",
    "root cause",
    "the fix is",
    "The issue was",
    "the problem is",
    "the bug was",
    "going with",
    "I'll use",
    "well use",
    "chose",
    "approach is",
    "plan is",
    "switched to",
    "\u017fhould",
    "\u0130mportant",
    "\u212aeep",
    "x",
    "_",
    " ",
    ".",
    "\n",
    "\u00e9",
    "-",
]


def test_the_fold_characters_are_every_one_a_case_blind_letter_matches() -> None:
    letter = re.compile("[a-z]", re.IGNORECASE)
    found = tuple(c for c in map(chr, range(128, 0x30000)) if letter.match(c))
    assert found == _FOLDS_TO_ASCII


def test_a_text_a_marker_matches_always_passes_its_pre_test() -> None:
    rng = random.Random(11)
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 5)))
        for marker in (_INSTRUCTION, _DECISION):
            if marker.search(text):
                matched += 1
                assert _may_match(text, marker), (text, marker.pattern)
    assert matched > 1000


def test_trying_a_marker_where_its_pieces_are_finds_what_the_search_finds() -> None:
    rng = random.Random(13)
    pieces = [*_PIECES, "i'll use", "We'll use", "ill use", "well use", "I", "'", "aI'll use"]
    matched = 0
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        for marker in (_INSTRUCTION, _DECISION):
            expected = marker.search(text) is not None
            matched += expected
            assert _matches(text, marker) == expected, (text, marker.pattern)
    assert matched > 3000


def test_every_lower_case_but_one_keeps_the_length_of_its_character() -> None:
    longer = [c for c in map(chr, range(0x110000)) if len(c.lower()) != 1]
    assert longer == ["\u0130"] and longer[0] in _FOLDS_TO_ASCII


def test_a_text_without_the_marker_words_is_skipped() -> None:
    assert not _may_match("Here is the output of the build.", _DECISION)
    assert _may_match("We decided to keep it.", _DECISION)


def test_plain_command_segments_split_as_shlex_splits_them() -> None:
    rng = random.Random(5)
    alphabet = "ab -#=/.\t$;|&()'\"\\\x0b\u00a0"
    plain = 0
    for _ in range(20_000):
        segment = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        if _PLAIN.fullmatch(segment):
            plain += 1
            assert segment.split() == shlex.split(segment), repr(segment)
    assert plain > 1000
    assert _command_key("cd /repo && git commit -m 'a b'") == "git commit a b"


def _command_key_by_token(command: str) -> str:
    """:func:`_command_key` as first written: every segment split by the pattern, and the words
    of each chosen token read on their own."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    segments = re.split(r"&&|;|\|\|", line)
    segment = next((s for s in segments if not s.strip().startswith("cd ")), segments[-1])
    try:
        tokens = shlex.split(segment)
    except ValueError:
        tokens = segment.split()
    tokens = [t for t in tokens if "=" not in t.split("/")[0] or t.startswith("-")]
    chosen = [t for t in tokens if not t.startswith("-")][:3]
    return " ".join(w for t in chosen for w in words(t))


def test_a_command_key_is_the_words_of_its_chosen_tokens_each_read_alone() -> None:
    rng = random.Random(59)
    pieces = ["cd ", "a", "B/c", "x=1", "-n", " ", "&&", ";", "|", "||", "'", '"', "\\", "\\n"]
    pieces += ["\\N", "\t", "\u0130", "\u00e9", "\n", "_", "/", "sed -n '1,200p' src/m1.py"]
    for _ in range(20_000):
        command = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        assert _command_key.__wrapped__(command) == _command_key_by_token(command), repr(command)


def test_a_memo_shared_by_overlapping_heads_gives_each_head_its_own_facts() -> None:
    messages = (
        SessionBuilder()
        .user("Always run the linter. Don't touch parse_config.")
        .call("Bash", {"command": "pytest tests/test_parser.py -q"})
        .result("E   AssertionError: bad header\nExit code: 1", is_error=True)
        .call("TodoWrite", {"todos": [{"content": "Fix the header", "status": "pending"}]})
        .result("ok")
        .reply("The root cause is the header decoding. - [ ] check the loader")
        .session()
        .messages
    )
    memo = FactMemo()
    # Heads that start before, at and after the failing command's call: its result's fact
    # names the command only when the head holds the call.
    for start in (0, 1, 2, 3, 0):
        for end in range(start, len(messages) + 1):
            head = messages[start:end]
            assert extract_facts(head, memo) == extract_facts(head)


_CALL_REFERENCE = re.compile(r"\b(?:def |function |fn |func )?([A-Za-z_][A-Za-z0-9_.]{2,})\(")
"""The name-called pattern as it was written first (an optional keyword, a backtracking run)."""
_CODE_PIECES = [
    "def ",
    "function ",
    "fn ",
    "func ",
    "foo",
    "a.b",
    "_x",
    "Ab9",
    "(",
    ")",
    ".",
    " ",
    "\u00e9",
    "\u0130",
    "1",
    "test_",
    "Test",
    "TestA",
    ".py::",
    "t::x[1]",
    "/",
    "-",
    "\n",
]


def _code_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = [
        "".join(rng.choice(_CODE_PIECES) for _ in range(rng.randint(0, 12))) for _ in range(count)
    ]
    texts += [
        "".join(rng.choice("ab_.(1 \u00e9:") for _ in range(rng.randint(0, 30)))
        for _ in range(count)
    ]
    return texts


def test_the_possessive_call_pattern_finds_what_the_first_one_found() -> None:
    found = 0
    for text in _code_texts(17, 20_000):
        expected = _CALL_REFERENCE.findall(text)
        found += bool(expected)
        assert _FUNCTION.findall(text) == expected, repr(text)
    assert found > 2000


def test_the_test_names_pattern_finds_what_the_full_one_finds_without_a_pytest_id() -> None:
    found = 0
    for text in _code_texts(23, 20_000):
        if ".py::" not in text:
            expected = _TEST.findall(text)
            found += bool(expected)
            assert _TEST_NAME.findall(text) == expected, repr(text)
    assert found > 2000


def test_test_names_are_what_the_pattern_finds_everywhere() -> None:
    found = 0
    for text in [*_code_texts(29, 20_000), "test_a_test_b Testtest_x TestAtest_", "xtest_a Test"]:
        expected = _TEST_NAME.findall(text)
        found += bool(expected)
        assert names_of_tests(text) == expected, repr(text)
    assert found > 2000


_EXIT_PIECES = [
    "exit code",
    "Exit Code: ",
    "exited with code",
    "process exited with code",
    "PROCESS EXITED WITH CODE",
    "exit status",
    "EXIT_CODE=",
    "exit",
    "exited",
    " with",
    "-1",
    "0",
    "7",
    "\u0131",
    "\u212a",
    "\u017f",
    "\u0130",
    "\u00e9",
    "\U0001f600",
    "\n",
    ":",
    '"',
    "x",
    "_",
    " ",
]


def _exit_codes_found(pieces: list[str], seed: int, most: int) -> int:
    """Texts of up to ``most`` random ``pieces``: each one's exit code is the first match of
    its pattern (none without an ``exit``); how many had one."""
    rng = random.Random(seed)
    found = 0
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))
        expected = _EXIT_CODE.search(text) if "exit" in text.lower() else None
        got = _exit_code(text)
        found += expected is not None
        assert (got and (got.span(), got.group(1))) == (
            expected and (expected.span(), expected.group(1))
        ), repr(text)
    return found


def test_the_exit_code_is_the_first_match_of_its_pattern() -> None:
    assert _exit_codes_found(_EXIT_PIECES, 31, 7) > 2500


_EXIT_LETTERS = [
    "e",
    "E",
    "x",
    "X",
    "i",
    "I",
    "t",
    "T",
    "eX",
    "xI",
    "iT",
    "\u0130",
    "\u212a",
    "\u2192",
    " code 3",
    "ed with code 1",
]


def test_the_exit_code_is_found_whatever_the_case_of_its_exit() -> None:
    """Every case of the letters of an output's ``exit``, next to characters outside ASCII
    (those whose lower case holds an ASCII letter included), finds the pattern's first match."""
    assert _exit_codes_found(_EXIT_LETTERS, 41, 12) > 60


def test_sentences_split_where_the_first_pattern_split_them() -> None:
    reference = re.compile(r"(?<=[.!?])\s+|\n+")
    rng = random.Random(37)
    alphabet = ".!?\n \t\r\x0b\x0c\u2028\u00a0a\u00e9"
    for _ in range(30_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _SENTENCE.split(text) == reference.split(text), repr(text)


def test_called_names_are_what_the_call_pattern_finds_everywhere() -> None:
    found = 0
    long_run = "a" * 70 + "(" + ".b" * 40 + "(x" + "\u00e9abc(" + "\u0661abc(" + "1ab(ab(_ab("
    for text in [*_code_texts(41, 20_000), long_run, "", "(", "abc("]:
        expected = _FUNCTION.findall(text)
        found += bool(expected)
        assert function_names(text) == expected, repr(text)
    assert found > 2000


def test_no_lower_case_outside_ascii_holds_ascii_but_those_lowered_as_they_are() -> None:
    to_ascii = [c for c in map(chr, range(128, 0x110000)) if any(x < "\x80" for x in c.lower())]
    assert tuple(to_ascii) == _LOWERS_TO_ASCII


_WORD_PIECES = [
    "Word",
    "x_1",
    "\\n",
    "\\N",
    "\\T",
    "\\",
    "\\\\",
    "N",
    "Z9",
    "\t",
    "\x0b",
    "\x7f",
    '\\"',
    "\\/",
    "n",
    " ",
    "\u00e9",
    "\u00c9t\u00e9",
    "\u0130",
    "\u212a",
    "\u0131",
    "\u017f",
    "\u2028",
    "\U0001f600",
    "-",
    "?",
    "DON'T",
]


def test_words_are_what_the_word_pattern_finds_in_the_lower_case() -> None:
    rng = random.Random(43)
    for _ in range(30_000):
        text = "".join(rng.choice(_WORD_PIECES) for _ in range(rng.randint(0, 8)))
        assert words(text) == _WORD.findall(_ESCAPES.sub(" ", text.lower())), repr(text)


def test_a_marker_is_tried_everywhere_it_matches() -> None:
    rng = random.Random(47)
    pieces = [*_PIECES, "i'll use", "We'll use", "\u00e9", "\U0001f600", "\u2028", "?"]
    matched = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        for marker in (_INSTRUCTION, _DECISION):
            starts = _match_starts(text, marker)
            if starts is None:  # (a fold character: searched sentence by sentence)
                assert any(c in text for c in _FOLDS_TO_ASCII)
                continue
            expected = [at for at in range(len(text) + 1) if marker.match(text, at)]
            matched += bool(expected)
            assert starts == expected, (text, marker.pattern)
    assert matched > 3000


def test_a_run_is_found_where_the_joined_words_hold_it() -> None:
    rng = random.Random(53)
    vocabulary = ["a", "b", "c_1", "d2", "ee"]
    found = 0
    for _ in range(20_000):
        text = NormalisedText(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 8))))
        key = " ".join(rng.choice([*vocabulary, "zz"]) for _ in range(rng.randint(0, 3)))
        expected = bool(key) and f" {key} " in text.joined
        found += expected
        assert text.has_run(key) == expected, (text.joined, key)
    assert found > 2000


_OUTPUT_PIECES = [
    "x" * 900,
    "\u2192" * 900,
    "\U0001f680" * 500,
    "\u00e9" * 900,
    "ok\n",
    "exit",
    "EXIT",
    "eXiT",
    "Ex\u0130t",
    "ex\u0131t",
    "\u212a",
    "\u0130",
    "\u2192",
    "\u00e9",
    "\U0001f680",
    "e",
    "x",
    "it",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_OUTPUT_PIECES), max_size=16).map("".join))
def test_the_ends_say_exit_when_their_lower_case_does(output: str) -> None:
    """Read from the UTF-8 of its ends (or the text, as held), an output may say ``exit``
    whenever the :func:`ascii_lower` of an end holds it (characters of every width cut at the
    windows' edges, those whose lower case holds ASCII, outputs kept as text or as UTF-8)."""
    result = ToolResult(call_id="c", output=output)
    head, tail = result.output_ends(2000)
    expected = any("exit" in ascii_lower(end) for end in (head, tail) if end is not None)
    assert _ends_say_exit(result) or not expected


def test_an_exit_at_the_edge_of_an_end_is_told_as_the_end_holds_it() -> None:
    """An ``exit`` just inside, across or just outside the first or last 2,000 characters,
    after or before characters of every width."""
    for char in ("a", "é", "→", "🚀"):
        for length in range(1990, 2002):
            for output in (
                char * length + "EXIT" + "b" * 9000,
                "b" * 9000 + "exIt" + char * length,
            ):
                result = ToolResult(call_id="c", output=output)
                head, tail = result.output_ends(2000)
                expected = any("exit" in ascii_lower(e) for e in (head, tail) if e is not None)
                assert _ends_say_exit(result) or not expected, (char, length)
                assert expected is (length <= 1996)
