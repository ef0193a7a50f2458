"""The ``--json`` output of ``analyze``, ``replay`` and ``compare`` on every sample session, as
recorded in ``tests/functional/golden/`` as the command prints it (pretty-printed JSON, so that a change of
behaviour shows as a diff in review): a refactor must leave every figure where it was.

The files are regenerated with ``python -m tests.functional.golden.regenerate``, and only with a reason in
the commit message.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.paths import REPO
from tui.cli.main import cli

ROOT = REPO
GOLDEN = Path(__file__).resolve().parent / "golden"

SESSIONS = [
    "sample_sessions/claude-code/compacted.jsonl",
    "sample_sessions/claude-code/long.jsonl",
    "sample_sessions/claude-code/overflow.jsonl",
    "sample_sessions/codex/rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl",
    "sample_sessions/ctxscope/long.jsonl",
    "sample_sessions/live/growing.jsonl",
    "sample_sessions/opencode/export.json",
    "sample_sessions/opencode/storage",
    "sample_sessions/pi/branched.jsonl",
    "sample_sessions/pi/session.jsonl",
    "sample_sessions/gemini-cli/session-2026-03-10T14-05-compress.jsonl",
    "sample_sessions/gemini-cli/session-2026-03-09T10-41-single.json",
    "sample_sessions/qwen-code/9ec676af-6f14-4479-96a7-1b971a943395.jsonl",
    "sample_sessions/codex/rollout-2026-03-02T08-30-10-019cad74-5bd0-7044-be83-91e1c8a92e0c.jsonl.zst",
]
COMMANDS = ["analyze", "replay", "compare"]
CASES = [(session, command) for session in SESSIONS for command in COMMANDS]


def golden_path(session: str, command: str) -> Path:
    stem = session.removeprefix("sample_sessions/").replace("/", "_")
    return GOLDEN / f"{stem}.{command}.json"


def run_case(session: str, command: str) -> str:
    """The command's ``--json`` output, run from the repository root as a user would."""
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(cli, [command, session, "--json"], catch_exceptions=False)
    finally:
        os.chdir(cwd)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ, as a path and both values (None when equal)."""
    if type(expected) is not type(actual):
        return f"{path}: expected {expected!r:.200}, got {actual!r:.200}"
    if isinstance(expected, dict):
        for key in expected.keys() | actual.keys():
            if key not in actual or key not in expected:
                return f"{path}.{key}: present on one side only"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{path}: {len(expected)} items expected, {len(actual)} found"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(e, a, f"{path}[{i}]")
            if found:
                return found
        return None
    return (
        None if expected == actual else f"{path}: expected {expected!r:.200}, got {actual!r:.200}"
    )


@pytest.mark.parametrize(("session", "command"), CASES, ids=[f"{c}:{s}" for s, c in CASES])
def test_json_output_matches_golden(session: str, command: str) -> None:
    expected = json.loads(golden_path(session, command).read_text(encoding="utf-8"))
    actual = json.loads(run_case(session, command))
    assert first_difference(expected, actual) is None, first_difference(expected, actual)


def test_first_difference_finds_a_changed_figure() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None
    assert (
        first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]})
        == "$.a[1].b: expected 2, got 3"
    )
    assert first_difference([1], [1, 2]) == "$: 1 items expected, 2 found"


def test_replay_json_keeps_the_declared_field_order() -> None:
    """The points and message states are built on demand; the JSON still lists every field in
    the order the model declares it (points before events), not in the order it was built."""
    from core.replay import ReplayResult

    text = run_case("sample_sessions/claude-code/compacted.jsonl", "replay")
    assert list(json.loads(text)) == list(ReplayResult.model_fields)
