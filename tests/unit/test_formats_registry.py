"""The loader registry: detection from at most 64 KB, clear errors, window resolution."""

from __future__ import annotations

import builtins
import gc
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.formats as registry
from core.formats import LoadError, detect_format, load_session
from core.formats.base import SessionBuilder
from core.formats.jsonl import HEAD_BYTES, read_jsonl
from core.model.session import (
    Message,
    Role,
    SourceFormat,
    ToolCall,
    Usage,
    from_record,
    replace,
    to_record,
)
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures"
CLAUDE = FIXTURES / "claude" / "9b1c0e55-7a2d-4c3e-9f10-5a6b7c8d9e0f.jsonl"
CODEX = (
    FIXTURES / "codex" / "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl"
)
SAMPLES = REPO.parent / "shared" / "samples"


def _claude_line(text: str) -> str:
    return json.dumps(
        {
            "parentUuid": None,
            "sessionId": "s1",
            "type": "user",
            "uuid": "u1",
            "message": {"role": "user", "content": text},
        }
    )


def test_detects_fixtures() -> None:
    assert detect_format(CLAUDE) is SourceFormat.CLAUDE_CODE
    assert detect_format(CODEX) is SourceFormat.CODEX
    assert detect_format(str(CODEX)) is SourceFormat.CODEX


def test_detects_every_claude_and_codex_sample() -> None:
    if not SAMPLES.is_dir():
        pytest.skip("shared samples are not available")
    for path in sorted((SAMPLES / "claude-code").rglob("*.jsonl")):
        assert detect_format(path) is SourceFormat.CLAUDE_CODE, path
    for path in sorted((SAMPLES / "codex").glob("*.jsonl")):
        assert detect_format(path) is SourceFormat.CODEX, path


