"""What ``analyze`` reads from a column the replay already made is what asking each message
gives: the session's turn count (:func:`core.replay.recorded.turn_count`, which the fleet's rows read too) is the number of its
messages that start a turn, whatever mix of tool results, summaries, synthetic, meta and
sub-agent messages it holds; each call's recorded prompt (the peak's and the compactions'
figures) is its message's usage's prompt, read plainly
(:func:`core.insights.named_figures.plain_recorded_prompts`), calls with no usage or an
all-zero one included; what filled a stretch of the window
(:func:`core.insights.diagnosis.what_filled`, read in one pass) is what the plain reading of
its candidates, then of their tool outputs, gives."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.diagnosis import ToolShare, _tool_shares, what_filled
from core.insights.named_figures import (
    _recorded_prompt_column,
    plain_recorded_prompts,
)
from core.model.session import Session, Usage
from core.replay import Replayer, native_policy
from core.replay.recorded import turn_count
from tests.support.builders import SessionBuilder
from tests.support.paths import load_shared_or_skip, small_shared_files

_KINDS = ("turn", "synthetic", "meta", "sidechain", "summary", "reply", "tool")


def _plain(session: Session) -> int:
    return sum(1 for m in session.messages if m.is_turn_start)


def _session(kinds: list[str]) -> Session:
    builder = SessionBuilder(model="claude-sonnet-4-5")
    for kind in kinds:
        if kind == "turn":
            builder.user("go on")
        elif kind == "synthetic":
            builder.user("not a turn", synthetic=True)
        elif kind == "meta":
            builder.user("not a turn", meta=True)
        elif kind == "sidechain":
            builder.user("not a turn", sidechain=True)
        elif kind == "summary":
            builder.user("not a turn", summary=True)
        elif kind == "tool":
            builder.tool("Read", "file text")
        else:
            builder.reply("ok")
    return builder.session()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_KINDS), max_size=30))
def test_turn_count_is_the_messages_that_start_a_turn(kinds: list[str]) -> None:
    session = _session(kinds)
    assert turn_count(session) == _plain(session)


def test_turn_count_leaves_out_every_message_that_is_not_a_real_user_turn() -> None:
    session = _session(["turn", "reply", "synthetic", "meta", "sidechain", "summary", "turn"])
    assert turn_count(session) == 2


@pytest.mark.parametrize(
    "path", small_shared_files() or [None], ids=lambda p: p.name if p else "none"
)
def test_turn_count_of_every_sample_is_the_plain_count(path: Path | None) -> None:
    session = load_shared_or_skip(path)
    assert turn_count(session) == _plain(session)


def _same_prompts(session: Session) -> None:
    result = Replayer(session).run(native_policy(session))
    plain = plain_recorded_prompts(
        session, result.point_column("message_index"), result.point_column("recorded_tokens")
    )
    assert _recorded_prompt_column(session, result) == plain


_CALLS = ("usage", "zero", "none", "turn", "tool")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_CALLS), max_size=25))
def test_recorded_prompts_from_the_calls_are_the_plain_ones(kinds: list[str]) -> None:
    builder = SessionBuilder(model="claude-sonnet-4-5").user("go")
    for n, kind in enumerate(kinds):
        if kind == "usage":
            builder.reply("ok", usage=Usage(input=100 + n, cache_read=1_000 * n, output=n))
        elif kind == "zero":  # (an aborted call: no usable figure)
            builder.reply("ok", usage=Usage())
        elif kind == "none":
            builder.reply("ok")
        elif kind == "turn":
            builder.user("more")
        else:
            builder.tool("Read", "file text")
    _same_prompts(builder.session())


@pytest.mark.parametrize(
    "path", small_shared_files() or [None], ids=lambda p: p.name if p else "none"
)
def test_recorded_prompts_of_every_sample_are_the_plain_ones(path: Path | None) -> None:
    session = load_shared_or_skip(path)
    _same_prompts(session)


def _plain_tool_shares(
    session: Session, tokens_of: list[int], since: int, until: int
) -> list[ToolShare]:
    messages = session.messages
    candidates = [
        i for i in range(since, until) if not messages[i].sidechain and not messages[i].summary
    ]
    growth = sum(tokens_of[i] for i in candidates)
    per_tool: dict[str, list[int]] = {}
    for i in candidates:
        tool_result = messages[i].tool_result
        if tool_result is not None:
            per_tool.setdefault(tool_result.tool_name or "(unknown tool)", []).append(tokens_of[i])
    return _tool_shares(per_tool, growth)  # (the shares of what each tool added)


def _same_growth(session: Session, since: int, until: int) -> None:
    tokens_of = [len(m.text) + 7 * (m.index % 5) for m in session.messages]
    growth, _top, shares = what_filled(session, tokens_of, since, until)
    plain = _plain_tool_shares(session, tokens_of, since, until)
    assert shares == plain
    messages = session.messages
    assert growth == sum(
        tokens_of[i]
        for i in range(since, until)
        if not messages[i].sidechain and not messages[i].summary
    )


_GROWTH = ("turn", "sidechain", "summary", "read", "bash", "unnamed", "reply")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_GROWTH), max_size=30), st.integers(0, 40), st.integers(0, 40))
def test_what_filled_is_the_plain_reading(kinds: list[str], a: int, b: int) -> None:
    builder = SessionBuilder(model="claude-sonnet-4-5")
    for kind in kinds:
        if kind == "turn":
            builder.user("go on")
        elif kind == "sidechain":
            builder.call("Read", sidechain=True).result("a sub-agent's output", sidechain=True)
        elif kind == "summary":
            builder.user("a summary", summary=True)
        elif kind == "read":
            builder.tool("Read", "file text " * 3)
        elif kind == "bash":
            builder.tool("Bash", "ok")
        elif kind == "unnamed":
            builder.tool("", "no name")
        else:
            builder.reply("ok")
    session = builder.session()
    count = len(session.messages)
    _same_growth(session, min(a, b, count), min(max(a, b), count))


@pytest.mark.parametrize(
    "path", small_shared_files() or [None], ids=lambda p: p.name if p else "none"
)
def test_what_filled_of_every_sample_is_the_plain_reading(path: Path | None) -> None:
    session = load_shared_or_skip(path)
    count = len(session.messages)
    for since, until in ((0, count), (count // 3, 2 * count // 3)):
        _same_growth(session, since, until)


def test_the_report_timeline_is_the_result_columns_not_copies() -> None:
    """``analyze``'s timeline holds the replay's own columns where they are lists or int arrays
    (read, never written: a copy of each was the report's peak on a 100 MB session), with the
    same values."""
    from core.reports.analyze import call_timeline

    session = (
        SessionBuilder(model="claude-sonnet-4-5")
        .user("go")
        .call(context=1_000)
        .result("a")
        .call(context=2_000)
        .session()
    )
    result = Replayer(session).run(native_policy(session))
    timeline = call_timeline(result)
    for name in ("message_index", "recorded_tokens", "check_tokens", "simulated_tokens"):
        column = result.point_column(name)
        assert list(getattr(timeline, name)) == list(column)
        if type(column) is list or type(column) is array:
            assert getattr(timeline, name) is column
    assert timeline.simulated_tokens is result.point_column("simulated_tokens")
