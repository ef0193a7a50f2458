"""The detail pane's count of a short message loads no tokenizer: it is counted from the token
table (``TokenCounter.count_alone``), with the figure the tokenizer gives, and a long message
still loads the tokenizer (issue 24: the first count, made once a 100 MB session is replayed,
was the app's peak)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import core.model.tokens as tokens
from core.model.tokens import load_encoding, message_text
from core.policy import get_preset
from tests.support.sessions import claude_like_session
from tests.support.tui_harness import open_session, quiet_app, settle, until


def _counted(text: str) -> int | None:
    found = re.search(r"counted\s+([\d,]+) C", text)
    return int(found.group(1).replace(",", "")) if found else None


@pytest.fixture
def nothing_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_encodings", {})
    monkeypatch.setattr(tokens, "_table", [])
    monkeypatch.setattr(tokens, "_counters", {})


async def test_a_short_message_is_counted_without_loading_the_tokenizer(
    nothing_loaded: None,
) -> None:
    async with quiet_app().run_test(size=(120, 34)) as pilot:
        screen = await open_session(pilot, claude_like_session(3), get_preset("seed"))
        state = screen.state
        assert state is not None
        await until(pilot, lambda: _counted(screen.detail.as_text()) is not None, "the count")
        await settle(pilot)
        index = screen.detail.message_index
        assert index is not None
        text = message_text(state.message(index))
        assert 0 < len(text) <= tokens.TABLE_COUNT_CHARS
        assert tokens._encodings == {}  # no tokenizer loaded
        assert tokens._table and tokens._table[0] is not None
        encoding, _note = load_encoding("cl100k_base")
        assert _counted(screen.detail.as_text()) == len(encoding.encode_ordinary(text))