def test_detection_reads_at_most_64_kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.jsonl"
    with open(path, "w") as f:
        for i in range(2000):
            f.write(_claude_line(f"prompt {i} " + "x" * 500).replace('"u1"', f'"u{i}"') + "\n")
    assert path.stat().st_size > 10 * HEAD_BYTES
    read = [0]
    real_open = builtins.open

    class Counting(io.BufferedReader):
        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            read[0] += len(data)
            return data

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "b" in mode and "r" in mode and "+" not in mode:
            return Counting(io.FileIO(file, "r"))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    assert detect_format(path) is SourceFormat.CLAUDE_CODE
    assert 0 < read[0] <= HEAD_BYTES


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"hello world\nthis is text\n", "first line is not JSON"),
        (b'[{"type": "user"}]\n', "a JSON array, not JSON Lines"),
        (b"\x00\x01\x02binary\xff\xfe" * 100, "binary file"),
        (b'"just a string"\n', "first line is not a JSON object"),
        (b'{"kind": "nothing we know"}\n', "no record of a known format"),
        (b"\n\n  \n", "empty file"),
    ],
)
def test_not_a_session_names_what_was_tried(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "thing.jsonl"
    path.write_bytes(content)
    with pytest.raises(LoadError) as info:
        load_session(path)
    message = str(info.value)
    assert "not a session: tried " in message
    assert "claude-code" in message and "codex" in message
    assert reason in message
    assert "\n" not in message


def test_missing_path_and_plain_directory(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file or directory"):
        load_session(tmp_path / "nope.jsonl")
    with pytest.raises(LoadError, match="no such file or directory"):
        detect_format(tmp_path / "nope.jsonl")
    with pytest.raises(LoadError, match="not an opencode storage folder"):
        load_session(tmp_path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(LoadError, match="empty file"):
        load_session(path)
    with pytest.raises(LoadError, match="empty file"):
        load_session(path, format="claude-code")


def test_forced_format(tmp_path: Path) -> None:
    session = load_session(CODEX, format="codex")
    assert session.format is SourceFormat.CODEX
    session = load_session(CODEX, format=SourceFormat.CODEX)
    assert session.format is SourceFormat.CODEX
    with pytest.raises(LoadError, match="unknown format 'word'"):
        load_session(CODEX, format="word")
    text = tmp_path / "notes.txt"
    text.write_text("not json\nat all\n")
    with pytest.raises(LoadError, match="no JSON object"):
        load_session(text, format="claude-code")


def test_window_override_and_lookup() -> None:
    session = load_session(CLAUDE, window=50_000)
    assert (session.context_window, session.window_source) == (50_000, "user")
    recorded = load_session(CODEX, window=100_000)  # the user wins over the file too
    assert (recorded.context_window, recorded.window_source) == (100_000, "user")
    default = load_session(CLAUDE)
    assert default.context_window == 200_000 and default.window_source == "table"


def test_every_format_has_one_loader() -> None:
    assert sorted(registry.available_formats()) == sorted(SourceFormat)
    assert len(registry.LOADERS) == len(SourceFormat)


def test_each_loader_sniffs_with_the_light_sniffer_of_its_format() -> None:
    """Detection runs :mod:`core.formats.sniffers` without the loaders: each loader's ``sniff``
    is the same function, and the key sets copied there are the loaders' own."""
    from core.formats import pi, sniffers

    for module in registry.LOADERS:
        assert registry.loader_of(module.FORMAT) is module
        if module.FORMAT is not SourceFormat.OPENCODE:  # its own sniffer also reads the disk
            name = registry._MODULE_NAMES[module.FORMAT]
            assert module.sniff is getattr(sniffers, f"sniff_{name}")
    assert frozenset(pi._ENTRIES) == sniffers.PI_ENTRY_TYPES
    assert frozenset(pi._MESSAGES) == sniffers.PI_ROLES


def test_detection_imports_only_the_loader_it_chose() -> None:
    code = (
        "import sys; from core.formats import load_session; "
        f"load_session({str(FIXTURES / 'pi' / 'v1-linear.jsonl')!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('core.formats.')"
        " and m.rsplit('.')[-1] in {'claude_code','codex','opencode','gemini_cli','qwen_code',"
        "'copilot','ctxscope_jsonl'} or m == 'sqlite3'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_window_from_the_table_says_where_it_comes_from() -> None:
    session = load_session(FIXTURES / "pi" / "v3-tree.jsonl")
    # the fixture's overflow error states the limit ("> 200000 maximum"), which wins
    assert (session.context_window, session.window_source) == (200_000, "recorded")
    assert session.window_evidence is not None and "overflow error" in session.window_evidence
    assert session.max_output_tokens == 64_000  # the output limit still comes from the table
    plain = load_session(FIXTURES / "pi" / "v1-linear.jsonl")
    assert (plain.context_window, plain.window_source) == (200_000, "table")
    assert plain.window_evidence is not None and "Anthropic model docs" in plain.window_evidence


def test_a_failing_sniffer_counts_as_no(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(path: Path, head: bytes) -> float:
        raise ValueError("boom")

    detection = tuple(
        (fmt, name, explode if fmt is SourceFormat.CODEX else sniff)
        for fmt, name, sniff in registry._DETECTION
    )
    monkeypatch.setattr(registry, "_DETECTION", detection)
    scores = registry.sniff_scores(CODEX, CODEX.read_bytes()[:HEAD_BYTES])
    assert scores[SourceFormat.CODEX] == 0.0


def test_messages_are_structs_with_defaults_that_read_back() -> None:
    message = Message(index=3, id="m", role=Role.ASSISTANT, text="hi")
    assert (
        message.tool_calls == ()
        and message.tool_calls is Message(index=3, id="m", role=Role.ASSISTANT).tool_calls
    )
    assert Usage(input=5).prompt_tokens == 5
    assert ToolCall(id="c", name="n").arguments is None
    assert to_record(message) == {"index": 3, "id": "m", "role": "assistant", "text": "hi"}
    assert from_record(to_record(message), Message) == message
    assert replace(message, text="ho").text == "ho" and message.text == "hi"


def test_builder_flags_the_message_after_a_compaction_and_caps_diagnostics() -> None:
    builder = SessionBuilder(SourceFormat.CODEX, "x.jsonl")
    builder.add(Role.USER, text="a")
    event = builder.add_compaction(trigger="manual", tokens_before=10)
    after = builder.add(Role.USER, text="b")
    assert event.message_index == after.index == 1 and after.compaction_boundary
    for i in range(500):
        builder.diagnostic(i, "invalid-json", "bad")
    session = builder.build()
    assert session.id == "x"
    kept = [d for d in session.diagnostics if d.code == "invalid-json"]
    assert len(kept) == 201  # 200 listed, one note counting the rest
    assert "300 more" in kept[-1].message


def test_loaders_import_no_ui() -> None:
    code = (
        "import sys, core.formats, core.formats.claude_code, core.formats.codex; "
        "core.formats.available_formats(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'textual','rich','openai'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the streaming reader -------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(max_size=40), min_size=1, max_size=25),
    blanks=st.lists(st.booleans(), min_size=25, max_size=25),
    crlf=st.booleans(),
    chunk=st.integers(min_value=1, max_value=64),
    trailing_newline=st.booleans(),
)
def test_reader_yields_every_object_at_its_line_and_offset(
    texts: list[str], blanks: list[bool], crlf: bool, chunk: int, trailing_newline: bool
) -> None:
    """Whatever the chunk size, each object comes back with its line number and byte offset."""
    end = b"\r\n" if crlf else b"\n"
    lines: list[bytes] = []
    expected: list[tuple[int, dict[str, Any]]] = []
    for i, text in enumerate(texts):
        if blanks[i]:
            lines.append(b"   ")
        obj = {"i": i, "text": text}
        lines.append(json.dumps(obj, ensure_ascii=False).encode())
        expected.append((len(lines), obj))
    data = end.join(lines) + (end if trailing_newline else b"")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.jsonl"
        path.write_bytes(data)
        builder = SessionBuilder(SourceFormat.CTXSCOPE, path)
        got = list(read_jsonl(path, builder, chunk_bytes=chunk))
    assert [(line, obj) for line, _, obj in got] == expected
    for line, offset, obj in got:
        raw = data[offset:].split(b"\n", 1)[0]
        assert json.loads(raw) == obj
        assert data[:offset].count(b"\n") == line - 1
    assert builder.diagnostics == []


def test_garbage_collector_is_restored(tmp_path: Path) -> None:
    """Loading pauses the cyclic collector and puts it back as it was, even on error."""
    assert gc.isenabled()
    load_session(CODEX)
    assert gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01" * 100)
    with pytest.raises(LoadError):
        load_session(bad, format="codex")
    assert gc.isenabled()
    gc.disable()
    try:
        load_session(CODEX)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_reader_passes_over_skipped_lines_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"skip": oops not json\n{"b": 2}\n')
    builder = SessionBuilder(SourceFormat.CODEX, path)
    got = list(read_jsonl(path, builder, skip=lambda line: line.startswith(b'{"skip"')))
    assert [(line, obj) for line, _, obj in got] == [(1, {"a": 1}), (3, {"b": 2})]
    assert builder.diagnostics == []
