"""Loader benchmark: how fast and how lean are the Claude Code and Codex loaders?

Generates (deterministically, in a temporary folder) a realistic ~100 MB Claude Code transcript and
a ~100 MB Codex rollout, then measures for each:

* floor       — a bare loop of ``orjson.loads`` over the file's lines;
* load        — ``load_session`` into a Session, bound ≤ 2.5 × floor: the median ratio of 7
                floor/load pairs run back to back (best times are printed too);
* throughput  — file MB (10^6 bytes) / load time, bound > 126 MB/s (ccviewer's parser);

The bounds apply to wall-clock time; CPU time is printed beside it because the machine may be
shared (wall time then includes waiting for a core).
* peak RSS    — of one load in a fresh interpreter, as the growth of the peak RSS over the
                baseline of that interpreter after its imports; bound < 2 × file size;
* detection   — bytes read by ``detect_format`` (the open file is instrumented), bound ≤ 64 KB.

Run: ``.venv/bin/python bench/load.py [--mb 100] [--keep DIR]``. Prints a table with each figure
beside its bound and exits 1 when a bound is missed.
"""

from __future__ import annotations

import argparse
import builtins
import io
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import detect_format, load_session  # noqa: E402

FLOOR_RATIO_BOUND = 2.5
THROUGHPUT_BOUND_MBS = 126.0
RSS_RATIO_BOUND = 2.0
DETECT_BOUND_BYTES = 64 * 1024
RUNS = 7

_WORDS = (  # noqa: SIM905 - a word pool, easier to read as one string
    "def class return self value result items config session message token window context "
    "import from await async for while if else try except raise yield lambda None True False "
    "path file line offset buffer chunk parse load write read open close count total index "
    "usage input output cache limit budget prune split summary compact policy replay tool call"
).split()


def _code_pool(rng: random.Random, n: int = 4000) -> list[str]:
    pool = []
    for _ in range(n):
        indent = " " * (4 * rng.randint(0, 3))
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 12)))
        pool.append(f"{indent}{words}")
    return pool


def _read_output(rng: random.Random, pool: list[str], size: int) -> str:
    """A Read-tool style output: numbered lines with Claude Code's → arrow (non-ASCII)."""
    lines: list[str] = []
    total = 0
    start = rng.randrange(len(pool))
    n = 1
    while total < size:
        line = f"{n:>6}→{pool[(start + n) % len(pool)]}"
        lines.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(lines)


