"""Generate every sample session under ``sample_sessions/`` (``make samples``).

    python sample_sessions/generate.py            # rewrite the committed samples
    python sample_sessions/generate.py --out DIR  # write them somewhere else (tests do this)

Everything is deterministic: each sample has its own seeded ``random.Random`` and a fixed start
time, so running the script twice gives byte-identical files. The sessions are made up (see
``_project.py`` for the fictional repository and ``_scenarios.py`` for the stories) but follow
the real field shapes of each agent's format; README.md says what each file shows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # the repository root, for core.* (the ctxscope sample)

import _claude as C  # noqa: E402
import _codex as X  # noqa: E402
import _family as F  # noqa: E402
import _gemini as G  # noqa: E402
import _opencode as O  # noqa: E402
import _pi as PI  # noqa: E402
import _project as P  # noqa: E402
import _scenarios as S  # noqa: E402
from _script import Call, Compact, Event, Prompt, Scenario  # noqa: E402

OVERFLOW_PEAK = 209_400
"""Prompt tokens the call right after the CI job log should record (window 200,000)."""

LIVE_MIN_HEAD = 16
"""The committed live session has at least this many lines (grow.py appends the rest)."""


def epoch_ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _lines(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------------------------------------
# Claude Code
# ---------------------------------------------------------------------------------------------


def _claude_writer(seed: int, start: str, **kw: object) -> C.ClaudeWriter:
    rng = random.Random(seed)
    clock = P.Clock(rng, epoch_ms(start))
    return C.ClaudeWriter(rng, clock, session_id=C.new_uuid(rng), **kw)  # type: ignore[arg-type]


def claude_overflow() -> tuple[bytes, C.ClaudeWriter]:
    """Render the overflow story, sizing the CI log so the call after it records OVERFLOW_PEAK."""

    def render(ci_tokens: int) -> C.ClaudeWriter:
        sc = S.overflow(20260314, ci_tokens)
        w = _claude_writer(
            1101,
            "2026-03-14T09:12:33Z",
            branch="fix/flaky-webhook-tests",
            slug="quiet-harbor-lantern",
            auto_compact=False,
        )
        w.session_start(["$HOME/.claude/hooks/notify.sh start"])
        w.render(sc.events)
        return w

    guess = 80_000
    first = render(guess)
    w = render(guess + OVERFLOW_PEAK - first.calls[-1]["prompt"])
    return _lines(w.lines), w


def claude_compacted() -> tuple[bytes, C.ClaudeWriter]:
    sc = S.compacted(20260315)
    # this user has two MCP servers configured: a larger hidden prompt than the overflow sample
    w = _claude_writer(
        1102,
        "2026-03-15T13:40:05Z",
        branch="feat/per-app-delivery-cache",
        slug="amber-kettle-drift",
        base_tokens=27_904,
        cached_base=26_310,
        summaries=S.COMPACTED_SUMMARIES,
    )
    w.session_start(["$HOME/.claude/hooks/notify.sh start"])
    w.render(sc.events)
    return _lines(w.lines), w


def claude_long() -> tuple[bytes, C.ClaudeWriter]:
    sc = S.long_session(20260316, 158)
    # several MCP servers are configured here: a larger hidden prompt (tool schemas)
    w = _claude_writer(
        1103,
        "2026-03-16T07:58:41Z",
        branch="main",
        slug=None,
        hooks=False,
        version="2.0.64",
        compact_at=C.AUTO_COMPACT_AT_BEFORE_2_1_20,
        base_tokens=46_120,
        cached_base=44_730,
        summaries=[S.LONG_SUMMARY],
    )
    w.render(sc.events)
    return _lines(w.lines), w


def live_lines() -> list[str]:
    """Every line of the live session: the committed head plus what grow.py appends."""
    sc = S.live(20260317)
    w = _claude_writer(1104, "2026-03-17T10:05:00Z", branch="main", slug="steady-river-stone")
    w.render(sc.events)
    return w.lines


def live_head_count() -> int:
    """Lines of the live session committed: the first cut after LIVE_MIN_HEAD that ends on a tool
    result, so the committed file is a complete (if short) session."""
    lines = live_lines()
    for n in range(LIVE_MIN_HEAD, len(lines)):
        if '"tool_result"' in lines[n - 1] and '"type":"user"' in lines[n - 1]:
            return n
    return LIVE_MIN_HEAD


# ---------------------------------------------------------------------------------------------
# Codex
# ---------------------------------------------------------------------------------------------

CODEX_START = "2026-03-14T08:12:33Z"
"""Session start in UTC; the file name carries local time (Europe/Amsterdam, UTC+1 in March)."""


def codex_rollout() -> tuple[str, bytes, X.CodexWriter]:
    rng = random.Random(2201)
    clock = P.Clock(rng, epoch_ms(CODEX_START))
    session_id = X.uuid7(clock.ms, rng)
    w = X.CodexWriter(rng, clock, session_id=session_id, summary=S.CODEX_SUMMARY)
    w.render(S.codex_filters(20260314).events)
    return f"codex/rollout-2026-03-14T09-12-33-{session_id}.jsonl", _lines(w.lines), w


# ---------------------------------------------------------------------------------------------
# pi
# ---------------------------------------------------------------------------------------------


def _pi_render(events: list[Event]) -> PI.PiWriter:
    rng = random.Random(3301)
    clock = P.Clock(rng, epoch_ms("2026-03-13T16:20:11Z"))
    w = PI.PiWriter(rng, clock, session_id=C.new_uuid(rng), summary=S.PI_SUMMARY)
    w.start()
    w.render(events)
    return w


def pi_session() -> tuple[bytes, PI.PiWriter]:
    """The pi sample: turns are added until the context crosses the threshold, so the
    compaction fires at the end of the very turn that crossed it."""

    def last_total(sc: Scenario) -> int:
        return _pi_render(sc.events).last_total

    w = _pi_render(S.pi_config(20260313, last_total).events)
    return _lines(w.lines), w


def pi_branched() -> tuple[bytes, dict[str, str]]:
    rng = random.Random(3302)
    clock = P.Clock(rng, epoch_ms("2026-03-13T18:02:40Z"))
    lines, ids = PI.branched(rng, clock, C.new_uuid(rng))
    return _lines(lines), ids


# ---------------------------------------------------------------------------------------------
# opencode
# ---------------------------------------------------------------------------------------------


def _opencode_render(events: list[Event]) -> O.OpencodeWriter:
    rng = random.Random(4401)
    clock = P.Clock(rng, epoch_ms("2026-03-12T09:31:07Z"))
    w = O.OpencodeWriter(
        rng, clock, title="Fix Invalid Date in the orders list", summary=S.OPENCODE_SUMMARY
    )
    w.render(events)
    return w


def opencode_export() -> tuple[bytes, O.OpencodeWriter]:
    """The opencode sample: heavy reads are added until a step reaches the usable window, so
    the automatic compaction happens in the middle of that prompt loop."""

    def crossed(sc: Scenario) -> bool:
        w = _opencode_render(sc.events)
        return w.pending_compaction or bool(w.compactions)

    w = _opencode_render(S.opencode_dates(20260312, crossed).events)
    return w.export(), w


def opencode_storage() -> dict[str, bytes]:
    rng = random.Random(4402)
    clock = P.Clock(rng, epoch_ms("2026-03-11T15:04:50Z"))
    w = O.OpencodeWriter(rng, clock, title="Status badge and monospace references", summary="")
    w.render(S.opencode_small(20260311).events)
    return {f"opencode/storage/{rel}": data for rel, data in w.storage().items()}


# ---------------------------------------------------------------------------------------------
# Gemini CLI, Qwen Code, a compressed Codex rollout
# ---------------------------------------------------------------------------------------------

SMALL_GOAL = "Show cancelled orders clearly and the order reference in monospace."
QWEN_SUMMARY = (
    "<state_snapshot>\n  <overall_goal>\n    " + SMALL_GOAL + "\n  </overall_goal>\n"
    "  <current_plan>\n    1. [DONE] Find how cancelled orders are shown.\n"
    "    2. [TODO] Monospace order references.\n  </current_plan>\n</state_snapshot>"
)


def _with_compress(events: list[Event]) -> list[Event]:
    """The events with a ``/compress`` before the second prompt."""
    prompts = [n for n, ev in enumerate(events) if isinstance(ev, Prompt)]
    return [*events[: prompts[1]], Compact(), *events[prompts[1] :]]


def gemini_jsonl() -> tuple[bytes, G.GeminiWriter]:
    """Gemini CLI, JSON Lines: a /compress checkpoint, messages written twice, a rewind."""
    rng = random.Random(6601)
    clock = P.Clock(rng, epoch_ms("2026-03-10T14:05:12Z"))
    w = G.GeminiWriter(rng, clock, session_id=C.new_uuid(rng))
    w.start()
    w.render(_with_compress(S.opencode_small(20260310).events), goal=SMALL_GOAL)
    clock.tick(40, 60)
    asked = w.user("Also make the status badge bold.")
    w.call(Call(text="I'll add `font-weight: 600` to `.status-badge` in the dashboard styles."))
    w.rewind(asked)
    clock.tick(20, 30)
    w.user("Never mind the badge. Add a tooltip with the full reference instead.")
    w.call(Call(text="The reference cell now has a `title` with the full reference."))
    w.set_summary("Status badge and monospace references")
    return _lines(w.lines), w


def gemini_single_json() -> tuple[bytes, G.GeminiWriter]:
    """Gemini CLI, the older single-JSON form."""
    rng = random.Random(6602)
    clock = P.Clock(rng, epoch_ms("2026-03-09T10:41:55Z"))
    w = G.GeminiWriter(rng, clock, session_id=C.new_uuid(rng), model="gemini-2.5-flash")
    w.render(S.opencode_small(20260309).events)
    return w.single_json(), w


def qwen_session() -> tuple[bytes, G.QwenWriter]:
    """Qwen Code: telemetry per call, a background sub-agent's calls, a /compress."""
    rng = random.Random(6701)
    clock = P.Clock(rng, epoch_ms("2026-03-08T17:22:03Z"))
    w = G.QwenWriter(rng, clock, session_id=C.new_uuid(rng))
    events = _with_compress(S.opencode_small(20260308).events)
    split = events.index(next(ev for ev in events if isinstance(ev, Compact)))
    w.render(events[:split])
    w.background_call("managed-auto-memory-extractor", 3_100, 140)
    w.render(events[split:], summary=QWEN_SUMMARY)
    return _lines(w.lines), w


