"""A few small sessions with known figures, written as files, for the tests of many sessions at
once (fleet, export, the HTML report).

Each is a Claude Code session (written as ctxscope JSONL, which keeps the format it was recorded
in) of a few turns whose calls record the prompts given, so its peak, its share of the window and
its compactions are known in advance.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from core.formats.ctxscope_jsonl import write_session
from core.model.session import CompactionTrigger, SourceFormat
from tests.support.builders import SessionBuilder

WINDOW = 200_000
MODEL = "claude-sonnet-4-5-20250929"
NOW = datetime.now(UTC).replace(microsecond=0)


class Built(NamedTuple):
    """What a built session holds."""

    name: str
    peak: int
    """The largest recorded prompt."""
    calls: int
    triggers: tuple[CompactionTrigger, ...]
    """Its recorded compactions, in order."""
    last_message_at: datetime
    version: str


def write_built(
    folder: Path,
    name: str,
    contexts: list[int],
    *,
    days_ago: float = 1.0,
    compact_after: dict[int, CompactionTrigger] | None = None,
    version: str = "2.1.39",
    fmt: SourceFormat = SourceFormat.CLAUDE_CODE,
) -> Built:
    """A session of agent ``fmt`` whose calls record ``contexts`` (one call per turn), with a
    compaction after the calls named in ``compact_after``; its last message ``days_ago`` days
    before now."""
    compact_after = compact_after or {}
    messages = 2 * len(contexts) + 2 * len(compact_after)
    start = NOW - timedelta(days=days_ago, seconds=messages)
    builder = SessionBuilder(start=start, model=MODEL)
    triggers: list[CompactionTrigger] = []
    for index, context in enumerate(contexts):
        builder.user(f"question {index}").reply(f"answer {index}", context=context)
        if index in compact_after:
            trigger = compact_after[index]
            builder.compaction(trigger=trigger, tokens_before=context)
            triggers.append(trigger)
    session = builder.session(id=name, fmt=fmt, model=MODEL, window=WINDOW, agent_version=version)
    write_session(session, folder / f"{name}.jsonl")
    last = datetime.fromisoformat(str(session.messages[-1].timestamp))
    return Built(name, max(contexts), len(contexts), tuple(triggers), last, version)


def write_fleet(folder: Path) -> dict[str, Built]:
    """Four sessions and a file that is not one (``broken.jsonl``)."""
    folder.mkdir(parents=True, exist_ok=True)
    built = [
        write_built(folder, "near", [40_000, 120_000, 190_000], days_ago=2),
        write_built(folder, "calm", [20_000, 60_000, 150_000], days_ago=1),
        write_built(folder, "old", [50_000, 195_000], days_ago=30, version="2.0.76"),
        write_built(
            folder,
            "compacted",
            [80_000, 170_000, 30_000, 90_000],
            days_ago=3,
            compact_after={1: "auto", 2: "manual"},
        ),
    ]
    (folder / "broken.jsonl").write_text("this is not a session\n", encoding="utf-8")
    return {b.name: b for b in built}
