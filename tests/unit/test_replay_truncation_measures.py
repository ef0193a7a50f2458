"""Which tool outputs a truncation setting measures: each limit on its own is measured only for
an output it may not fit (its bytes past a quarter of the bytes allowed, its lines from as many
characters as lines allowed), with the same outcome as truncating every output."""

from __future__ import annotations

from typing import Any

import pytest

from core.model.session import Session
from core.model.tokens import get_counter
from core.policy import Policy, get_preset
from core.replay.truncation import Truncations, sent_output
from tests.support.builders import SessionBuilder

OUTPUTS = [
    "a\n" * 30,  # 60 characters, 31 lines
    "b\n" * 4,
    "😀" * 24,
    "😀" * 26,
    "\n" * 99,
    "x" * 400,
    "é" * 260,
    "line\n" * 120,
]


def _session() -> Session:
    builder = SessionBuilder().user()
    for output in OUTPUTS:
        builder = builder.call("bash", context=1_000).result(output)
    return builder.reply(context=2_000).session()


def _policy(max_bytes: int, max_lines: int) -> Policy:
    policy = get_preset("pi")
    policy.estimator = "chars/4"
    policy.truncation.enabled = True
    policy.truncation.max_bytes = max_bytes
    policy.truncation.max_lines = max_lines
    return policy


def _truncations(session: Session, policy: Policy) -> Truncations:
    counter = get_counter(policy.estimator)
    return Truncations(session, lambda _: counter.messages_tokens(session.messages))


@pytest.mark.parametrize(
    ("max_bytes", "max_lines"),
    [(1_000, 10), (100, 10), (100, 0), (30, 50), (400, 100), (399, 31), (520, 30), (1, 5)],
)
def test_each_limit_truncates_as_truncating_every_output(max_bytes: int, max_lines: int) -> None:
    session = _session()
    policy = _policy(max_bytes, max_lines)
    truncation = _truncations(session, policy).of(policy)
    expected = [
        m.tool_result is not None and sent_output(m, policy.truncation).truncated
        for m in session.messages
    ]
    assert type(truncation.truncated) is bytearray  # (a byte a message, not a list)
    assert list(map(bool, truncation.truncated)) == expected


def test_an_output_of_few_characters_is_not_measured_in_bytes() -> None:
    """A line limit of 10 and 1,000 bytes: the 60-character output of 31 lines is over (its
    lines counted), its bytes never measured (at most 240)."""
    session = _session()
    policy = _policy(1_000, 10)
    truncations = _truncations(session, policy)
    truncation = truncations.of(policy)
    first = next(i for i, m in enumerate(session.messages) if m.tool_result is not None)
    assert truncation.truncated[first]
    measured = truncations._bytes
    assert measured is None or measured[first] == -1
    lines = truncations._lines
    assert lines is not None and lines[first] == 31


def test_line_counts_are_kept_as_four_byte_ints() -> None:
    """The lines counted of each output are a 4-byte int column (-1: not counted), the same
    counts as splitting each output."""
    session = _session()
    truncations = _truncations(session, _policy(1_000, 10))
    truncations.of(_policy(1_000, 10))
    counted = truncations._line_counts()
    assert counted.typecode == "i" and len(counted) == len(session.messages)
    for i, message in enumerate(session.messages):
        if counted[i] >= 0:
            assert message.tool_result is not None
            assert counted[i] == len(message.tool_result.output.split("\n"))
    assert any(count >= 0 for count in counted)


def test_truncated_and_in_context_states_are_bools_read_from_bytes() -> None:
    """The truncated and walked flags are bytes, a byte a message; the message states made from
    them hold True and False (their JSON says ``true`` and ``false``, never 1 and 0)."""
    from core.model.json_text import model_json_bytes
    from core.replay import replay
    from core.replay.recorded import placed

    builder = SessionBuilder().user().call("bash", context=1_000).result("line\n" * 120)
    session = builder.user("aside", sidechain=True).reply(context=2_000).session()
    policy = _policy(100, 10)
    result = replay(session, policy)
    assert type(placed(session)[1].walked) is bytearray
    truncated = result.message_column("truncated")
    in_context = result.message_column("in_context_at_end")
    assert any(truncated) and any(in_context) and not all(in_context)
    assert all(type(flag) is bool for flag in truncated)
    assert all(type(flag) is bool for flag in in_context)
    state = result.messages[2]
    assert state.truncated is True
    text = model_json_bytes(state)
    assert b'"truncated": true' in text and b'"in_context_at_end": ' in text
    assert b'"truncated": 1' not in text


def test_lines_counted_ahead_make_a_line_limit_change_read_no_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Replayer.count_output_lines`` (what the TUI runs while it waits for the user) counts
    every tool output's lines once: a later change of a line limit counts none again, and
    truncates as a replayer that counted nothing ahead."""
    from core.model.session import ToolResult
    from core.replay import Replayer

    session = _session()
    replayer = Replayer(session)
    replayer.run(_policy(1_000_000, 0))  # (no line limit: no output's lines counted)
    assert replayer._truncations.uncounted_lines()
    replayer.count_output_lines()
    assert replayer._truncations.uncounted_lines() == []
    counts = list(replayer._truncations._line_counts())
    for i, message in enumerate(session.messages):
        if message.tool_result is not None and message.tool_result.output:
            assert counts[i] == len(message.tool_result.output.split("\n"))
    expected = {
        max_lines: Replayer(session).run(_policy(1_000, max_lines)).message_column("truncated")
        for max_lines in (10, 40, 100)
    }

    def read(self: ToolResult) -> int:
        raise AssertionError("an output's lines counted again")

    monkeypatch.setattr(ToolResult, "output_lines", read)
    for max_lines, truncated in expected.items():
        assert replayer.run(_policy(1_000, max_lines)).message_column("truncated") == truncated


def test_counting_lines_ahead_stops_when_cancelled() -> None:
    import threading

    from core.replay import Replayer

    session = _session()
    replayer = Replayer(session)
    replayer.run(_policy(1_000_000, 0))
    cancel = threading.Event()
    cancel.set()
    replayer.count_output_lines(cancel)
    assert len(replayer._truncations.uncounted_lines()) == len(OUTPUTS)


class _Unread(list[int]):
    """Line counts that fail when one is read."""

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("a line count read")


@pytest.mark.parametrize("max_bytes", [1_000_000, 1_000])
def test_a_line_limit_finds_the_outputs_over_it_by_their_lines_once_all_are_counted(
    max_bytes: int,
) -> None:
    """Once every output's lines are counted ahead, a line limit (with bytes allowed that need
    no output measured) finds the outputs over it without looking at each one's count; with
    fewer bytes allowed each is looked at. Either way it truncates as a replayer that counted
    nothing ahead."""
    from core.replay import Replayer

    session = _session()
    replayer = Replayer(session)
    replayer.run(_policy(1_000_000, 0))
    replayer.count_output_lines()
    truncations = replayer._truncations
    kept = truncations._lines
    assert kept is not None
    for max_lines in (1, 2, 4, 5, 30, 31, 32, 99, 100, 120, 121, 122, 10_000):
        policy = _policy(max_bytes, max_lines)
        expected = Replayer(session).run(policy).message_column("truncated")
        if max_bytes == 1_000_000:
            truncations._lines = _Unread(kept)  # type: ignore[assignment]
        assert replayer.run(policy).message_column("truncated") == expected, max_lines
        truncations._lines = kept