def _shell_output(rng: random.Random, pool: list[str], size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        line = pool[rng.randrange(len(pool))].strip()
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _dump(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def generate_claude(path: Path, target_bytes: int, seed: int = 7) -> None:
    """A Claude Code 2.1-style transcript: block-per-line assistant messages with repeated usage,
    hook progress lines, file-history snapshots, tool results with large outputs (and the UI's
    toolUseResult copy), and an auto compaction every ~150 turns."""
    rng = random.Random(seed)
    pool = _code_pool(rng)
    sid = "5e551011-0000-4000-8000-000000000001"
    envelope = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": sid,
        "version": "2.1.39",
        "gitBranch": "main",
        "slug": "quiet-bench-run",
    }
    counter = 0

    def uid() -> str:
        nonlocal counter
        counter += 1
        return f"00000000-0000-4000-8000-{counter:012d}"

    written = 0
    parent: str | None = None
    context = 20_000
    turn = 0
    with open(path, "wb") as f:

        def emit(obj: dict[str, Any]) -> None:
            nonlocal written
            data = _dump(obj)
            f.write(data)
            written += len(data)

        while written < target_bytes:
            turn += 1
            ts = f"2026-03-01T10:{turn % 60:02d}:00.000Z"
            user_id = uid()
            emit(
                {
                    "type": "file-history-snapshot",
                    "messageId": user_id,
                    "snapshot": {"messageId": user_id, "trackedFileBackups": {}, "timestamp": ts},
                    "isSnapshotUpdate": False,
                }
            )
            emit(
                {
                    "parentUuid": parent,
                    **envelope,
                    "type": "user",
                    "message": {"role": "user", "content": " ".join(rng.choices(_WORDS, k=40))},
                    "uuid": user_id,
                    "timestamp": ts,
                }
            )
            parent = user_id
            for round_ in range(rng.randint(1, 4)):
                msg_id = f"msg_{turn:06d}_{round_}"
                req_id = f"req_{turn:06d}_{round_}"
                usage = {
                    "input_tokens": 3,
                    "cache_creation_input_tokens": rng.randint(200, 4000),
                    "cache_read_input_tokens": context,
                    "cache_creation": {"ephemeral_5m_input_tokens": 0},
                    "output_tokens": rng.randint(20, 900),
                    "service_tier": "standard",
                }
                blocks: list[dict[str, Any]] = [
                    {
                        "type": "thinking",
                        "thinking": _shell_output(rng, pool, 600),
                        "signature": "Eo" + "A" * 400,
                    },
                    {"type": "text", "text": " ".join(rng.choices(_WORDS, k=30))},
                ]
                calls = []
                for _ in range(rng.randint(1, 2)):
                    call_id = f"toolu_{uid()[-12:]}"
                    calls.append(call_id)
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": "Read",
                            "input": {
                                "file_path": f"/home/dev/project/src/m{rng.randint(1, 500)}.py"
                            },
                        }
                    )
                for block in blocks:
                    line_id = uid()
                    emit(
                        {
                            "parentUuid": parent,
                            **envelope,
                            "message": {
                                "model": "claude-opus-4-6",
                                "id": msg_id,
                                "type": "message",
                                "role": "assistant",
                                "content": [block],
                                "stop_reason": None,
                                "stop_sequence": None,
                                "usage": usage,
                            },
                            "requestId": req_id,
                            "type": "assistant",
                            "uuid": line_id,
                            "timestamp": ts,
                        }
                    )
                    parent = line_id
                for call_id in calls:
                    for hook in range(rng.randint(2, 4)):
                        progress_id = uid()
                        emit(
                            {
                                "parentUuid": parent,
                                **envelope,
                                "type": "progress",
                                "data": {
                                    "type": "hook_progress",
                                    "hookEvent": "PreToolUse",
                                    "hookName": "PreToolUse:Read",
                                    "command": f"${{CLAUDE_PLUGIN_ROOT}}/hooks/check-{hook}.sh",
                                },
                                "toolUseID": call_id,
                                "parentToolUseID": call_id,
                                "uuid": progress_id,
                                "timestamp": ts,
                            }
                        )
                        parent = progress_id
                for call_id in calls:
                    output = _read_output(rng, pool, rng.randint(2_000, 30_000))
                    result_id = uid()
                    emit(
                        {
                            "parentUuid": parent,
                            **envelope,
                            "type": "user",
                            "message": {
                                "role": "user",
                                "content": [
                                    {
                                        "tool_use_id": call_id,
                                        "type": "tool_result",
                                        "content": output,
                                    }
                                ],
                            },
                            "uuid": result_id,
                            "timestamp": ts,
                            "toolUseResult": {
                                "type": "text",
                                "file": {
                                    "filePath": "/home/dev/project/src/x.py",
                                    "content": output,
                                },
                            },
                            "sourceToolAssistantUUID": parent,
                        }
                    )
                    parent = result_id
                    context += len(output) // 4
            final_id = uid()
            emit(
                {
                    "parentUuid": parent,
                    **envelope,
                    "message": {
                        "model": "claude-opus-4-6",
                        "id": f"msg_{turn:06d}_final",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": _shell_output(rng, pool, 800)}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 3,
                            "cache_creation_input_tokens": 500,
                            "cache_read_input_tokens": context,
                            "output_tokens": 300,
                        },
                    },
                    "requestId": f"req_{turn:06d}_final",
                    "type": "assistant",
                    "uuid": final_id,
                    "timestamp": ts,
                }
            )
            parent = final_id
            if context > 160_000:
                boundary = uid()
                emit(
                    {
                        "parentUuid": None,
                        "logicalParentUuid": parent,
                        **envelope,
                        "type": "system",
                        "subtype": "compact_boundary",
                        "content": "Conversation compacted",
                        "isMeta": False,
                        "timestamp": ts,
                        "uuid": boundary,
                        "level": "info",
                        "compactMetadata": {"trigger": "auto", "preTokens": context},
                    }
                )
                summary_id = uid()
                emit(
                    {
                        "parentUuid": boundary,
                        **envelope,
                        "type": "user",
                        "message": {"role": "user", "content": _shell_output(rng, pool, 6000)},
                        "isVisibleInTranscriptOnly": True,
                        "isCompactSummary": True,
                        "uuid": summary_id,
                        "timestamp": ts,
                    }
                )
                parent = summary_id
                context = 30_000


