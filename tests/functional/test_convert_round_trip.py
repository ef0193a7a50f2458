"""A round trip through ``convert`` keeps every figure: ``breakdown --json`` and ``analyze --json``
of the converted file are those of the original, for real sessions of every format and for
hostile ones.

The hostile figure seen changing was a count a loader *derived* rather than read: a Codex
redaction that keeps the original length (``[REDACTED_TEXT len=N sha=…]``) with N = 2^63 − 1
gave the message an estimate of 2.3 × 10^18 tokens, which the ctxscope reader (like every loader
for a figure it reads) clamps to 10^9 — so the converted file was another session. Every
loader's derived figures are now held to the same bound when the session is built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from core.formats import load_session
from core.formats.base import SessionBuilder
from core.model.read_numbers import MAX_COUNT
from core.model.session import CompactionEvent, Message, Role, SourceFormat
from tests.support.codex_rollout import Rollout
from tests.support.paths import REPO, TESTS
from tui.cli.main import cli

SHARED = REPO.parent / "shared"
SMALL = 300 * 1024
"""Real sessions up to this size are round-tripped here (the larger ones cost seconds each and
add no kind of record the small ones lack; the goldens cover them)."""
SUFFIXES = (".jsonl", ".json", ".zst")


def _real_sessions() -> list[Path]:
    found: list[Path] = []
    for root in (SHARED / "samples", SHARED / "new-formats", REPO / "sample_sessions"):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if (
                path.is_file()
                and path.suffix in SUFFIXES
                and path.stat().st_size <= SMALL
                and "storage" not in path.parts
                and not path.name.endswith(".meta.json")
            ):
                found.append(path)
    storage = REPO / "sample_sessions" / "opencode" / "storage"
    return [*found, storage] if storage.is_dir() else found


REAL = _real_sessions()
MALFORMED = sorted((TESTS / "fixtures" / "malformed").iterdir())


def _figures(path: Path) -> dict[str, Any]:
    """``breakdown --json`` and ``analyze --json`` of ``path``, as data."""
    runner = CliRunner()
    figures: dict[str, Any] = {}
    for command in ("breakdown", "analyze"):
        done = runner.invoke(cli, [command, "--json", str(path)])
        assert done.exit_code == 0, f"{command} {path}: {done.output[-400:]}"
        figures[command] = json.loads(done.stdout)
    return figures


def _differences(before: Any, after: Any, where: str = "") -> list[str]:
    """Where two JSON documents differ (their paths and values), empty when they are equal."""
    if type(before) is not type(after):
        return [f"{where}: {before!r} != {after!r}"]
    if isinstance(before, dict):
        return [
            line
            for key in sorted(set(before) | set(after))
            for line in _differences(before.get(key), after.get(key), f"{where}.{key}")
        ]
    if isinstance(before, list):
        if len(before) != len(after):
            return [f"{where}: {len(before)} items != {len(after)}"]
        return [
            line
            for index, (one, two) in enumerate(zip(before, after, strict=True))
            for line in _differences(one, two, f"{where}[{index}]")
        ]
    return [] if before == after else [f"{where}: {before!r} != {after!r}"]


def assert_round_trip_keeps_figures(path: Path, folder: Path) -> None:
    """Convert ``path`` into ``folder`` and compare the figures of both files."""
    converted = folder / "converted.jsonl"
    done = CliRunner().invoke(cli, ["convert", str(path), "-o", str(converted)])
    assert done.exit_code == 0, done.output
    before, after = _figures(path), _figures(converted)
    changed = _differences(before, after)
    assert not changed, f"{path.name}: {len(changed)} figures changed: {changed[:8]}"


@pytest.mark.skipif(not REAL, reason="no sample sessions")
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_a_real_session_keeps_every_figure(path: Path, tmp_path: Path) -> None:
    assert_round_trip_keeps_figures(path, tmp_path)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_a_session_with_damaged_counts_keeps_every_figure(path: Path, tmp_path: Path) -> None:
    assert_round_trip_keeps_figures(path, tmp_path)


def _redacted_rollout(length: str) -> Rollout:
    """A Codex rollout shared with its text redacted, the original lengths kept (``length``
    digits for the first one), then compacted after a call."""
    rollout = Rollout().meta().task().context()
    rollout.developer("[REDACTED_TEXT len=4000 sha=4e5f6a7b]")
    rollout.user(f"[REDACTED_TEXT len={length} sha=0a1b2c3d]").say("checked").usage(12_000)
    rollout.call("exec_command", {"cmd": "ls"}).output("a.py\nb.py").usage(13_000)
    rollout.say("done").usage(14_000).compacted().reset(2_000).done()
    return rollout


@pytest.mark.parametrize(
    "length", [str(2**63 - 1), str(2**64 + 1), "9" * 5_000], ids=["2^63-1", "2^64+1", "5000-digits"]
)
def test_a_huge_kept_length_keeps_every_figure(length: str, tmp_path: Path) -> None:
    path = _redacted_rollout(length).write(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    assert_round_trip_keeps_figures(path, out)
    original = load_session(path)
    assert load_session(out / "converted.jsonl").messages == original.messages
    estimates = [m.agent_estimate_tokens or 0 for m in original.messages]
    assert max(estimates) <= MAX_COUNT  # was 2.3 x 10^18 for 2^63 - 1, read back as 10^9
    if len(length) < 30:
        assert any(d.code == "bad-count" for d in original.diagnostics)  # said, not silent


def test_derived_figures_are_held_to_what_a_count_may_be() -> None:
    builder = SessionBuilder(SourceFormat.CODEX, Path("x.jsonl"))
    builder.append(
        Message(
            index=0,
            id="m0",
            role=Role.USER,
            text="hi",
            agent_estimate_tokens=2**63 - 1,
            reasoning_estimate_tokens=4 * MAX_COUNT,
        )
    )
    builder.compactions.append(
        CompactionEvent(message_index=1, tokens_before=4 * MAX_COUNT, tokens_after=7)
    )
    session = builder.build()
    (message,) = session.messages
    assert message.agent_estimate_tokens == MAX_COUNT
    assert message.reasoning_estimate_tokens == MAX_COUNT
    assert (session.compactions[0].tokens_before, session.compactions[0].tokens_after) == (
        MAX_COUNT,
        7,
    )
    clamped = [d.message for d in session.diagnostics if d.code == "bad-count"]
    assert len(clamped) == 3 and "9223372036854775807" in clamped[0]
