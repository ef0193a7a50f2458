"""Benchmark of the replay engine: one replay, a five-policy compare, and incremental re-simulation.

Generates a deterministic 10,000-message session with realistic sizes and recorded usage (tool
outputs from a few hundred bytes to a few hundred kilobytes, turns of several tool calls, the
recording compacting near 167k of a 200k window), writes it as ctxscope JSONL to a temporary
file, loads it back with ``load_session`` (that load time is the yardstick of the ratios), and
measures:

* replay under one policy with the mock LLM (bound 1 s);
* compare of all five presets (bound 3 s);
* replay under claude-code with a summariser too small for any head, so that every compaction
  fails (bound 1 s): attempts that would fail again are not repeated;
* after one limit change, re-simulation of a 5,000-message session (bound 100 ms), for several
  kinds of change.

Each figure is the median of several samples, each on a fresh ``Replayer`` (the machine is
shared: one sample says as much about the other processes as about the replay; the changes are
run in a shuffled order each time, so that a periodic full garbage collection does not keep
landing on the same one), printed with its minimum, beside its bound, as a ratio to the load
time, and pass/fail on the median. Run with ``python bench/replay.py`` (``make bench`` runs
every script in bench/).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.formats import load_session
from core.formats.ctxscope_jsonl import write_session
from core.llm.mock import MockSummarizer
from core.model.session import Session, Usage, UsageConvention
from core.policy import PRESETS, Policy, get_preset
from core.replay import Replayer, compare
from tests.support.builders import SessionBuilder

WINDOW = 200_000
OVERHEAD = 4_200
RECORDED_COMPACT_AT = 167_000
TOKENS_PER_CHAR = 0.29  # a provider tokenizer on code and logs: a bit more than chars/4

_WORDS = [
    "the",
    "function",
    "returns",
    "a",
    "value",
    "when",
    "the",
    "input",
    "is",
    "valid",
    "otherwise",
    "it",
    "raises",
    "an",
    "error",
    "we",
    "read",
    "the",
    "config",
    "file",
    "and",
    "parse",
    "each",
    "section",
    "into",
    "a",
    "dict",
    "of",
    "settings",
    "the",
    "test",
    "suite",
    "runs",
    "in",
    "parallel",
    "and",
    "reports",
    "failures",
    "with",
    "a",
    "traceback",
    "import",
    "os",
    "sys",
    "json",
    "def",
    "class",
    "return",
    "yield",
    "async",
    "await",
    "self",
    "none",
    "true",
    "false",
    "for",
    "while",
    "if",
    "else",
    "elif",
    "try",
    "except",
    "finally",
    "with",
    "open",
    "path",
    "list",
    "dict",
    "set",
    "tuple",
    "int",
    "str",
    "float",
    "bytes",
    "print",
    "log",
]
_TOOLS = ("read", "bash", "grep", "edit", "write", "glob")


def _corpus(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        indent = "    " * rng.randrange(0, 4)
        words = rng.choices(_WORDS, k=rng.randrange(3, 14))
        line = indent + " ".join(words)
        if rng.random() < 0.5:
            line += "."  # prose has sentences; code lines and logs mostly do not
        if rng.random() < 0.15:
            line += f"  # line {len(lines)} value={rng.randrange(10**6)}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _output_size(rng: random.Random) -> int:
    # Calibrated on the public samples: tool outputs have a median near 200 characters and a
    # mean near 2 KB (a long tail of file reads and logs), assistant messages about 1 KB.
    if rng.random() < 0.015:
        return rng.randrange(10_000, 120_000)  # the occasional huge file or log
    return max(20, min(int(rng.lognormvariate(5.4, 1.6)), 60_000))


def make_session(n_messages: int = 10_000, seed: int = 7) -> Session:
    """A deterministic session of ``n_messages`` messages with recorded (Anthropic) usage."""
    rng = random.Random(seed)
    corpus = _corpus(rng, 2_000_000)

    def text(size: int) -> str:
        start = rng.randrange(0, len(corpus) - size - 1)
        return f"[{rng.randrange(10**9)}] " + corpus[start : start + size]

    def usage(context: int) -> Usage:
        return Usage(
            input=rng.randrange(1, 40),
            cache_read=max(0, context - 600),
            cache_write=min(600, context),
            output=rng.randrange(40, 900),
            convention=UsageConvention.ANTHROPIC,
        )

    built = SessionBuilder(model="claude-sonnet-4-5")
    messages = built.messages
    context = OVERHEAD

    def real_tokens() -> int:
        """What the last message adds to the context, for a provider's tokenizer."""
        message = messages[-1]
        size = len(message.text) + len(message.reasoning)
        if message.tool_result is not None:
            size += len(message.tool_result.output)
        for call in message.tool_calls:
            size += len(call.name) + len(str(call.arguments))
        return int(size * TOKENS_PER_CHAR) + 4

    while len(messages) < n_messages:
        if context > RECORDED_COMPACT_AT:
            built.compaction(text(rng.randrange(3_000, 9_000)), tokens_before=context)
            context = OVERHEAD + real_tokens()
        built.user(text(rng.randrange(40, 600)))
        context += real_tokens()
        for _step in range(rng.randrange(2, 14)):
            if len(messages) >= n_messages - 2:
                break
            calls = [
                (rng.choice(_TOOLS), {"path": f"src/module_{rng.randrange(400)}.py"})
                for _ in range(1 if rng.random() < 0.8 else rng.randrange(2, 4))
            ]
            recorded = usage(context)
            built.calls(calls, text=text(rng.randrange(20, 1500)), usage=recorded)
            context = recorded.prompt_tokens + real_tokens()
            for _call in calls:
                built.result(text(_output_size(rng)))
                context += real_tokens()
        if len(messages) < n_messages:
            recorded = usage(context)
            built.reply(text(rng.randrange(100, 1500)), usage=recorded)
            context = recorded.prompt_tokens + real_tokens()
    return built.session(
        id=f"bench-{n_messages}",
        model="claude-sonnet-4-5",
        window=WINDOW,
        max_output_tokens=64_000,
    )