def generate_codex(path: Path, target_bytes: int, seed: int = 11, *, small: bool = False) -> None:
    """A Codex 0.12x-style rollout: session_meta, per turn task_started / user message (+ its
    user_message echo) / turn_context, then rounds of reasoning, commentary, function calls,
    token_count, outputs and the repeated token_count.

    ``small``: tool outputs of 300-1,500 bytes and short encrypted reasoning (100 MB: about
    150,000 messages) instead of 2-30 KB outputs."""
    output_sizes = (300, 1_500) if small else (2_000, 30_000)
    encrypted_sizes = (100, 400) if small else (800, 3_000)
    rng = random.Random(seed)
    pool = _code_pool(rng)
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
             "reasoning_output_tokens": 0, "total_tokens": 0}  # fmt: skip
    written = 0
    context = 18_000
    with open(path, "wb") as f:

        def emit(kind: str, payload: dict[str, Any]) -> None:
            nonlocal written
            data = _dump(
                {"timestamp": "2026-05-11T08:27:17.490Z", "type": kind, "payload": payload}
            )
            f.write(data)
            written += len(data)

        emit(
            "session_meta",
            {
                "id": "019e1625-0000-7000-8000-000000000001",
                "timestamp": "2026-05-11T08:26:55.042Z",
                "cwd": "/home/dev/project",
                "originator": "codex-tui",
                "cli_version": "0.125.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": _shell_output(rng, pool, 13_000)},
            },
        )
        turn = 0
        while written < target_bytes:
            turn += 1
            turn_id = f"019e1625-{turn:04d}-7000-8000-000000000000"
            emit(
                "event_msg",
                {"type": "task_started", "turn_id": turn_id, "model_context_window": 258400},
            )
            prompt = " ".join(rng.choices(_WORDS, k=30))
            emit("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": prompt}]})  # fmt: skip
            emit("event_msg", {"type": "user_message", "message": prompt, "images": []})
            emit(
                "turn_context",
                {"turn_id": turn_id, "cwd": "/home/dev/project", "model": "gpt-5.5",
                 "truncation_policy": {"mode": "tokens", "limit": 10000}},
            )  # fmt: skip
            for _ in range(rng.randint(2, 6)):
                summary = " ".join(rng.choices(_WORDS, k=12))
                emit("event_msg", {"type": "agent_reasoning", "text": summary})
                emit("response_item", {"type": "reasoning",
                                       "summary": [{"type": "summary_text", "text": summary}],
                                       "content": None,
                                       "encrypted_content": "gAAAAB" + "x" * rng.randint(*encrypted_sizes)})  # fmt: skip
                note = " ".join(rng.choices(_WORDS, k=25))
                emit("event_msg", {"type": "agent_message", "message": note})
                emit("response_item", {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": note}],
                                       "phase": "commentary"})  # fmt: skip
                calls = [
                    f"call_{turn:05d}_{rng.randrange(10**8):08d}" for _ in range(rng.randint(1, 3))
                ]
                for call_id in calls:
                    args = json.dumps({"cmd": f"sed -n '1,200p' src/m{rng.randint(1, 500)}.py",
                                       "yield_time_ms": 1000, "max_output_tokens": 12000})  # fmt: skip
                    emit("response_item", {"type": "function_call", "name": "exec_command",
                                           "arguments": args, "call_id": call_id})  # fmt: skip
                out_tokens = rng.randint(50, 900)
                last = {"input_tokens": context, "cached_input_tokens": context - rng.randint(100, 3000),
                        "output_tokens": out_tokens, "reasoning_output_tokens": out_tokens // 3,
                        "total_tokens": context + out_tokens}  # fmt: skip
                for key in total:
                    total[key] += last[key]
                info = {"total_token_usage": dict(total), "last_token_usage": last,
                        "model_context_window": 258400}  # fmt: skip
                rate = {
                    "limit_id": "codex",
                    "primary": {"used_percent": 13.0, "window_minutes": 300},
                }
                emit("event_msg", {"type": "token_count", "info": info, "rate_limits": rate})
                for call_id in calls:
                    output = _shell_output(rng, pool, rng.randint(*output_sizes))
                    emit("response_item", {"type": "function_call_output", "call_id": call_id,
                                           "output": f"Chunk ID: a21e41\nWall time: 1.0 seconds\nOutput:\n{output}"})  # fmt: skip
                    context += len(output) // 4
                emit("event_msg", {"type": "token_count", "info": info, "rate_limits": rate})
            final = _shell_output(rng, pool, 800)
            emit("event_msg", {"type": "agent_message", "message": final})
            emit("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": final}],
                                   "phase": "final_answer"})  # fmt: skip
            emit("event_msg", {"type": "task_complete", "turn_id": turn_id})
            if context > 230_000:
                emit("compacted", {"message": "", "replacement_history": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
                    {"type": "compaction", "encrypted_content": "gAAAAB" + "y" * 8000}]})  # fmt: skip
                emit("event_msg", {"type": "context_compacted"})
                context = 25_000


