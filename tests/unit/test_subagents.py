"""Sub-agents know their parent, and parents their sub-agents (Claude Code, Codex, opencode,
Copilot CLI): on small files written here and on the real families when present."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.fleet.survey import analyse, subagent_summaries
from core.formats import load_session
from core.formats.subagents import calls_during, child_paths
from tests.support.paths import REPO

SHARED = REPO.parent / "shared"
FAMILY = SHARED / "samples" / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = SHARED / "new-formats" / "codex-subagents"
CODEX_PARENT = CODEX / "codex-0.118.0_gitsync-1a1fb1d80eaf-1.jsonl"
PARENT_THREAD = "019d7d08-46c9-7f73-affe-4e6ca9852d56"

SID = "11111111-2222-4333-8444-555555555555"


def _line(kind: str, uuid: str, parent: str | None, ts: str, **extra: object) -> str:
    record = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": ts,
        "version": "2.1.39",
        "cwd": "/p",
        **extra,
    }
    return json.dumps(record) + "\n"


def _assistant(uuid: str, parent: str, ts: str, text: str, tokens: int, **extra: object) -> str:
    message = {
        "id": f"msg-{uuid}",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": tokens, "output_tokens": 10},
    }
    return _line("assistant", uuid, parent, ts, message=message, **extra)


def _family(tmp_path: Path) -> Path:
    parent = tmp_path / f"{SID}.jsonl"
    parent.write_text(
        _line(
            "user",
            "u1",
            None,
            "2026-02-01T10:00:00Z",
            message={"role": "user", "content": "research hooks"},
        )
        + _assistant("a1", "u1", "2026-02-01T10:00:05Z", "starting a task", 20_000)
        + _assistant("a2", "a1", "2026-02-01T10:02:00Z", "the task says", 30_000)
    )
    folder = tmp_path / SID / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-abc123.jsonl").write_text(
        _line(
            "user",
            "s1",
            None,
            "2026-02-01T10:00:10Z",
            isSidechain=True,
            agentId="abc123",
            message={"role": "user", "content": "look up hooks"},
        )
        + _assistant(
            "s2",
            "s1",
            "2026-02-01T10:01:00Z",
            "hooks are",
            9_000,
            isSidechain=True,
            agentId="abc123",
        )
    )
    (folder / "agent-abc123.meta.json").write_text(json.dumps({"agentType": "Explore"}))
    return parent


def test_a_claude_parent_lists_its_sub_agent_and_the_sub_agent_its_parent(tmp_path: Path) -> None:
    parent_path = _family(tmp_path)
    parent = load_session(parent_path)
    [child_path] = child_paths(parent)
    child = load_session(child_path)
    assert (child.id, child.parent_session_id) == ("abc123", parent.id)
    assert child.metadata["agent_meta"] == {"agentType": "Explore"}
    [info] = subagent_summaries(parent)
    assert (info.id, info.calls, info.peak_tokens, info.compactions) == ("abc123", 1, 9_000, 0)
    assert info.parent_calls == [0, 1]  # started after call 0, answered before call 1
    assert analyse(str(child_path)).row.parent_session_id == parent.id


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_sub_agent_is_named_and_never_opened(tmp_path: Path) -> None:
    parent_path = _family(tmp_path)
    os.mkfifo(tmp_path / SID / "subagents" / "agent-x.jsonl")
    os.mkfifo(tmp_path / "agent-y.jsonl")  # the old layout, beside the parent
    parent = load_session(parent_path)  # would block forever if it opened one
    assert [Path(p).name for p in child_paths(parent)] == ["agent-abc123.jsonl"]
    skipped = [d.message for d in parent.diagnostics if d.code == "subagent-skipped"]
    assert any("agent-x.jsonl" in m and "FIFO" in m for m in skipped)
    assert any("agent-y.jsonl" in m and "FIFO" in m for m in skipped)


def test_calls_during_places_a_child_between_the_parents_calls(tmp_path: Path) -> None:
    parent = load_session(_family(tmp_path))
    assert calls_during(parent, "2026-02-01T10:00:06Z", "2026-02-01T10:01:30Z") == (0, 1)
    assert calls_during(parent, None, None) is None


# -- the real families (skipped when absent) -------------------------------------------------


def test_the_real_claude_family_links_both_ways() -> None:
    if not FAMILY.is_file():
        pytest.skip("the shared Claude Code family is not here")
    parent = load_session(FAMILY)
    infos = {info.id: info for info in subagent_summaries(parent)}
    # counted from the raw files: distinct message.id with usage; the peak is the largest
    # input + cache_read + cache_creation of one of them
    assert set(infos) == {"a881341", "acompact-fffbd0"}
    explore, run = infos["a881341"], infos["acompact-fffbd0"]
    assert (explore.calls, explore.peak_tokens, explore.compactions) == (3, 42_182, 0)
    assert (run.calls, run.peak_tokens) == (1, 169_248)
    # the compaction run is the parent's one automatic compaction (preTokens 167,094, line 1256)
    assert run.compaction_of == 0 and parent.compactions[0].tokens_before == 167_094
    assert explore.compaction_of is None and explore.compaction_answer is None
    # what the run was given (the summary instruction) and what it answered (the summary)
    assert run.compaction_prompt and "summary" in run.compaction_prompt.lower()
    assert run.compaction_answer and len(run.compaction_answer) > 500
    for info in infos.values():
        assert load_session(info.path).parent_session_id == parent.id


def test_the_real_codex_children_count_only_their_own_part() -> None:
    if not CODEX_PARENT.is_file():
        pytest.skip("the shared Codex sub-agent rollouts are not here")
    parent = load_session(CODEX_PARENT)
    children = {Path(p).name for p in child_paths(parent)}
    assert children == {
        "codex-0.118.0_gitsync-bce3d316a633-2.jsonl",
        "codex-0.118.0_gitsync-edee273e9e3b-2.jsonl",
    }
    # counted from the raw files after the fork's own task_started (lines 402 and 340 on):
    # token_count events that follow a response item; the peak is their largest prompt
    # (last_token_usage.input_tokens, the prompt before the reply; total_tokens: 151,936 and
    # 142,039, the context after it)
    expected = {
        "codex-0.118.0_gitsync-bce3d316a633-2.jsonl": (29, 151_344),
        "codex-0.118.0_gitsync-edee273e9e3b-2.jsonl": (2, 141_093),
    }
    for name, (calls, peak) in expected.items():
        row = analyse(str(CODEX / name)).row
        assert (row.calls, row.peak_tokens, row.compactions) == (calls, peak, 0)
        assert row.parent_session_id == PARENT_THREAD == parent.id
    review = load_session(CODEX / "codex-0.139.0_gitsync-191ffd473fdb-0.jsonl")
    assert review.parent_session_id is None  # a review sub-agent names no parent


def test_discovery_finds_copilot_sessions_and_claude_sub_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.formats.discovery import discover_sessions

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    _family(project)
    events = tmp_path / "copilot" / "session-state" / "c0ffee" / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text(
        json.dumps(
            {
                "type": "session.start",
                "data": {
                    "sessionId": "c0ffee",
                    "producer": "copilot-agent",
                    "copilotVersion": "1.0.80",
                },
                "id": "e1",
                "timestamp": "2026-05-01T10:00:00Z",
                "parentId": None,
            }
        )
        + "\n"
    )
    found = {s.session_id: s for s in discover_sessions(describe=False)}
    assert found["c0ffee"].path == str(events)
    assert found["abc123"].parent_session_id == SID and found[SID].parent_session_id is None


def test_export_and_fleet_carry_the_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from core.fleet.export import export
    from tui.cli.main import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    parent = _family(tmp_path)
    child = tmp_path / SID / "subagents" / "agent-abc123.jsonl"
    export([str(parent), str(child)], tmp_path / "export", jobs=1)
    table = pq.read_table(tmp_path / "export" / "sessions.parquet").to_pylist()
    parents = {Path(row["path"]).name: row["parent_session_id"] for row in table}
    assert parents == {parent.name: None, child.name: SID}
    result = CliRunner().invoke(cli, ["fleet", "--json", "--jobs", "1", str(parent), str(child)])
    assert result.exit_code == 0, result.output
    rows = {Path(r["path"]).name: r for r in json.loads(result.output)["rows"]}
    assert rows[child.name]["parent_session_id"] == SID
    assert rows[parent.name]["parent_session_id"] is None


def test_opencode_children_link_both_ways_in_a_database_and_a_storage_folder(
    tmp_path: Path,
) -> None:
    from tests.unit.test_formats_opencode import _export, _other_session, write_db, write_storage

    doc = _export()
    parent_id = doc["info"]["id"]
    child = _other_session(doc, "ses_child", doc["info"]["time"]["updated"] + 1, "child")
    db = write_db([doc, child], tmp_path / "opencode.db", {"ses_child": parent_id})
    parent = load_session(f"{db}#{parent_id}")
    assert child_paths(parent) == [f"{db}#ses_child"]
    assert load_session(f"{db}#ses_child").parent_session_id == parent_id
    assert parent.parent_session_id is None

    child["info"]["parentID"] = parent_id
    write_storage(doc, tmp_path / "data")
    write_storage(child, tmp_path / "data")
    folder = tmp_path / "data" / "storage" / "session" / "prj_0a1b"
    parent = load_session(folder / f"{parent_id}.json")
    assert child_paths(parent) == [str(folder / "ses_child.json")]
    assert load_session(folder / "ses_child.json").parent_session_id == parent_id


ORPHANS = SHARED / "new-formats" / "claude-code-subagents"


@pytest.mark.parametrize(
    ("relative", "parent", "calls", "peak"),
    [
        # counted from the raw files: distinct message.id with usage, and the largest
        # input + cache_read + cache_creation among them
        (
            "6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl",
            "6c2214d7-b87e-4432-8e41-22ba294ea584",
            18,
            49_695,
        ),
        (
            "ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl",
            "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
            3,
            18_893,
        ),
    ],
)
def test_the_real_claude_sub_agents_without_their_parent(
    relative: str, parent: str, calls: int, peak: int
) -> None:
    path = ORPHANS / relative
    if not path.is_file():
        pytest.skip("the shared Claude Code sub-agents are not here")
    row = analyse(str(path)).row
    assert (row.agent, row.parent_session_id) == ("claude-code", parent)
    assert (row.calls, row.peak_tokens, row.compactions) == (calls, peak, 0)
    assert row.session_id == path.stem.removeprefix("agent-")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_codex_parent_finds_its_spawned_child_and_never_opens_a_fifo(tmp_path: Path) -> None:
    from tests.support.codex_rollout import SESSION_MS, Rollout, uuid7

    parent = Rollout().meta().task().context().user("split the work")
    parent.say("spawning").usage(10_000).done()
    parent_path = parent.write(tmp_path, "rollout-parent.jsonl")
    parent_id = load_session(parent_path).id
    child_id = uuid7(SESSION_MS + 60_000, tail=9)
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}
    child = Rollout().meta(sid=child_id, source=spawn).task(turn_ms=SESSION_MS + 61_000)
    child.context().user("look at a.go").say("fine").usage(3_000).done()
    child_path = child.write(tmp_path, "rollout-child.jsonl")
    os.mkfifo(tmp_path / "rollout-fifo.jsonl")  # would block forever if opened
    found = child_paths(load_session(parent_path))
    assert found == [str(child_path)]
    assert load_session(child_path).parent_session_id == parent_id


def test_the_text_report_names_the_parent_and_each_sub_agent(tmp_path: Path) -> None:
    from tui.cli.commands.analyze import subagent_lines

    parent = load_session(_family(tmp_path))
    lines = subagent_lines(subagent_summaries(parent), None)
    assert lines == [
        "sub-agent abc123 (claude-sonnet-4-5): 1 calls, peak 9,000, 0 compactions, "
        "between calls 0-1"
    ]
    assert subagent_lines([], SID) == [f"a sub-agent of session {SID}"]


def test_analyze_json_lists_the_sub_agents_and_none_for_a_session_without(tmp_path: Path) -> None:
    # analyze imports the fleet's machinery only for a session that has sub-agents: both ways
    from click.testing import CliRunner

    from tui.cli.commands.analyze import analyze

    family = _family(tmp_path)
    found = json.loads(CliRunner().invoke(analyze, ["--json", str(family)]).output)
    assert [(s["id"], s["calls"], s["peak_tokens"]) for s in found["subagents"]] == [
        ("abc123", 1, 9_000)
    ]
    alone = tmp_path / "alone" / family.name
    alone.parent.mkdir()
    alone.write_bytes(family.read_bytes())
    found = json.loads(CliRunner().invoke(analyze, ["--json", str(alone)]).output)
    assert found["subagents"] == []