def _timed(function: Callable[[], object]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


class TimedReplayer(Replayer):
    """A Replayer that adds up the time spent in compactions it had to run (cache misses):
    pruning, the split and the mock summariser, i.e. everything outside the replay engine."""

    def __init__(self, session: Session, **kwargs: Any) -> None:
        super().__init__(session, **kwargs)
        self.compaction_s = 0.0
        self.compactions_run = 0

    def _compact(self, items: Any, policy: Policy, window: int, auto: bool, now_ms: int) -> Any:
        before = len(self._compactions)
        started = time.perf_counter()
        outcome = super()._compact(items, policy, window, auto, now_ms)
        if len(self._compactions) != before or before >= 256:
            self.compaction_s += time.perf_counter() - started
            self.compactions_run += 1
        return outcome

    def reset_counters(self) -> None:
        self.compaction_s = 0.0
        self.compactions_run = 0


def _changes(base: Policy) -> list[tuple[str, Policy]]:
    out: list[tuple[str, Policy]] = []
    policy = base.model_copy(deep=True)
    policy.compaction.reserve_tokens += 4_000
    out.append(("reserve +4,000", policy))
    policy = base.model_copy(deep=True)
    policy.compaction.codex_ratio = 0.85
    policy.compaction.threshold_rule = "codex"
    out.append(("threshold rule -> codex 0.85", policy))
    policy = base.model_copy(deep=True)
    policy.truncation.max_bytes = 30_000
    out.append(("max_bytes 51,200 -> 30,000", policy))
    policy = base.model_copy(deep=True)
    policy.truncation.max_lines = 1_500
    out.append(("max_lines 2,000 -> 1,500", policy))
    policy = base.model_copy(deep=True)
    policy.split.tail_max_tokens = 12_000
    out.append(("tail_max_tokens 8,000 -> 12,000", policy))
    policy = base.model_copy(deep=True)
    policy.pruning.protected_tools = ["skill", "read"]
    out.append(("protected_tools += read", policy))
    policy = base.model_copy(deep=True)
    policy.pruning.protect_turns = 4
    out.append(("protect_turns 2 -> 4", policy))
    return out


def _unpruned_changes() -> tuple[Policy, list[tuple[str, Policy]]]:
    """A preset that does not prune, and a change of its (idle) pruning settings."""
    base = get_preset("claude-code")
    policy = base.model_copy(deep=True)
    policy.pruning.protect_turns = 4
    return base, [("claude-code, pruning off: protect_turns 2 -> 4", policy)]


REPEATS = 5
"""Fresh samples of each figure; the verdict is on their median (the machine is shared, so a
single sample says as much about the other processes as about the replay)."""


class Row:
    """One figure: its samples, bound, yardstick and what happened during the last sample."""

    def __init__(
        self, label: str, samples: list[float], bound: float | None, load: float, detail: str
    ) -> None:
        self.label = label
        self.samples = samples
        self.bound = bound
        self.load = load
        self.detail = detail

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def main() -> int:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        build_started = time.perf_counter()
        session = make_session(10_000)
        build_s = time.perf_counter() - build_started
        path = Path(folder) / "bench-10k.jsonl"
        write_session(session, path)
        size_mb = path.stat().st_size / 1e6
        load_s = statistics.median(_timed(lambda: load_session(path)) for _ in range(3))
        loaded = load_session(path)

        half = make_session(5_000, seed=11)
        half_path = Path(folder) / "bench-5k.jsonl"
        write_session(half, half_path)
        half_load_s = statistics.median(_timed(lambda: load_session(half_path)) for _ in range(3))
        half_loaded = load_session(half_path)

    print(
        f"session: {len(loaded.messages):,} messages, {len(loaded.model_calls()):,} calls, "
        f"{len(loaded.compactions)} recorded compactions, {size_mb:.1f} MB as ctxscope JSONL "
        f"(generated in {build_s:.2f} s)"
    )
    print(
        f"load_session: {load_s * 1000:.0f} ms (10k), {half_load_s * 1000:.0f} ms (5k), medians of 3"
    )
    print(f"each figure: median of {REPEATS} samples (min in brackets), a fresh Replayer each")
    print()

    policy = get_preset("seed")
    engine = TimedReplayer(loaded)
    first = _timed(lambda: engine.run(policy))
    rows.append(
        Row(
            "replay 10k, seed, mock LLM (counts tokens)",
            [first],
            1.0,
            load_s,
            "one sample: the token counts are cached after it; " + outside(engine),
        )
    )
    samples: list[float] = []
    for _ in range(REPEATS):
        engine = TimedReplayer(loaded)
        samples.append(_timed(partial(engine.run, policy)))
    rows.append(
        Row("replay 10k, seed, mock LLM (counts cached)", samples, 1.0, load_s, outside(engine))
    )

    # No preset uses tiktoken any more (claude-code counts chars/4), so nothing to pre-count.
    presets = [get_preset(name) for name in PRESETS]
    samples = []
    for _ in range(REPEATS):
        engine = TimedReplayer(loaded)
        samples.append(_timed(partial(compare, loaded, presets, replayer=engine)))
    rows.append(Row("compare 10k, all five presets", samples, 3.0, load_s, outside(engine)))

    # A summariser whose context every head outgrows: once the threshold is crossed, each
    # attempt fails and the check fires again before every later call. An attempt that would
    # fail as the last one did is not made again (it was: a whole summary request, and 16
    # shorter ones, per call).
    failing = get_preset("claude-code")
    samples = []
    for _ in range(REPEATS):
        small = MockSummarizer(context_limit_tokens=20_000)
        engine = TimedReplayer(loaded, summarizer_factory=lambda _policy, mock=small: mock)
        samples.append(_timed(partial(engine.run, failing)))
    summary = engine.run(failing).summary
    rows.append(
        Row(
            "replay 10k, claude-code, every compaction fails",
            samples,
            1.0,
            load_s,
            f"{summary.noop_compactions:,} attempts changed nothing, {summary.compactions} "
            f"compactions; {outside(engine)}",
        )
    )

    # Re-simulation: a fresh Replayer runs the base policy, then each change in turn (and back
    # to the base, as a user nudging a limit back and forth); REPEATS such sessions.
    base = get_preset("seed")
    changes = _changes(base)
    rows += _change_rows(half_loaded, base, changes, half_load_s)
    rows += _change_rows(half_loaded, *_unpruned_changes(), half_load_s)
    return _print(rows)


def outside(engine: TimedReplayer) -> str:
    """What the last run spent outside the walk."""
    return (
        f"{engine.compactions_run} compactions run, {engine.compaction_s * 1000:.0f} ms in "
        "prune+split+mock summary"
    )


def _change_rows(
    half_loaded: Session, base: Policy, changes: list[tuple[str, Policy]], half_load_s: float
) -> list[Row]:
    """A fresh Replayer runs ``base``, then each change in turn (and back to ``base``), on
    REPEATS fresh Replayers: a row per change, and one for the first run."""
    rows: list[Row] = []
    base_samples: list[float] = []
    change_samples: dict[str, list[float]] = {label: [] for label, _ in changes}
    details: dict[str, str] = {}
    order = random.Random(3)
    for _ in range(REPEATS):
        engine = TimedReplayer(half_loaded)
        base_samples.append(_timed(partial(engine.run, base)))
        base_detail = outside(engine)
        # A shuffled order: the garbage collector's periodic full passes (tens of ms over both
        # sessions and every cache) land on runs at a regular rhythm; in a fixed order they
        # would keep landing on the same change.
        for label, changed in order.sample(changes, len(changes)):
            engine.reset_counters()
            change_samples[label].append(_timed(partial(engine.run, changed)))
            result = engine.run(changed)
            resumed = result.resumed_from_call
            where = f"from call {resumed:,}/{len(result.points):,}" if resumed else "from the start"
            details[label] = f"{where}; {outside(engine)}"
            engine.run(base)
    rows.append(Row(f"5k: first run ({base.name})", base_samples, None, half_load_s, base_detail))
    for label, _changed in changes:
        rows.append(Row(f"5k: {label}", change_samples[label], 0.1, half_load_s, details[label]))
    return rows


def _print(rows: list[Row]) -> int:
    """Print the rows; 1 when a median misses its bound."""
    width = max(len(row.label) for row in rows)
    print(
        f"{'figure'.ljust(width)}  {'median':>10}  {'(min)':>10}  {'bound':>8}  {'x load':>7}  "
        "result  detail (last sample)"
    )
    failed = 0
    for row in rows:
        verdict = "-"
        if row.bound is not None:
            verdict = "pass" if row.median < row.bound else "FAIL"
            failed += verdict == "FAIL"
        bound_text = f"{row.bound * 1000:.0f} ms" if row.bound is not None else "-"
        print(
            f"{row.label.ljust(width)}  {row.median * 1000:7.1f} ms  "
            f"({min(row.samples) * 1000:6.1f})  {bound_text:>8}  "
            f"{row.median / row.load:7.2f}  {verdict:6}  {row.detail}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
