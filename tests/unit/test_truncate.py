"""T15 truncation: exact formats, counting, spill safety, failures, retention (core/algorithms/truncate.py)."""

from __future__ import annotations

import errno
import math
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.algorithms.truncate import (
    SPILL_NAME_RE,
    StreamingTruncator,
    TruncateOptions,
    cleanup_spill_dir,
    default_spill_dir,
    new_spill_name,
    truncate,
    truncate_tool_output,
    would_be_spill_name,
)
from core.policy import (
    DEFAULT_HINT,
    DEFAULT_SUBAGENT_HINT,
    ToolLimits,
    TruncationPolicy,
    get_preset,
)

HINT = "Full output: {path}"


@pytest.fixture(autouse=True)
def _private_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No test may write into the real ~/.local/share.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def opts(spill_dir: Path | None = None, **kwargs: object) -> TruncateOptions:
    data: dict[str, object] = {"hint_template": HINT}
    if spill_dir is not None:
        data["spill_dir"] = str(spill_dir)
    data.update(kwargs)
    return TruncateOptions.model_validate(data)


def numbered(count: int, width: int = 0) -> str:
    return "\n".join(f"line {i}".ljust(width, ".") for i in range(count))


# --- exact formats --------------------------------------------------------------------------------


def test_head_layout_is_preview_marker_hint(tmp_path: Path) -> None:
    result = truncate(numbered(10), opts(tmp_path, max_lines=3))
    assert result.truncated and result.spilled
    path = result.output_path
    assert path is not None
    assert (
        result.content
        == f"line 0\nline 1\nline 2\n\n...7 lines truncated...\n\nFull output: {path}"
    )
    assert result.preview == "line 0\nline 1\nline 2"
    assert (result.removed, result.unit, result.limit_hit) == (7, "lines", "lines")
    assert (result.kept_lines, result.total_lines) == (3, 10)


def test_tail_layout_is_marker_hint_preview(tmp_path: Path) -> None:
    result = truncate(numbered(10), opts(tmp_path, max_lines=2, direction="tail"))
    assert result.content == (
        f"...8 lines truncated...\n\nFull output: {result.output_path}\n\nline 8\nline 9"
    )
    assert result.direction == "tail"


def test_byte_limit_counts_removed_bytes(tmp_path: Path) -> None:
    text = numbered(10)  # "line 0".."line 9": 6 bytes each, 69 bytes in all
    result = truncate(text, opts(tmp_path, max_bytes=20))
    # line 0 (6) + "\n" + line 1 (6) = 13, + 7 = 20 -> three lines fit exactly
    assert result.preview == "line 0\nline 1\nline 2"
    assert result.kept_bytes == 20
    assert (result.removed, result.unit, result.limit_hit) == (69 - 20, "bytes", "bytes")
    assert result.content.startswith("line 0\nline 1\nline 2\n\n...49 bytes truncated...\n\n")


def test_whichever_limit_trips_first_wins(tmp_path: Path) -> None:
    text = numbered(100, width=10)  # 10 bytes a line
    by_lines = truncate(text, opts(tmp_path, max_lines=5, max_bytes=1000))
    by_bytes = truncate(text, opts(tmp_path, max_lines=50, max_bytes=54))
    assert (by_lines.limit_hit, by_lines.unit, by_lines.removed) == ("lines", "lines", 95)
    assert (by_bytes.limit_hit, by_bytes.unit) == ("bytes", "bytes")
    assert by_bytes.kept_lines == 5  # 5*10 + 4 newlines = 54
    assert by_bytes.removed == len(text) - 54


def test_empty_hint_template_leaves_marker_only(tmp_path: Path) -> None:
    head = truncate(numbered(5), opts(tmp_path, max_lines=1, hint_template=""))
    tail = truncate(numbered(5), opts(tmp_path, max_lines=1, hint_template="", direction="tail"))
    assert head.content == "line 0\n\n...4 lines truncated..."
    assert tail.content == "...4 lines truncated...\n\nline 4"


def test_middle_tokens_marker_is_inline_codex_style(tmp_path: Path) -> None:
    text = "a" * 100 + "b" * 100
    result = truncate(
        text, opts(tmp_path, max_lines=0, max_bytes=50, direction="middle", hint_template="")
    )
    removed = math.ceil((200 - 50) / 4)
    assert result.content == "a" * 25 + f"…{removed} tokens truncated…" + "b" * 25
    assert (result.unit, result.removed, result.limit_hit) == ("tokens", 38, "bytes")
    assert result.preview == "a" * 25 + "b" * 25


