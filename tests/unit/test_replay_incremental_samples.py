"""Incremental re-simulation equals a fresh replay on real sessions, field by field.

The property test (``test_replay_incremental_fields``) covers built sessions; here a run of the
TUI's kind — one change after the other, each resuming from the runs before it — goes over real
recorded sessions (skipped when the shared samples are absent): after every change the resumed
result is the one a replay from scratch gives.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.formats import load_session
from core.policy import Policy, get_preset
from core.replay import Replayer, replay

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
FILES = [
    "claude-code/claude-2.1.4_auto-2x_alignment-hive_e7e29155.jsonl",
    "codex/codex-desktop-0.144.0a4_gpt-5.6-sol_auto-midturn_window-change_mise_944b03bfe6.jsonl",
]


def _set(path: str, value: object) -> Callable[[Policy], None]:
    def change(policy: Policy) -> None:
        *parents, last = path.split(".")
        node: object = policy
        for part in parents:
            node = getattr(node, part)
        setattr(node, last, value)

    return change


CHANGES: list[tuple[str, object]] = [
    ("pruning.protect_turns", 4),
    ("pruning.protect_turns", 0),
    ("pruning.minimum_tokens", 2_000),
    ("pruning.protect_tokens", 10_000),
    ("pruning.protected_tools", ["skill", "read"]),
    ("pruning.budget_rule", True),
    ("pruning.enabled", False),
    ("compaction.reserve_tokens", 40_000),
    ("compaction.threshold_rule", "pi"),
    ("compaction.auto", False),
    ("compaction.auto", True),
    ("compaction.overflow_recovery", False),
    ("context_window", 120_000),
    ("split.tail_max_tokens", 20_000),
    ("truncation.max_lines", 40),
    ("truncation.max_bytes", 4_000),
    ("estimator", "bytes/4"),
    ("context_window", None),
]
"""One field at a time, each change kept for the next (as a user moves through the panel)."""


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("preset", ["seed", "native"])
def test_each_change_resumes_to_the_fresh_result_on_a_real_session(name: str, preset: str) -> None:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip("the shared samples are absent")
    session = load_session(path)
    policy = get_preset("claude-code" if "claude" in name else "codex")
    if preset == "seed":
        policy = get_preset("seed")
    replayer = Replayer(session)
    replayer.run(policy)
    resumed = 0
    for field, value in CHANGES:
        policy = policy.model_copy(deep=True)
        _set(field, value)(policy)
        incremental = replayer.run(policy)
        fresh = replay(session, policy)
        assert incremental.model_dump(mode="json") == fresh.model_dump(mode="json"), field
        resumed += incremental.resumed_from_call is not None
    assert resumed  # (some change did resume: the comparison is not of two fresh runs)
