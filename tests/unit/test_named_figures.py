"""The named figures: each compaction figure, the tokens after and its floor, the peak prompt and
the threshold's label (:mod:`core.insights.named_figures`)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import load_session
from core.insights.named_figures import (
    FACTS,
    _Around,
    compaction_figures,
    peak,
    threshold_figure,
    tokens_after,
)
from core.model.session import CompactionEvent, Role
from core.replay import Replayer, native_policy
from tests.support.paths import REPO

SAMPLES = REPO / "sample_sessions"


def _replayed(path: str):  # type: ignore[no-untyped-def]
    session = load_session(str(SAMPLES / path))
    return session, Replayer(session).run(native_policy(session))


def test_every_compaction_figure_is_named_and_defined() -> None:
    names = {
        "at message",
        "agent's count",
        "check",
        "check on the recording",
        "last prompt",
        "tokens after",
        "threshold",
    }
    assert names <= set(FACTS)
    assert all(fact.definition and fact.provenance for fact in FACTS.values())


def test_a_pi_compaction_states_four_different_figures_each_from_its_source() -> None:
    session, result = _replayed("pi/session.jsonl")
    (figures,) = compaction_figures(session, result)
    event = session.compactions[0]
    assert figures.at_message == event.message_index  # the first message after it
    assert figures.agent_count == event.tokens_before  # pi's tokensBefore
    calls = [m for m in session.messages if m.is_model_call]
    before = [m for m in calls if m.index < event.message_index and m.usage is not None]
    after = [m for m in calls if m.index >= event.message_index and m.usage is not None]
    assert before[-1].usage is not None and after[0].usage is not None
    assert figures.last_prompt == before[-1].usage.prompt_tokens
    assert figures.tokens_after == after[0].usage.prompt_tokens  # without its output
    assert figures.tokens_after_source == "next prompt"
    assert after[0].usage.context_tokens > figures.tokens_after  # pi's own figure has the reply


def test_tokens_after_is_never_below_what_stays_unless_a_recorded_prompt_measures_it() -> None:
    recorded = CompactionEvent(message_index=5, tokens_before=150_000, tokens_after=12_000)
    assert tokens_after(recorded, None, None, 20_000) == (20_000, "what stays")
    assert tokens_after(recorded, None, None, 10_000) == (12_000, "recorded")
    assert tokens_after(recorded, None, (3, 6, 18_000), 20_000) == (18_000, "next prompt")
    bare = CompactionEvent(message_index=5)
    assert tokens_after(bare, None, None, None) == (None, None)
    assert tokens_after(bare, None, None, 9_000) == (9_000, "what stays")


def test_tokens_after_are_stated_for_claude_code_opencode_and_pi() -> None:
    for path in ("claude-code/compacted.jsonl", "opencode/export.json", "pi/session.jsonl"):
        session, result = _replayed(path)
        figures = compaction_figures(session, result)
        assert figures and all(f.tokens_after is not None for f in figures), path


def test_the_peak_is_the_prompt_before_the_reply_on_every_agent() -> None:
    session, result = _replayed("pi/session.jsonl")
    top = peak(session, result)
    assert top is not None
    prompts = [
        m.usage.prompt_tokens
        for m in session.messages
        if m.role is Role.ASSISTANT and m.usage is not None
    ]
    assert top.tokens == max(prompts)
    message = session.messages[result.point(top.call_index).message_index]
    assert message.usage is not None and message.usage.prompt_tokens == top.tokens


def test_a_threshold_at_or_above_the_window_is_flagged() -> None:
    usable = threshold_figure(167_000, "rule", 200_000)
    assert usable.usable and usable.label == "167,000 (rule)"
    above = threshold_figure(210_084, "inferred", 200_000)
    assert not above.usable
    assert above.label.startswith("210,084 (inferred; at or above the 200,000 window")
    assert not threshold_figure(None, "rule", None).usable


def test_the_make_run_sample_flags_its_inferred_threshold_above_the_window() -> None:
    from click.testing import CliRunner

    from tui.cli.main import cli

    path = str(SAMPLES / "claude-code" / "overflow.jsonl")
    data = json.loads(CliRunner().invoke(cli, ["analyze", path, "--json"]).stdout)
    figure = data["inferred_threshold_figure"]
    assert figure["tokens"] > data["session"]["window"]
    assert figure["usable"] is False and "never fires before an overflow" in figure["label"]
    assert data["threshold_figure"] == {
        "tokens": 167_000,
        "source": "rule",
        "window": 200_000,
        "usable": True,
        "label": "167,000 (rule)",
    }
    text = CliRunner().invoke(cli, ["analyze", path], env={"COLUMNS": "200"}).stdout
    assert "threshold 167,000 (rule)" in text
    assert "210,084 (inferred; at or above the 200,000 window" in text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=20), max_size=15),
    st.booleans(),
    st.integers(min_value=-1, max_value=22),
    st.integers(min_value=0, max_value=8),
)
def test_the_prompts_around_a_compaction_are_the_ones_a_scan_finds(
    messages: list[int], ordered: bool, at: int, span: int
) -> None:
    """The last prompt before a compaction and the first after it (up to the next one), found
    by bisection, are those a scan of every prompt finds (repeated messages, none before or
    after, out of order)."""
    at_messages = sorted(messages) if ordered else messages
    prompts = [(call, m, 100 + call) for call, m in enumerate(at_messages)]
    until = at + span
    before = [p for p in prompts if p[1] < at]
    after = next((p for p in prompts if at <= p[1] < until), None)
    assert _Around(prompts).of(at, until) == ((before[-1] if before else None), after)
