"""What the replay needs from a pi session: why each compaction ran, as far as the file shows
(pi writes no reason), with the evidence, and who served the calls.

``fixtures/pi/triggers-v3.jsonl`` is a hand-written v3 session: a compaction right after a
context-overflow error (overflow recovery), one written by an extension (``fromHook``), one after
a rate-limit error (not an overflow: unknown), and a switch from anthropic to openai-codex. The
real v1 sample in ``../shared/samples/pi`` is checked when it is there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.formats import pi as pi_format
from core.model.session import Session
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "pi"
TRIGGERS = FIXTURES / "triggers-v3.jsonl"
PI_SAMPLE = REPO.parent / "shared" / "samples" / "pi" / "before-compaction.jsonl"


def _entries(path: Path = TRIGGERS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(entries: list[dict[str, Any]], tmp_path: Path) -> Session:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return pi_format.load(path)


@pytest.fixture(scope="module")
def session() -> Session:
    return pi_format.load(TRIGGERS)


def test_triggers_and_their_evidence(session: Session) -> None:
    assert [c.trigger for c in session.compactions] == ["overflow", "hook", "unknown"]
    assert [c.trigger_evidence for c in session.compactions] == [
        "after an assistant message with stopReason error at line 8 whose errorMessage is a "
        "context overflow ('prompt is too long: 201234 tokens > 200000 maximum'), "
        "tokensBefore 160,000",
        "fromHook=true at line 12: an extension wrote the summary; after a tool result at "
        "line 11, tokensBefore 30,500",
        # a rate limit is not an overflow: the replay decides between threshold and /compact
        "after an assistant message with stopReason error at line 15, tokensBefore 31,000",
    ]
    assert [c.tokens_before for c in session.compactions] == [160_000, 30_500, 31_000]
    assert [c.first_kept_id for c in session.compactions] == ["a0000006", "a0000009", "a0000013"]
    assert [c.source_line for c in session.compactions] == [9, 12, 16]


def test_an_extension_summary_after_an_overflow_is_still_overflow(tmp_path: Path) -> None:
    entries = _entries()
    compaction = next(e for e in entries if e.get("id") == "a0000008")
    compaction["fromHook"] = True
    event = _write(entries, tmp_path).compactions[0]
    assert event.trigger == "overflow"
    assert event.trigger_evidence is not None
    assert event.trigger_evidence.endswith("; an extension wrote the summary (fromHook=true)")


def test_a_compaction_first_on_the_path_says_so(tmp_path: Path) -> None:
    entries = _entries()
    header, compaction = entries[0], next(e for e in entries if e.get("id") == "a0000008")
    compaction["parentId"] = None
    event = _write([header, compaction], tmp_path).compactions[0]
    assert event.trigger == "unknown"
    assert event.trigger_evidence == "before any message, tokensBefore 160,000"


def test_provider_and_model_are_the_last_ones(session: Session) -> None:
    assert (session.provider, session.model) == ("openai-codex", "gpt-5.5")
    assert session.agent_version is None  # pi records no app version
    assert session.metadata["pi_version"] == 3 and session.metadata["model_changes"] == 2
    assert session.context_window is None  # pi records no window: load_session resolves it
    assert session.diagnostics == []


def test_an_assistant_names_its_provider_without_a_model_change(tmp_path: Path) -> None:
    entries = [e for e in _entries() if e.get("type") != "model_change"]
    for entry in entries:
        if entry.get("parentId") in ("a0000001", "a0000012"):
            entry["parentId"] = None if entry["id"] == "a0000002" else "a0000011"
    loaded = _write(entries, tmp_path)
    assert (loaded.provider, loaded.model) == ("openai-codex", "gpt-5.5")


def test_v1_header_gives_the_provider() -> None:
    session = pi_format.load(FIXTURES / "v1-linear.jsonl")
    assert (session.provider, session.model) == ("anthropic", "claude-opus-4-5")
    (event,) = session.compactions
    assert event.trigger == "unknown"
    assert event.trigger_evidence == (
        "after an assistant message with stopReason stop at line 11, tokensBefore 2,100"
    )


def test_real_v1_sample() -> None:
    if not PI_SAMPLE.exists():
        pytest.skip("shared samples are not available")
    session = pi_format.load(PI_SAMPLE)
    assert (session.provider, session.model) == ("anthropic", "claude-opus-4-5")
    assert session.agent_version is None and session.metadata["pi_version"] == 1
    assert [c.trigger for c in session.compactions] == ["unknown", "unknown"]
    assert [c.trigger_evidence for c in session.compactions] == [
        "after an assistant message with stopReason stop at line 359, tokensBefore 175,004",
        "after an assistant message with stopReason toolUse at line 628, tokensBefore 185,014",
    ]
    assert [c.tokens_before for c in session.compactions] == [175_004, 185_014]
    assert [c.first_kept_id for c in session.compactions] == ["line-294", "line-552"]
    assert session.diagnostics == []