# -- measurements ---------------------------------------------------------------------------


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def paired_runs(n: int, floor: Callable[[], Any], load: Callable[[], Any]) -> dict[str, float]:
    """``n`` floor runs and ``n`` load runs, alternated so each pair sees the same machine.

    Returns the best wall and CPU time of each, and the median of the per-pair ratios (wall and
    CPU): on a shared machine the best times of two separate series may come from quiet and
    busy moments, the ratio of runs made back to back does not.
    """
    floors: list[tuple[float, float]] = []
    loads: list[tuple[float, float]] = []
    for _ in range(n):
        floors.append(_timed(floor))
        loads.append(_timed(load))
    return {
        "floor": min(w for w, _ in floors),
        "floor_cpu": min(c for _, c in floors),
        "load": min(w for w, _ in loads),
        "load_cpu": min(c for _, c in loads),
        "ratio": statistics.median(lw / fw for (fw, _), (lw, _) in zip(floors, loads, strict=True)),
        "ratio_cpu": statistics.median(
            lc / fc for (_, fc), (_, lc) in zip(floors, loads, strict=True)
        ),
    }


def floor_loop(path: Path) -> int:
    """The floor: parse every line with orjson and drop it."""
    loads = orjson.loads
    count = 0
    with open(path, "rb") as f:
        for line in f:
            loads(line)
            count += 1
    return count


_RSS_PROBE = r"""
import resource, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from core.formats import load_session
import core.formats.claude_code, core.formats.codex, core.model.session, orjson

def rss_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0

base = rss_kb("VmRSS")
session = load_session(Path({path!r}))
peak = rss_kb("VmHWM")
print(base, peak, len(session.messages))
"""