def codex_compressed() -> tuple[str, bytes, X.CodexWriter]:
    """A small Codex rollout as Codex 0.137+ stores it after a week idle: zstd-compressed."""
    import zstandard  # (only this sample needs it)

    rng = random.Random(2202)
    clock = P.Clock(rng, epoch_ms("2026-03-02T07:30:10Z"))
    session_id = X.uuid7(clock.ms, rng)
    w = X.CodexWriter(rng, clock, session_id=session_id, summary=S.CODEX_SUMMARY)
    w.render(S.opencode_small(20260302).events)
    data = zstandard.ZstdCompressor(level=19).compress(_lines(w.lines))
    return f"codex/rollout-2026-03-02T08-30-10-{session_id}.jsonl.zst", data, w


# ---------------------------------------------------------------------------------------------
# ctxscope
# ---------------------------------------------------------------------------------------------

CTXSCOPE_MESSAGES = 6000
"""Messages in ctxscope/long.jsonl."""


def ctxscope_long() -> bytes:
    import _ctxscope as CX  # imports core: only needed for this sample

    sc = S.long_session(20260318, 700, tiny=True)
    rng = random.Random(5501)
    clock = P.Clock(rng, epoch_ms("2026-03-18T06:45:12Z"))
    session = CX.build(
        sc.events, rng, clock, n_messages=CTXSCOPE_MESSAGES, session_id=C.new_uuid(rng)
    )
    return CX.dumps(session)


