"""What a compaction's summary requests keep alive while it runs: one transcript of the head at a
time (megabytes each at 100 MB), the same requests as before."""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import pytest

import core.llm.summary_request as summary_request
from core.algorithms.compact import compact_sync
from core.llm.mock import MockSummarizer
from core.llm.protocol import ChatMessage
from core.llm.summary_request import SentHead
from core.llm.summary_templates import TEMPLATES, build_transcript, transcript_entries
from core.model.tokens import get_counter
from core.policy import CompactionPolicy, Policy, PruningPolicy
from tests.support.builders import SessionBuilder, text_of_tokens
from tests.support.summarizers import Forwarding


def _turns(count: int) -> SessionBuilder:
    convo = SessionBuilder()
    for i in range(count):
        convo.user(f"request {i} " + text_of_tokens(200)).reply(f"reply {i}")
    return convo


def test_a_request_built_again_forgets_the_transcript_of_the_one_before() -> None:
    """After a drop the shorter request's transcript is remembered, the refused one's is not (the
    memo kept the last four: two heads' transcripts alive at once)."""
    sent = SentHead(_turns(4).messages, None, 2_000, None)
    first = sent.request()[1].content
    assert transcript_entries(first) == tuple(sent.entries)
    sent.drop_oldest()
    second = sent.request()[1].content
    assert transcript_entries(first) is None
    assert transcript_entries(second) == tuple(sent.entries)


def test_other_transcripts_stay_remembered() -> None:
    """Only the request's own earlier transcript is forgotten (another compaction's, in another
    thread, is still read back without splitting)."""
    other = build_transcript(["[User]: elsewhere"])
    sent = SentHead(_turns(3).messages, None, 2_000, None)
    sent.request()
    sent.drop_oldest()
    sent.request()
    assert transcript_entries(other) == ("[User]: elsewhere",)


class _Recording(MockSummarizer):
    """The mock, keeping a weak reference to the transcript message of each request it is
    handed, and the requests' texts (wrapped in :class:`Forwarding`: seen as a live endpoint,
    with no overflow probe)."""

    def __init__(self, context_limit_tokens: int) -> None:
        super().__init__(context_limit_tokens=context_limit_tokens)
        self.handed: list[weakref.ref[ChatMessage]] = []
        self.texts: list[str] = []

    def request_tokens(self, messages: Sequence[ChatMessage], prompt: str) -> int:
        self.handed.append(weakref.ref(messages[1]))
        self.texts.append(messages[1].content)
        return super().request_tokens(messages, prompt)


def test_a_refused_request_is_let_go_before_the_next_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A live endpoint refuses the request: the compaction no longer holds it (nor the memo
    its transcript) when it builds the shorter one, and the requests are those of the heads."""
    convo = _turns(8)
    prompt = TEMPLATES["t12"].prompt()
    sizes = [
        MockSummarizer().request_tokens(
            SentHead(convo.messages[k:], None, 2_000, None).request(), prompt
        )
        for k in range(3)
    ]
    recording = _Recording(context_limit_tokens=sizes[1])
    alive_at_build: list[bool] = []
    real = build_transcript

    def watching(entries: Sequence[str]) -> str:
        alive_at_build.append(any(ref() is not None for ref in recording.handed))
        return real(entries)

    monkeypatch.setattr(summary_request, "build_transcript", watching)
    pol = Policy(
        pruning=PruningPolicy(enabled=False),
        compaction=CompactionPolicy(strategy="summary-only", continuation=False),
    )
    result = compact_sync(
        convo.messages, pol, Forwarding(recording), window=30_000, counter=get_counter("chars/4")
    )
    assert result.dropped_head_ids == ["m0"]
    assert alive_at_build == [False, False]
    monkeypatch.undo()
    assert recording.texts == [
        SentHead(convo.messages[k:], None, 2_000, None).request()[1].content for k in range(2)
    ]
