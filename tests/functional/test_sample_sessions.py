"""The sample sessions: generated deterministically, committed as generated, small enough, and
loadable, each showing what sample_sessions/README.md says it shows."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from core.formats import load_session
from core.model.session import Message, Role, Session
from tests.support.paths import REPO

ROOT = REPO
SAMPLES = ROOT / "sample_sessions"
DATA_DIRS = (
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
MAX_FILE_BYTES = 3 * 1024 * 1024
MAX_TOTAL_BYTES = 12 * 1024 * 1024


def _import(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    return _import("sample_sessions_generate", SAMPLES / "generate.py")


@pytest.fixture(scope="module")
def generated(generate: ModuleType) -> dict[str, bytes]:
    files: dict[str, bytes] = generate.build()
    return files


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for name in DATA_DIRS
        if (folder / name).is_dir()
        for p in sorted((folder / name).rglob("*"))
        if p.is_file()
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _load(rel: str) -> Session:
    session = load_session(SAMPLES / rel)
    assert session.messages, f"{rel} loaded no messages"
    return session


def _calls(session: Session) -> list[Message]:
    return [m for m in session.model_calls() if m.usage is not None]


# -- the generator ------------------------------------------------------------------------


def test_generator_is_deterministic_across_processes(
    generated: dict[str, bytes], tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run(
        [sys.executable, str(SAMPLES / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        env=env,
    )
    second = _tree(tmp_path)
    assert sorted(second) == sorted(generated)
    changed = [rel for rel in generated if second[rel] != generated[rel]]
    assert changed == []


def test_committed_samples_are_what_the_generator_writes(generated: dict[str, bytes]) -> None:
    committed = _tree(SAMPLES)
    assert sorted(committed) == sorted(generated), "run `make samples` and commit the result"
    stale = [rel for rel, data in generated.items() if committed[rel] != data]
    assert stale == [], f"run `make samples`: {stale}"


def test_samples_stay_small(generated: dict[str, bytes]) -> None:
    too_big = {rel: len(d) for rel, d in generated.items() if len(d) >= MAX_FILE_BYTES}
    assert too_big == {}
    assert sum(len(d) for d in generated.values()) < MAX_TOTAL_BYTES


def test_every_sample_has_a_readme_entry(generated: dict[str, bytes]) -> None:
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for rel in generated:
        if rel.startswith("opencode/storage/"):
            continue
        assert f"`{rel}`" in readme, f"{rel} is not described in sample_sessions/README.md"
    assert "`opencode/storage/`" in readme


# -- Claude Code --------------------------------------------------------------------------


def test_overflow_goes_over_the_window_right_after_the_big_tool_output() -> None:
    session = _load("claude-code/overflow.jsonl")
    assert session.format.value == "claude-code"
    tools = [m for m in session.messages if m.tool_result is not None]
    biggest = max(tools, key=lambda m: len(m.tool_result.output) if m.tool_result else 0)
    assert biggest.tool_result is not None
    assert len(biggest.tool_result.output) > 200_000  # the CI job log (~87k tokens)

    calls = _calls(session)
    after = next(m for m in calls if m.index > biggest.index)
    assert after.usage is not None
    assert after.usage.context_tokens > 200_000
    assert all(
        m.usage is not None and m.usage.context_tokens <= 200_000
        for m in calls
        if m.index < after.index
    )

    # the next request was refused as too long, and nothing was answered after it
    errors = [m for m in session.messages if m.error and "prompt is too long" in m.error.lower()]
    assert len(errors) == 1
    assert errors[0].index > after.index
    assert errors[0].index == len(session.messages) - 1


def test_overflow_has_the_claude_code_line_shapes() -> None:
    raw = _lines(SAMPLES / "claude-code/overflow.jsonl")
    types = {r.get("type") for r in raw}
    assert {"user", "assistant", "progress", "file-history-snapshot", "system"} <= types
    assert any(r.get("isMeta") for r in raw)
    assert any("toolUseResult" in r for r in raw)
    # one line per content block, sharing message id, requestId and usage input figures
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in raw:
        if r.get("type") == "assistant" and not r.get("isApiErrorMessage"):
            by_id.setdefault(r["message"]["id"], []).append(r)
    multi = [group for group in by_id.values() if len(group) > 1]
    assert multi
    for group in multi:
        assert len({g["requestId"] for g in group}) == 1
        assert len({g["message"]["usage"]["cache_read_input_tokens"] for g in group}) == 1
    # the uuid chain holds: every parentUuid names an earlier line
    seen: set[str] = set()
    for r in raw:
        if r.get("parentUuid"):
            assert r["parentUuid"] in seen
        if "uuid" in r:
            seen.add(r["uuid"])
    assert raw[-1].get("isApiErrorMessage") is True


def test_compacted_has_an_auto_and_a_manual_compaction() -> None:
    raw = _lines(SAMPLES / "claude-code/compacted.jsonl")
    boundaries = [r["compactMetadata"] for r in raw if r.get("subtype") == "compact_boundary"]
    assert [b["trigger"] for b in boundaries] == ["auto", "manual"]
    assert sum(1 for r in raw if r.get("isCompactSummary")) == 2

    session = _load("claude-code/compacted.jsonl")
    assert [c.trigger for c in session.compactions] == ["auto", "manual"]
    assert [c.tokens_before for c in session.compactions] == [b["preTokens"] for b in boundaries]
    auto = session.compactions[0]
    assert auto.tokens_before is not None and 160_000 < auto.tokens_before < 175_000
    # the summary follows each boundary
    for event in session.compactions:
        assert session.messages[event.message_index].summary


def test_claude_long_is_long_and_compacts_once() -> None:
    session = _load("claude-code/long.jsonl")
    assert len(session.messages) >= 2_500
    assert [c.trigger for c in session.compactions] == ["auto"]
    assert len(session.turn_starts()) >= 150


def test_live_session_loads_and_grows_to_a_complete_session(tmp_path: Path) -> None:
    grow = _import("sample_sessions_grow", SAMPLES / "grow.py")
    target = tmp_path / "growing.jsonl"
    shutil.copyfile(SAMPLES / "live/growing.jsonl", target)
    before = load_session(target)
    assert before.diagnostics == []
    assert grow.main([str(target), "--interval", "0", "--count", "5"]) == 0
    assert target.read_bytes().count(b"\n") == before.messages[-1].source_line + 5  # type: ignore[operator]
    assert grow.main([str(target), "--interval", "0"]) == 0
    after = load_session(target)
    assert after.diagnostics == []
    assert len(after.messages) > 3 * len(before.messages)
    assert after.messages[: len(before.messages)] == before.messages
    assert grow.main([str(target), "--interval", "0"]) == 0  # nothing left: no change
    assert load_session(target).messages == after.messages


def test_grow_continues_a_partial_last_line(tmp_path: Path) -> None:
    grow = _import("sample_sessions_grow", SAMPLES / "grow.py")
    head, full = grow.sequence()
    cut = len(head) + 137  # in the middle of the first appended line
    target = tmp_path / "partial.jsonl"
    target.write_bytes(full[:cut])
    assert grow.main([str(target), "--interval", "0", "--split-every", "1"]) == 0
    assert target.read_bytes() == full


def test_grow_refuses_anything_but_a_live_sample(tmp_path: Path) -> None:
    grow = _import("sample_sessions_grow", SAMPLES / "grow.py")
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"type":"user"}\n')
    link = tmp_path / "link.jsonl"
    real = tmp_path / "real.jsonl"
    shutil.copyfile(SAMPLES / "live/growing.jsonl", real)
    link.symlink_to(real)
    before = {p.name: p.read_bytes() for p in (other, real)}

    assert grow.main([str(other), "--interval", "0"]) == 2
    assert grow.main([str(link), "--interval", "0"]) == 2
    assert grow.main([str(tmp_path), "--interval", "0"]) == 2
    assert grow.main([str(tmp_path / "missing.jsonl"), "--interval", "0"]) == 2
    assert grow.main([str(real), "--init"]) == 2  # --init never overwrites
    assert {p.name: p.read_bytes() for p in (other, real)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "other.jsonl", "real.jsonl"]

    fresh = tmp_path / "fresh.jsonl"
    assert grow.main([str(fresh), "--init"]) == 0
    assert fresh.read_bytes() == (SAMPLES / "live/growing.jsonl").read_bytes()


# -- Codex --------------------------------------------------------------------------------


def _codex_path() -> Path:
    (path,) = sorted((SAMPLES / "codex").glob("rollout-2026-03-14T09-12-33-*.jsonl"))
    return path


def test_codex_rollout_compacts_once_with_the_recorded_window() -> None:
    path = _codex_path()
    raw = _lines(path)
    assert raw[0]["type"] == "session_meta"
    assert path.name.endswith(f"{raw[0]['payload']['id']}.jsonl")
    compacted = [r for r in raw if r["type"] == "compacted"]
    assert len(compacted) == 1 and compacted[0]["payload"]["replacement_history"]
    following = raw[raw.index(compacted[0]) + 1]
    assert following["payload"] == {"type": "context_compacted"}
    windows = {
        r["payload"]["info"]["model_context_window"]
        for r in raw
        if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
    }
    assert windows == {258_400}
    contexts = {
        r["payload"].get("truncation_policy")["mode"] for r in raw if r["type"] == "turn_context"
    }
    assert contexts == {"tokens"}

    session = load_session(path)
    assert session.format.value == "codex"
    assert len(session.compactions) == 1
    assert session.context_window == 258_400
    # compaction fired on Codex's own rule: the last call's total plus Codex's estimate of the
    # tool outputs recorded since reached 90 % of the raw 272k window; no earlier call's did
    cut = session.compactions[0].message_index
    before = [m for m in _calls(session) if m.index < cut]
    last = before[-1]
    assert last.usage is not None and last.usage.total is not None
    since = sum(m.agent_estimate_tokens or 0 for m in session.messages[last.index + 1 : cut])
    assert last.usage.total + since >= 244_800 > last.usage.total
    assert all(m.usage is not None and m.usage.context_after_reply < 244_800 for m in before[:-1])


def test_codex_duplicated_events_are_not_double_counted() -> None:
    raw = _lines(_codex_path())
    user_items = [
        r
        for r in raw
        if r["type"] == "response_item"
        and r["payload"].get("role") == "user"
        and not r["payload"]["content"][0]["text"].startswith(("# AGENTS.md", "<"))
    ]
    echoes = [r for r in raw if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"]
    assert len(echoes) == len(user_items) == 4
    session = load_session(_codex_path())
    real_users = [m for m in session.messages if m.is_turn_start]
    assert len(real_users) == 4


# -- pi -----------------------------------------------------------------------------------


def test_pi_compaction_records_the_last_assistant_total() -> None:
    raw = _lines(SAMPLES / "pi/session.jsonl")
    assert raw[0]["type"] == "session" and raw[0]["version"] == 3
    assert {"model_change", "thinking_level_change", "compaction"} <= {r["type"] for r in raw}
    roles = {r["message"]["role"] for r in raw if r["type"] == "message"}
    assert roles == {"user", "assistant", "toolResult", "bashExecution"}
    (k,) = [i for i, r in enumerate(raw) if r["type"] == "compaction"]
    last_total = next(
        r["message"]["usage"]["totalTokens"]
        for r in reversed(raw[:k])
        if r["type"] == "message" and r["message"]["role"] == "assistant"
    )
    assert raw[k]["tokensBefore"] == last_total
    assert last_total > 200_000 - 16_384
    # every earlier assistant was under the threshold: it fired right after the crossing turn
    earlier = [
        r["message"]["usage"]["totalTokens"]
        for r in raw[:k]
        if r["type"] == "message" and r["message"]["role"] == "assistant"
    ]
    crossing = next(i for i, t in enumerate(earlier) if t > 200_000 - 16_384)
    assert crossing >= len(earlier) - 6
    assert raw[k]["firstKeptEntryId"] in {r.get("id") for r in raw[:k]}

    session = _load("pi/session.jsonl")
    (event,) = session.compactions
    assert event.tokens_before == last_total
    assert event.first_kept_id == raw[k]["firstKeptEntryId"]
    assistants = [m for m in session.messages[: event.message_index] if m.role is Role.ASSISTANT]
    assert assistants[-1].usage is not None and assistants[-1].usage.total == last_total


def test_pi_branched_loads_the_active_branch_only() -> None:
    raw = _lines(SAMPLES / "pi/branched.jsonl")
    texts = {
        r["id"]: r["message"]["content"][0]["text"]
        for r in raw
        if r["type"] == "message" and r["message"]["role"] == "user"
    }
    abandoned = next(t for t in texts.values() if t.startswith("Catch ImportError"))
    kept = next(t for t in texts.values() if t.startswith("No, keep it local"))
    parents = [r.get("parentId") for r in raw[1:]]
    assert len(parents) != len(set(parents)), "the file should hold a fork in the tree"
    session = _load("pi/branched.jsonl")
    loaded = [m.text for m in session.messages]
    assert kept in loaded
    assert abandoned not in loaded


# -- opencode -----------------------------------------------------------------------------


def test_opencode_export_prunes_and_compacts() -> None:
    data = json.loads((SAMPLES / "opencode/export.json").read_text(encoding="utf-8"))
    assert set(data) == {"info", "messages"}
    parts = [p for m in data["messages"] for p in m["parts"]]
    pruned = [p for p in parts if p["type"] == "tool" and "compacted" in p["state"]["time"]]
    assert len(pruned) >= 10
    assert sum(1 for p in parts if p["type"] == "compaction") == 1
    assert sum(1 for m in data["messages"] if m["info"].get("summary") is True) == 1

    session = _load("opencode/export.json")
    assert session.format.value == "opencode"
    assert [c.trigger for c in session.compactions] == ["auto"]
    loaded_pruned = [m for m in session.messages if m.tool_result and m.tool_result.compacted_at_ms]
    assert len(loaded_pruned) == len(pruned)
    assert any(m.tool_result and m.tool_result.truncated_by_tool for m in session.messages)
    assert any(m.synthetic for m in session.messages)


def test_opencode_storage_folder_loads() -> None:
    storage = SAMPLES / "opencode/storage"
    message_files = sorted(storage.glob("message/*/*.json"))
    assistants = [
        p for p in message_files if json.loads(p.read_text(encoding="utf-8"))["role"] == "assistant"
    ]
    session = load_session(storage)
    assert session.format.value == "opencode"
    assert len(session.model_calls()) == len(assistants) > 0
    assert next(m.text for m in session.messages if m.is_turn_start).startswith(
        "What does the status"
    )


# -- ctxscope -----------------------------------------------------------------------------


def test_ctxscope_long_has_the_generated_number_of_messages(generate: ModuleType) -> None:
    session = _load("ctxscope/long.jsonl")
    assert session.format.value == "ctxscope"
    assert len(session.messages) == generate.CTXSCOPE_MESSAGES == 6_000
    assert [m.index for m in session.messages] == list(range(6_000))
    assert len(session.compactions) >= 1
    assert session.diagnostics == []


# -- Gemini CLI, Qwen Code, the compressed rollout ------------------------------------------

GEMINI_JSONL = "gemini-cli/session-2026-03-10T14-05-compress.jsonl"
GEMINI_SINGLE = "gemini-cli/session-2026-03-09T10-41-single.json"
QWEN = "qwen-code/9ec676af-6f14-4479-96a7-1b971a943395.jsonl"
CODEX_ZST = "codex/rollout-2026-03-02T08-30-10-019cad74-5bd0-7044-be83-91e1c8a92e0c.jsonl.zst"


def test_gemini_jsonl_sample_compresses_once_and_leaves_the_rewound_turn_out() -> None:
    session = _load(GEMINI_JSONL)
    assert session.format.value == "gemini-cli"
    lines = [json.loads(line) for line in (SAMPLES / GEMINI_JSONL).read_text().splitlines()]
    rewound = next(r["$rewindTo"] for r in lines if "$rewindTo" in r)
    assert rewound not in {m.id for m in session.messages}
    assert all("bold" not in m.text for m in session.messages if m.role is Role.USER)
    assert [c.source_line for c in session.compactions] == [10]
    summary = session.messages[session.compactions[0].message_index]
    assert summary.summary and "<state_snapshot>" in summary.text
    assert len(_calls(session)) == 6


def test_gemini_single_json_sample_loads_every_call() -> None:
    session = _load(GEMINI_SINGLE)
    record = json.loads((SAMPLES / GEMINI_SINGLE).read_text())
    gemini = [m for m in record["messages"] if m["type"] == "gemini"]
    assert [c.usage.prompt_tokens for c in _calls(session) if c.usage] == [
        m["tokens"]["input"] for m in gemini
    ]


def test_qwen_sample_is_qwen_with_its_compression_and_without_the_background_call() -> None:
    session = _load(QWEN)
    assert session.format.value == "qwen-code"
    assert len(_calls(session)) == 5
    assert session.metadata["subagent_calls"] == 1
    (event,) = session.compactions
    assert event.trigger == "manual" and event.source_line == 9


def test_compressed_codex_sample_loads_like_its_plain_bytes(tmp_path: Path) -> None:
    import zstandard

    plain = tmp_path / "rollout.jsonl"
    plain.write_bytes(zstandard.ZstdDecompressor().decompress((SAMPLES / CODEX_ZST).read_bytes()))
    compressed, uncompressed = _load(CODEX_ZST), load_session(plain)
    assert compressed.format.value == "codex"
    assert [m.usage for m in compressed.messages] == [m.usage for m in uncompressed.messages]
    assert len(_calls(compressed)) == 5