# ---------------------------------------------------------------------------------------------
# All samples
# ---------------------------------------------------------------------------------------------

Builder = Callable[[], dict[str, bytes]]


def build() -> dict[str, bytes]:
    """Every sample file: path relative to sample_sessions/ -> bytes."""
    files: dict[str, bytes] = {}
    files["claude-code/overflow.jsonl"] = claude_overflow()[0]
    files["claude-code/compacted.jsonl"] = claude_compacted()[0]
    files["claude-code/long.jsonl"] = claude_long()[0]
    files["live/growing.jsonl"] = _lines(live_lines()[: live_head_count()])
    name, data, _ = codex_rollout()
    files[name] = data
    files["pi/session.jsonl"] = pi_session()[0]
    files["pi/branched.jsonl"] = pi_branched()[0]
    files["opencode/export.json"] = opencode_export()[0]
    files.update(opencode_storage())
    files["ctxscope/long.jsonl"] = ctxscope_long()
    files["gemini-cli/session-2026-03-10T14-05-compress.jsonl"] = gemini_jsonl()[0]
    files["gemini-cli/session-2026-03-09T10-41-single.json"] = gemini_single_json()[0]
    data, qwen = qwen_session()
    files[f"qwen-code/{qwen.session_id}.jsonl"] = data
    name, data, _ = codex_compressed()
    files[name] = data
    files.update(F.claude_family())
    files.update(F.copilot_session())
    return files


GENERATED_DIRS = (
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "ctxscope",
    "live",
    "gemini-cli",
    "qwen-code",
    "copilot-cli",
)
"""Folders under the output directory that belong to the generator (rewritten each run)."""


def write(out: Path, files: dict[str, bytes]) -> None:
    for name in GENERATED_DIRS:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
    for rel, data in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into")
    args = parser.parse_args(argv)
    files = build()
    write(args.out, files)
    total = 0
    for rel, data in sorted(files.items()):
        total += len(data)
        print(f"{len(data):>10,}  {rel}")
    print(f"{total:>10,}  total ({len(files)} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