def test_middle_chars_marker_counts_dropped_characters(tmp_path: Path) -> None:
    text = "é" * 100  # 200 bytes
    result = truncate(
        text,
        opts(
            tmp_path,
            max_lines=0,
            max_bytes=21,
            direction="middle",
            middle_unit="chars",
            hint_template="",
        ),
    )
    # left budget 10 bytes -> 5 chars; right budget 11 bytes -> 5 whole chars (10 bytes)
    assert result.content == "é" * 5 + "…90 chars truncated…" + "é" * 5
    assert result.kept_bytes == 20


def test_middle_with_hint_appends_it_after_a_blank_line(tmp_path: Path) -> None:
    result = truncate("x" * 100, opts(tmp_path, max_bytes=10, direction="middle"))
    assert result.content == f"xxxxx…23 tokens truncated…xxxxx\n\nFull output: {result.output_path}"


def test_middle_line_limit_keeps_lines_from_both_ends(tmp_path: Path) -> None:
    result = truncate(
        numbered(10), opts(tmp_path, max_lines=3, direction="middle", hint_template="")
    )
    # 2 lines from the start (newline kept), 1 from the end; 69 - 14 - 6 bytes removed
    assert result.content == "line 0\nline 1\n…13 tokens truncated…line 9"
    assert (result.limit_hit, result.kept_lines) == ("lines", 3)


def test_max_bytes_zero_middle_is_marker_only(tmp_path: Path) -> None:
    result = truncate("hello", opts(tmp_path, max_bytes=0, direction="middle", hint_template=""))
    assert result.content == "…2 tokens truncated…"


# --- counting ------------------------------------------------------------------------------------


def test_defaults_are_2000_lines_51200_bytes_head() -> None:
    options = TruncateOptions()
    assert (options.max_lines, options.max_bytes, options.direction) == (2000, 51200, "head")
    assert options.hint_template == DEFAULT_HINT


