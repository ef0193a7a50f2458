"""ctxscope JSONL: every loadable session survives write → read unchanged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from core.formats import LoadError, detect_format, load_session
from core.formats import ctxscope_jsonl as cj
from core.model.session import Message, Role, Session, SourceFormat, Usage, UsageConvention
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures"
SAMPLES = REPO.parent / "shared" / "samples"


def _sources() -> list[Path]:
    paths = [*sorted((FIXTURES / "pi").glob("*.jsonl")), FIXTURES / "opencode" / "export.json"]
    if SAMPLES.exists():
        for folder in ("claude-code", "codex", "pi"):
            paths += sorted((SAMPLES / folder).glob("*.jsonl"))
        paths.append(SAMPLES / "opencode" / "storage")
    return paths


def _loadable(path: Path) -> Session | None:
    try:
        return load_session(path)
    except LoadError:
        return None  # a format whose loader is not installed in this build


@pytest.mark.parametrize("source", _sources(), ids=lambda p: p.name)
def test_round_trip_is_lossless(source: Path, tmp_path: Path) -> None:
    session = _loadable(source)
    if session is None:
        pytest.skip(f"no loader for {source.name} in this build")
    out = tmp_path / "out.jsonl"
    cj.write_session(session, out)
    assert detect_format(out) is SourceFormat.CTXSCOPE
    again = load_session(out)
    assert again == session
    assert again.format == session.format  # the original format is kept in the header
    # and once more through a stream
    buffer = io.BytesIO()
    cj.write_session(again, buffer)
    assert buffer.getvalue() == out.read_bytes()


def test_equality_is_not_vacuous(tmp_path: Path) -> None:
    session = load_session(FIXTURES / "pi" / "v3-tree.jsonl")
    out = tmp_path / "out.jsonl"
    cj.write_session(session, out)
    lines = out.read_text().splitlines()
    record = json.loads(lines[3])
    assert record["type"] == "message"
    record["text"] = record.get("text", "") + " (edited)"
    lines[3] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    assert load_session(out) != session


def test_layout_header_messages_compactions_diagnostics() -> None:
    session = load_session(FIXTURES / "pi" / "v3-tree.jsonl")
    lines = [json.loads(line) for line in cj.dumps_session(session).splitlines()]
    header = lines[0]
    assert header["type"] == "session" and header["schema"] == "ctxscope" and header["version"] == 1
    assert header["id"] == session.id and header["format"] == "pi"
    assert header["context_window"] == session.context_window
    kinds = [line["type"] for line in lines[1:]]
    assert kinds.count("message") == len(session.messages)
    assert kinds.count("compaction") == len(session.compactions)
    assert kinds.count("diagnostic") == len(session.diagnostics)
    # a compaction line sits right before the message at its index
    at = kinds.index("compaction")
    assert lines[at + 2]["index"] == lines[at + 1]["message_index"]
    # defaults are left out, identity is always there
    first = lines[1]
    assert {"index", "id", "role"} <= set(first) and "summary" not in first


def test_text_stream_and_minimal_session(tmp_path: Path) -> None:
    session = Session(
        id="s1",
        format=SourceFormat.CTXSCOPE,
        messages=[
            Message(index=0, id="u", role=Role.USER, text="hé ✓"),
            Message(
                index=1,
                id="a",
                role=Role.ASSISTANT,
                usage=Usage(input=3, output=2, convention=UsageConvention.OPENAI, total=5),
            ),
        ],
    )
    stream = io.StringIO()
    cj.write_session(session, stream)
    path = tmp_path / "s.jsonl"
    path.write_text(stream.getvalue(), encoding="utf-8")
    assert cj.load(path) == session


def test_bad_lines_are_diagnostics(tmp_path: Path) -> None:
    session = load_session(FIXTURES / "pi" / "v1-linear.jsonl")
    lines = cj.dumps_session(session).decode().splitlines()
    lines.insert(2, "{broken")
    lines.insert(3, json.dumps({"type": "future-thing", "x": 1}))
    lines.insert(4, json.dumps({"type": "message", "index": 99, "id": "x", "role": "wizard"}))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n" + '{"type":"message","ind')
    before = (path.stat().st_mtime_ns, path.read_bytes())
    loaded = cj.load(path)
    codes = {(d.line, d.code) for d in loaded.diagnostics}
    assert {(3, "invalid-json"), (4, "unknown-record"), (5, "invalid-record")} <= codes
    assert any(code == "partial-last-line" for _, code in codes)
    assert [m.id for m in loaded.messages] == [m.id for m in session.messages]
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_not_a_ctxscope_file(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"type":"session","version":3,"id":"p","cwd":"/w"}\n')
    with pytest.raises(LoadError, match="not a ctxscope session"):
        cj.load(path)
    assert cj.sniff(path, path.read_bytes()) == 0.0
