"""The ``gemini-cli`` and ``qwen-code`` presets: their thresholds as the agents' source states
them, every constant from :mod:`core.agents.constants` (with its source), Gemini CLI's split of the
history, and the native preset of their sessions."""

from __future__ import annotations

import pytest

from core.agents.constants import CONSTANTS, value
from core.algorithms.overflow import should_compact, threshold
from core.algorithms.split import split
from core.formats import load_session
from core.model.session import Message, Role, ToolCall, ToolResult
from core.model.tokens import TokenCounter
from core.policy import SplitPolicy, preset_for
from core.replay.policies import native_policy
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"


def test_gemini_cli_compresses_at_half_of_its_token_limit() -> None:
    policy = preset_for("gemini-cli")
    limit = int(value("gemini-cli", "token_limit"))
    assert limit == 1_048_576
    assert threshold(policy, limit) == 524_288
    assert should_compact(524_288, policy, limit)
    assert not should_compact(524_287, policy, limit)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (1_000_000, 850_000),  # 85 % is under the ceiling (967,000)
        (262_144, 222_822),  # 85 % = 222,822.4 < 229,144
        (128_000, 95_000),  # the ceiling: 128,000 - 20,000 - 13,000
        (30_000, 25_500),  # no room for a ceiling: 85 % alone
    ],
)
def test_qwen_code_threshold_is_a_ratio_under_a_ceiling(window: int, expected: int) -> None:
    assert threshold(preset_for("qwen-code"), window) == expected


def test_presets_take_their_constants_from_the_agent_table() -> None:
    gemini = preset_for("gemini-cli")
    assert gemini.compaction.codex_ratio == value("gemini-cli", "compression_threshold") == 0.5
    assert gemini.split.mode == "history-share"
    assert gemini.split.tail_ratio == value("gemini-cli", "preserve_fraction") == 0.3
    assert gemini.pruning.budget_rule and gemini.pruning.protect_tokens == 50_000
    assert gemini.compaction.template == "state-snapshot"
    qwen = preset_for("qwen-code")
    assert qwen.compaction.codex_ratio == value("qwen-code", "auto_compact_ratio") == 0.85
    assert qwen.compaction.reserve_tokens == 20_000
    assert qwen.compaction.autocompact_buffer_tokens == 13_000
    assert qwen.compaction.strategy == "summary-only"


def test_every_new_constant_cites_a_file_at_a_commit() -> None:
    rows = [row for row in CONSTANTS if row.agent in ("gemini-cli", "qwen-code")]
    assert len(rows) == 7
    for row in rows:
        assert " @ " in row.source and ("gemini-cli" in row.source or "qwen-code" in row.source)


def test_the_native_preset_of_each_format() -> None:
    gemini = load_session(FIXTURES / "gemini" / "single.json")
    qwen = load_session(FIXTURES / "qwen" / "branch-compress.jsonl")
    assert native_policy(gemini).name == "gemini-cli"
    assert native_policy(qwen).name == "qwen-code"


def _messages(spec: list[tuple[Role, bool]]) -> list[Message]:
    out: list[Message] = []
    for n, (role, calls) in enumerate(spec):
        out.append(
            Message(
                index=n,
                id=f"m{n}",
                role=role,
                text="x",
                tool_calls=[ToolCall(id=f"c{n}", name="read_file")] if calls else [],
                tool_result=ToolResult(call_id=f"c{n - 1}") if role is Role.TOOL else None,
            )
        )
    return out


U, A, T = Role.USER, Role.ASSISTANT, Role.TOOL


def test_history_share_cuts_at_the_first_user_message_past_the_older_share() -> None:
    messages = _messages([(U, False), (A, True), (T, False), (U, False), (A, False), (U, False)])
    tokens = [100, 300, 300, 100, 100, 100]  # 1,000 in all: the older 70 % is 700
    result = split(
        messages,
        SplitPolicy(mode="history-share", tail_ratio=0.3),
        usable_tokens=0,
        counter=TokenCounter(),
        token_counts=tokens,
    )
    assert result.cut_index == 3  # 700 tokens before message 3, a user message
    assert result.budget_tokens == 300


def test_history_share_compresses_everything_after_a_final_answer() -> None:
    messages = _messages([(U, False), (A, True), (T, False), (A, False)])
    result = split(
        messages,
        SplitPolicy(mode="history-share", tail_ratio=0.3),
        usable_tokens=0,
        counter=TokenCounter(),
        token_counts=[100, 100, 700, 100],
    )
    assert (
        result.cut_index == 4
    )  # no user message after the older share; the last reply calls no tool


def test_history_share_never_cuts_at_a_tool_result() -> None:
    messages = _messages([(U, False), (A, True), (T, False), (A, True), (T, False)])
    result = split(
        messages,
        SplitPolicy(mode="history-share", tail_ratio=0.3),
        usable_tokens=0,
        counter=TokenCounter(),
        token_counts=[100, 100, 500, 100, 200],
    )
    assert result.cut_index == 0  # a pending tool call: back to the last user message