def test_exactly_at_the_limits_is_unchanged_and_one_more_is_not(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    at_lines = "\n".join(["x"] * 2000)
    assert truncate(at_lines, opts(spill)).content is at_lines
    over = truncate(at_lines + "\nx", opts(spill))
    assert over.truncated and over.content.startswith(at_lines + "\n\n...1 lines truncated...")
    at_bytes = "y" * 51200
    assert not truncate(at_bytes, opts(spill)).truncated
    assert truncate(at_bytes + "y", opts(spill)).truncated


def test_empty_string_is_unchanged() -> None:
    result = truncate("", opts(max_bytes=0))
    assert result.content == "" and not result.truncated
    assert (result.total_lines, result.total_bytes, result.reason) == (1, 0, "within_limits")


def test_multibyte_text_is_counted_in_utf8_bytes(tmp_path: Path) -> None:
    emoji_line = "😀" * 10  # 40 bytes
    text = "\n".join([emoji_line] * 5)
    result = truncate(text, opts(tmp_path, max_bytes=100))
    assert result.preview == emoji_line + "\n" + emoji_line  # 81 bytes; a third would make 122
    assert result.kept_bytes == 81
    assert result.total_bytes == 5 * 40 + 4
    assert result.removed == result.total_bytes - 81

    cjk = "\n".join(["中文字"] * 4)  # 9 bytes a line
    fits = truncate(cjk, opts(tmp_path, max_bytes=39))
    assert not fits.truncated  # 4*9 + 3 = 39
    cut = truncate(cjk, opts(tmp_path, max_bytes=38))
    assert cut.preview == "中文字\n中文字\n中文字" and cut.kept_bytes == 29


def test_crlf_lines_split_on_newline_and_keep_the_carriage_return(tmp_path: Path) -> None:
    text = "a\r\nb\r\nc\r\nd"
    result = truncate(text, opts(tmp_path, max_lines=2))
    assert result.preview == "a\r\nb\r"
    assert result.total_lines == 4 and result.kept_bytes == 5


def test_trailing_newline_ends_in_an_empty_last_line(tmp_path: Path) -> None:
    text = "a\nb\n"
    assert truncate(text, opts(tmp_path, max_lines=3)).content is text
    result = truncate(text, opts(tmp_path, max_lines=2))
    assert result.total_lines == 3
    assert result.content.startswith("a\nb\n\n...1 lines truncated...")
    tail = truncate(text, opts(tmp_path, max_lines=2, direction="tail"))
    assert tail.preview == "b\n" and tail.content.endswith("\n\nb\n")


def test_single_1mb_line_keeps_a_utf8_safe_cut(tmp_path: Path) -> None:
    line = "é" * 500_000  # 1,000,000 bytes, no newline
    head = truncate(line, opts(tmp_path, max_bytes=51201))
    assert head.partial_line and head.kept_lines == 1
    assert head.preview == "é" * 25600 and head.kept_bytes == 51200
    assert head.removed == 1_000_000 - 51200 and head.unit == "bytes"
    tail = truncate("x\n" + line, opts(tmp_path, max_bytes=51201, direction="tail"))
    assert tail.partial_line and tail.preview == "é" * 25600
    ascii_line = "z" * 1_000_000
    plain = truncate(ascii_line, opts(tmp_path))
    assert plain.preview == "z" * 51200
    assert Path(plain.output_path or "").read_bytes() == ascii_line.encode()


def test_big_outputs_are_counted_and_spilled_across_pieces(tmp_path: Path) -> None:
    # Over 256 Ki chars, so the single pass encodes, counts and writes piece by piece.
    text = "".join(f"中文 {i} 😀 línea\n" for i in range(60_000)) + "end"
    data = text.encode("utf-8")
    for direction in ("head", "tail", "middle"):
        result = truncate(text, opts(tmp_path, direction=direction))
        assert (result.total_bytes, result.total_lines) == (len(data), 60_001)
        assert Path(result.output_path or "").read_bytes() == data
        simulated = truncate(
            text,
            opts(
                tmp_path,
                direction=direction,
                spill=False,
                spill_name=Path(result.output_path or "").name,
            ),
        )
        assert simulated.content == result.content
    tail = truncate(text, opts(tmp_path, direction="tail", max_lines=3))
    assert tail.preview == "中文 59998 😀 línea\n中文 59999 😀 línea\nend"
    assert (tail.removed, tail.unit) == (59_998, "lines")


def test_emoji_line_cut_never_splits_a_code_point(tmp_path: Path) -> None:
    for max_bytes in range(0, 12):
        result = truncate("😀" * 10, opts(tmp_path, max_bytes=max_bytes, spill=False))
        assert result.preview == "😀" * (max_bytes // 4)
        tail = truncate(
            "😀" * 10, opts(tmp_path, max_bytes=max_bytes, direction="tail", spill=False)
        )
        assert tail.preview == "😀" * (max_bytes // 4)


# --- fast path, simulation -----------------------------------------------------------------------


def test_fast_path_returns_the_same_object_and_writes_nothing(tmp_path: Path) -> None:
    spill = tmp_path / "never"
    text = numbered(500)
    result = truncate(text, opts(spill))
    assert result.content is text and result.preview is text
    assert result.output_path is None and not result.spilled
    assert not spill.exists()
    assert result.explain().startswith("within limits")


def test_simulation_writes_nothing_and_matches_the_real_content(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    name = new_spill_name()
    for text in (numbered(3000), "é\n" * 3000, "q" * 90_000):
        for direction in ("head", "tail", "middle"):
            simulated = truncate(
                text, opts(spill, direction=direction, spill=False, spill_name=name)
            )
            assert not spill.exists() or list(spill.iterdir()) == []
            assert not simulated.spilled and simulated.output_path == str(spill / name)
            real = truncate(text, opts(spill, direction=direction, spill_name=name))
            assert real.spilled
            assert simulated.content == real.content
            assert simulated.model_dump(exclude={"spilled"}) == real.model_dump(exclude={"spilled"})
            (spill / name).unlink()


def test_simulation_of_tool_output_is_deterministic_per_call_id() -> None:
    policy = TruncationPolicy()
    text = numbered(5000)
    first = truncate_tool_output(
        text, tool_name="read", call_id="call_1", policy=policy, spill=False
    )
    again = truncate_tool_output(
        text, tool_name="read", call_id="call_1", policy=policy, spill=False
    )
    other = truncate_tool_output(
        text, tool_name="read", call_id="call_2", policy=policy, spill=False
    )
    assert first.content == again.content != other.content
    assert Path(first.output_path or "").name == would_be_spill_name("call_1")
    assert not Path(default_spill_dir()).exists()


def test_streaming_byte_by_byte_matches_in_memory_at_every_length() -> None:
    # Ends the stream at every possible point, so it also ends right after a ring trim.
    base = "ab\nc😀d\nefg\n中\n" * 4
    name = new_spill_name()
    for length in range(len(base) + 1):
        text = base[:length]
        for direction in ("head", "tail", "middle"):
            for max_bytes in (0, 1, 3, 5, 8):
                options = opts(
                    max_lines=4,
                    max_bytes=max_bytes,
                    direction=direction,
                    spill=False,
                    spill_name=name,
                )
                streaming = StreamingTruncator(options)
                for byte in text.encode("utf-8"):
                    streaming.write(bytes([byte]))
                assert streaming.finish().model_dump() == truncate(text, options).model_dump()


# --- policy wrapper ------------------------------------------------------------------------------


def test_tool_output_uses_policy_direction_hint_and_overrides(tmp_path: Path) -> None:
    policy = TruncationPolicy(
        max_lines=10,
        spill_dir=str(tmp_path),
        per_tool={
            "grep": ToolLimits(max_lines=2, direction="tail"),
            "skill": ToolLimits(enabled=False),
        },
    )
    text = numbered(50)
    read = truncate_tool_output(text, tool_name="read", call_id="c1", policy=policy)
    assert read.direction == "head" and read.kept_lines == 10
    assert read.content.endswith(DEFAULT_HINT.replace("{path}", read.output_path or ""))
    bash = truncate_tool_output(text, tool_name="bash", call_id="c2", policy=policy)
    assert bash.direction == "tail" and bash.preview.endswith("line 49")
    grep = truncate_tool_output(text, tool_name="grep", call_id="c3", policy=policy)
    assert grep.kept_lines == 2 and grep.direction == "tail"
    skill = truncate_tool_output(text, tool_name="skill", call_id="c4", policy=policy)
    assert skill.content is text and skill.reason == "disabled"


def test_subagent_hint_variant(tmp_path: Path) -> None:
    policy = TruncationPolicy(max_lines=1, spill_dir=str(tmp_path))
    chosen = truncate_tool_output("a\nb", tool_name="x", call_id="c", policy=policy, subagent=True)
    assert chosen.content.endswith(
        DEFAULT_SUBAGENT_HINT.replace("{path}", chosen.output_path or "")
    )
    policy.use_subagent_hint = True
    by_policy = truncate_tool_output("a\nb", tool_name="x", call_id="c", policy=policy)
    assert "sub-agent" in by_policy.content
    forced_off = truncate_tool_output(
        "a\nb", tool_name="x", call_id="c", policy=policy, subagent=False
    )
    assert forced_off.content.endswith(DEFAULT_HINT.replace("{path}", forced_off.output_path or ""))


def test_tool_opt_out_returns_output_unchanged(tmp_path: Path) -> None:
    policy = TruncationPolicy(max_lines=1, spill_dir=str(tmp_path / "spill"))
    text = "already\ncut\nby the tool"
    result = truncate_tool_output(
        text, tool_name="read", call_id="c", policy=policy, truncated_by_tool=True
    )
    assert result.content is text and result.reason == "tool_truncated" and not result.truncated
    assert not (tmp_path / "spill").exists()
    policy.respect_tool_truncation = False
    forced = truncate_tool_output(
        text, tool_name="read", call_id="c", policy=policy, truncated_by_tool=True
    )
    assert forced.truncated


def test_codex_preset_cuts_the_middle_in_tokens(tmp_path: Path) -> None:
    policy = get_preset("codex").truncation
    policy.spill_dir = str(tmp_path)
    text = "0123456789" * 10_000  # 100,000 bytes, one line
    result = truncate_tool_output(text, tool_name="exec_command", call_id="c", policy=policy)
    assert "…13000 tokens truncated…" in result.content  # ceil((100000 - 48000) / 4)
    assert result.kept_bytes == 48000


# --- spill safety --------------------------------------------------------------------------------


def test_spill_file_is_0600_in_a_0700_folder_and_identical(tmp_path: Path) -> None:
    spill = tmp_path / "deep" / "spill"
    text = "héllo wörld 😀\n" * 10_000
    result = truncate(text, opts(spill))
    path = Path(result.output_path or "")
    assert path.parent == spill
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() == text.encode("utf-8")
    assert SPILL_NAME_RE.fullmatch(path.name)
    assert sorted(os.listdir(spill)) == [path.name]  # no temp file left behind


def test_default_folder_is_created_0700_and_tightened(tmp_path: Path) -> None:
    folder = Path(default_spill_dir())
    assert str(folder).startswith(str(tmp_path))  # the fixture's private XDG_DATA_HOME
    first = truncate(numbered(10), TruncateOptions(max_lines=2))
    assert Path(first.output_path or "").parent == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)
    truncate(numbered(10), TruncateOptions(max_lines=2))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    chosen = tmp_path / "mine"
    chosen.mkdir(mode=0o755)
    chosen.chmod(0o755)
    truncate(numbered(10), opts(chosen, max_lines=2))
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o755  # a folder the user chose keeps its mode


def test_spill_names_sort_by_creation_time() -> None:
    names = [new_spill_name(now_ms=1_700_000_000_000 + i // 3) for i in range(30)]
    assert names == sorted(names)
    assert len(set(names)) == 30
    assert all(SPILL_NAME_RE.fullmatch(n) for n in names)


@pytest.mark.parametrize(
    ("tool_name", "call_id"),
    [
        ("../../etc/x", "../../../tmp/evil"),
        ("/etc/passwd", "..\\..\\win"),
        ("a/b", "call\x00id"),
        ("....//", "%2e%2e%2f"),
    ],
)
def test_traversal_looking_names_stay_in_the_folder(
    tmp_path: Path, tool_name: str, call_id: str
) -> None:
    spill = tmp_path / "spill"
    policy = TruncationPolicy(max_lines=1, spill_dir=str(spill))
    for spill_flag in (True, False):
        result = truncate_tool_output(
            "a\nb\nc", tool_name=tool_name, call_id=call_id, policy=policy, spill=spill_flag
        )
        path = Path(result.output_path or "")
        assert path.parent == spill and SPILL_NAME_RE.fullmatch(path.name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spill"]
    assert len(list(spill.iterdir())) == 1


def test_spill_name_option_accepts_only_our_pattern() -> None:
    for bad in ("../tool_x", "tool_../../etc", "x" * 32, "tool_" + "g" * 27):
        with pytest.raises(ValidationError):
            TruncateOptions(spill_name=bad)


def test_spill_folder_under_a_regular_file_still_truncates(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = truncate(numbered(100), opts(blocker / "spill", max_lines=5))
    assert result.truncated and not result.spilled and result.output_path is None
    assert result.spill_error is not None and "could not save" in result.spill_error
    assert result.content.startswith(
        "line 0\nline 1\nline 2\nline 3\nline 4\n\n...95 lines truncated...\n\n"
    )
    assert "could not be saved" in result.content and "Full output:" not in result.content
    assert "could not save" in result.explain()


def test_disk_full_on_open_still_truncates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(*args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("core.algorithms.truncate.os.open", no_space)
    result = truncate(numbered(100), opts(tmp_path / "spill", max_lines=5))
    assert result.truncated and result.spill_error is not None
    assert "no space left on device" in result.spill_error
    assert "no space left on device" in result.content


def test_disk_full_mid_write_removes_the_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    calls = {"n": 0}

    def write_then_fail(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data)[:10])

    monkeypatch.setattr("core.algorithms.truncate.os.write", write_then_fail)
    spill = tmp_path / "spill"
    result = truncate(numbered(100), opts(spill, max_lines=5))
    assert result.truncated and result.spill_error and not result.spilled
    assert list(spill.iterdir()) == []

    streaming = StreamingTruncator(opts(spill, max_lines=5))
    for index in range(100):
        streaming.write(f"line {index}\n".encode())
    streamed = streaming.finish()
    assert streamed.truncated and streamed.spill_error and list(spill.iterdir()) == []


def test_readonly_folder_reports_instead_of_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr("core.algorithms.truncate.os.open", read_only)
    result = truncate_tool_output(
        numbered(10),
        tool_name="bash",
        call_id="c",
        policy=TruncationPolicy(max_lines=2, spill_dir=str(tmp_path)),
    )
    assert result.truncated and "read-only" in (result.spill_error or "").lower()


# --- retention -----------------------------------------------------------------------------------

DAY_MS = 24 * 60 * 60 * 1000


def _make(folder: Path, name: str, age_days: float, now_ms: int) -> Path:
    path = folder / name
    path.write_text(name)
    mtime = (now_ms - age_days * DAY_MS) / 1000
    os.utime(path, (mtime, mtime))
    return path


def test_cleanup_removes_only_our_old_files(tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    old_ours = _make(tmp_path, new_spill_name(now_ms=now - 8 * DAY_MS), 8, now)
    old_temp = _make(tmp_path, "." + new_spill_name(now_ms=now - 9 * DAY_MS) + ".tmp", 9, now)
    recent_ours = _make(tmp_path, new_spill_name(now_ms=now - 1 * DAY_MS), 1, now)
    renamed_recent = _make(tmp_path, new_spill_name(now_ms=now - 8 * DAY_MS), 0, now)  # mtime new
    foreign = [
        _make(tmp_path, "notes.txt", 30, now),
        _make(tmp_path, "tool_abc", 30, now),
        _make(tmp_path, "tool_" + "0" * 27 + ".bak", 30, now),
        _make(tmp_path, "TOOL_" + "0" * 27, 30, now),
    ]
    folder_like_ours = tmp_path / new_spill_name(now_ms=now - 20 * DAY_MS)
    folder_like_ours.mkdir()

    deleted = cleanup_spill_dir(tmp_path, retention_days=7, now_ms=now)

    assert sorted(deleted) == sorted([old_ours.name, old_temp.name])
    assert not old_ours.exists() and not old_temp.exists()
    assert recent_ours.exists() and renamed_recent.exists() and folder_like_ours.is_dir()
    assert all(path.exists() for path in foreign)


def test_cleanup_runs_lazily_once_per_folder(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    now = int(time.time() * 1000)
    first_old = _make(spill, new_spill_name(now_ms=now - 10 * DAY_MS), 10, now)

    truncate(numbered(10), opts(spill, max_lines=2, spill=False))
    assert first_old.exists()  # a simulation never deletes anything

    truncate(numbered(10), opts(spill, max_lines=2))
    assert not first_old.exists()

    second_old = _make(spill, new_spill_name(now_ms=now - 10 * DAY_MS), 10, now)
    truncate(numbered(10), opts(spill, max_lines=2))
    assert second_old.exists()  # already cleaned once in this process


def test_cleanup_of_a_missing_folder_is_quiet(tmp_path: Path) -> None:
    assert cleanup_spill_dir(tmp_path / "missing") == []


# --- misc ----------------------------------------------------------------------------------------


def test_default_spill_dir_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_spill_dir() == str(tmp_path / "ctxscope" / "tool-output")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_spill_dir() == os.path.join(
        os.path.expanduser("~"), ".local", "share", "ctxscope", "tool-output"
    )


def test_explain_names_limit_and_path(tmp_path: Path) -> None:
    result = truncate(numbered(10), opts(tmp_path, max_lines=3))
    text = result.explain()
    assert (
        "lines limit hit" in text and "7 lines removed" in text and str(result.output_path) in text
    )


def test_disabled_options_return_input() -> None:
    text = numbered(5000)
    result = truncate(text, TruncateOptions(enabled=False))
    assert result.content is text and result.reason == "disabled"


def test_core_truncate_loads_no_ui() -> None:
    code = (
        "import sys, core.algorithms.truncate; "
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {'textual','rich','openai'})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_ends_of_an_output_of_several_pieces_are_those_of_its_whole_encoding() -> None:
    # 256 Ki chars per piece: a last piece of a few chars makes the tail window span two pieces,
    # and 3-byte chars put piece ends inside the window's first code point.
    piece = 1 << 18
    for text in ("中" * piece + "end\n中文", "a\n" * (piece // 2) + "é" * 7, "中" * (piece + 1)):
        data = text.encode("utf-8")
        for direction in ("head", "tail", "middle"):
            options = opts(max_bytes=1_000, max_lines=0, direction=direction, spill=False)
            options = options.model_copy(update={"spill_name": would_be_spill_name("c")})
            streamed = StreamingTruncator(options)
            for start in range(0, len(data), 4_096):
                streamed.write(data[start : start + 4_096])
            assert truncate(text, options) == streamed.finish()


def test_the_default_spill_folder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "x" * 100
    for home in ("a", "b", "a"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / home))
        result = truncate(text, opts(max_bytes=10, spill=False))
        assert result.output_path is not None
        assert result.output_path.startswith(str(tmp_path / home / "ctxscope" / "tool-output"))
