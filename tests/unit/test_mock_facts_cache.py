"""The mock summariser's cache of what each transcript entry says: the pieces of a transcript
are keyed by their identity, and a summary from the cache is the one read from scratch."""

from __future__ import annotations

import gc

from core.llm.mock import MockSummarizer
from core.llm.protocol import ChatMessage
from core.llm.summary_templates import SYSTEM_PROMPT, build_prompt, build_transcript

PROMPT = build_prompt("t12")


def _pieces(round_: int) -> list[str]:
    """Entries that differ from round to round (new strings each time, as a transcript's
    pieces are once their messages' entries are gone)."""
    return [
        f"[User]: Fix the parser, round {round_}",
        f'[Tool call]: bash {{"command":"pytest -q -k case{round_}"}}',
        f"[Tool result]: bash\nline {round_}\nerror: case{round_} failed at step {round_ * 7}",
        f"[Assistant]: The issue is case {round_}. I decided to fix round {round_} first.",
        f'[Tool call]: edit {{"filePath":"core/module{round_}.py"}}',
    ]


def _summary(mock: MockSummarizer, pieces: list[str]) -> str:
    transcript = build_transcript(pieces)  # (its pieces are what the mock reads back)
    request = [
        ChatMessage.model_construct(role="system", content=SYSTEM_PROMPT),
        ChatMessage.model_construct(role="user", content=transcript),
    ]
    return mock.write(request, PROMPT, 2000)


def test_new_pieces_never_take_the_facts_of_gone_ones() -> None:
    # The strings of each round are dropped before the next round makes its own, so that their
    # memory (and ids) is reused: a cache keyed by identity that did not hold its strings would
    # give the facts of a gone piece to a new one. Small and large caches (evicting or not).
    for cache_chars in (300, 1_000_000):
        mock = MockSummarizer(cache_chars=cache_chars)
        for round_ in range(60):
            pieces = _pieces(round_)
            assert _summary(mock, pieces) == _summary(MockSummarizer(), list(pieces))
            del pieces
            gc.collect()


def test_the_same_pieces_again_are_read_from_the_cache() -> None:
    mock = MockSummarizer()
    pieces = _pieces(1)
    first = _summary(mock, pieces)
    cached = len(mock._facts)
    assert cached == len(pieces)
    # A longer head that starts with the same strings: only the new one is read.
    longer = [*pieces, "[Assistant]: Found it: the cause is a stale cache."]
    assert _summary(mock, pieces) == first
    assert len(mock._facts) == cached
    assert _summary(mock, longer) == _summary(MockSummarizer(), list(longer))
    assert len(mock._facts) == cached + 1
    # An equal text in another string is read again, to the same facts.
    copies = ["".join(list(piece)) for piece in pieces]
    assert all(c == p and c is not p for c, p in zip(copies, pieces, strict=True))
    assert _summary(mock, copies) == first