def peak_rss(path: Path) -> tuple[int, int, int]:
    """(baseline KB, peak KB, messages) of one load in a fresh interpreter."""
    code = _RSS_PROBE.format(root=str(ROOT), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    base, peak, messages = (int(x) for x in out.stdout.split())
    return base, peak, messages


class _CountingFile(io.RawIOBase):
    """Wraps an open binary file and counts the bytes handed out."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner = inner
        self._counter = counter

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._inner.read(size)
        self._counter[0] += len(data)
        return data

    def readline(self, size: int | None = -1) -> bytes:
        data: bytes = self._inner.readline(size)
        self._counter[0] += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        n: int = self._inner.readinto(buffer)
        self._counter[0] += n or 0
        return n

    def __iter__(self) -> Iterator[bytes]:
        for line in self._inner:
            self._counter[0] += len(line)
            yield line

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._inner.seek(offset, whence))

    def close(self) -> None:
        self._inner.close()
        super().close()


def detection_bytes(path: Path) -> tuple[str, int]:
    """Run detect_format with every open() instrumented; return (format, bytes read)."""
    counter = [0]
    real_open = builtins.open

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if "b" in mode and "r" in mode:
            return _CountingFile(handle, counter)
        return handle  # text opens are counted through their buffer below

    builtins.open = counting_open
    io.open = counting_open  # pathlib opens through io.open
    try:
        fmt = detect_format(path)
    finally:
        builtins.open = real_open
        io.open = real_open
    return fmt.value, counter[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mb", type=float, default=100.0, help="size of each generated file (10^6 bytes)"
    )
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()
    target = int(args.mb * 1_000_000)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="ctxscope-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "claude-code": (folder / "5e551011-0000-4000-8000-000000000001.jsonl", generate_claude),
        "codex": (
            folder / "rollout-2026-05-11T08-26-55-019e1625-0000-7000-8000-000000000001.jsonl",
            generate_codex,
        ),
    }
    rows: list[tuple[str, str, str, bool]] = []
    failed = False
    try:
        for name, (path, generate) in files.items():
            if not path.exists() or path.stat().st_size < target:
                start = time.perf_counter()
                generate(path, target)
                print(
                    f"generated {name}: {path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s",
                    file=sys.stderr,
                )
            size = path.stat().st_size
            mb = size / 1e6
            lines = floor_loop(path)
            session = load_session(path)
            runs = paired_runs(RUNS, partial(floor_loop, path), partial(load_session, path))
            floor, floor_cpu, load, load_cpu = (
                runs["floor"],
                runs["floor_cpu"],
                runs["load"],
                runs["load_cpu"],
            )
            base_kb, peak_kb, _ = peak_rss(path)
            fmt, head_bytes = detection_bytes(path)
            delta_mb = (peak_kb - base_kb) * 1024 / 1e6
            checks = [
                (f"{name}: file", f"{mb:.1f} MB, {lines:,} lines, {len(session.messages):,} messages, "
                 f"{len(session.model_calls()):,} calls, {len(session.compactions)} compactions", "", True),
                (f"{name}: floor (orjson loop)", f"{floor:.3f} s ({mb / floor:.0f} MB/s); "
                 f"CPU {floor_cpu:.3f} s", "", True),
                (f"{name}: load_session", f"{load:.3f} s; {runs['ratio']:.2f} x floor "
                 f"(CPU {load_cpu:.3f} s, {runs['ratio_cpu']:.2f} x)",
                 f"<= {FLOOR_RATIO_BOUND} x floor", runs["ratio"] <= FLOOR_RATIO_BOUND),
                (f"{name}: throughput", f"{mb / load:.0f} MB/s (CPU: {mb / load_cpu:.0f} MB/s)",
                 f"> {THROUGHPUT_BOUND_MBS:.0f} MB/s", mb / load > THROUGHPUT_BOUND_MBS),
                (f"{name}: peak RSS growth", f"{delta_mb:.0f} MB = {delta_mb / mb:.2f} x file "
                 f"(baseline {base_kb / 1024:.0f} MiB, peak {peak_kb / 1024:.0f} MiB)",
                 f"< {RSS_RATIO_BOUND} x file", delta_mb / mb < RSS_RATIO_BOUND),
                (f"{name}: detection", f"{head_bytes:,} bytes read -> {fmt}",
                 f"<= {DETECT_BOUND_BYTES:,} bytes", head_bytes <= DETECT_BOUND_BYTES and fmt == name),
            ]  # fmt: skip
            for label, value, bound, ok in checks:
                rows.append((label, value, bound, ok))
                failed |= not ok
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':<{vwidth}}  {'bound':<16}  ok")
    for label, value, bound, ok in rows:
        mark = "" if not bound else ("yes" if ok else "NO")
        print(f"{label:<{width}}  {value:<{vwidth}}  {bound:<16}  {mark}")
    print(
        f"python {sys.version.split()[0]}, orjson {orjson.__version__}; {RUNS} floor/load pairs: best times, median ratios; page cache warm"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
