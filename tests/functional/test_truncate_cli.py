"""``ctxscope truncate``: the stdin → stdout filter (tui/cli/commands/truncate.py)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.algorithms.truncate import TruncateOptions
from tui.cli.commands.truncate import CHUNK_BYTES, run_filter
from tui.cli.main import cli

SAVED_RE = re.compile(r"ctxscope: full output saved to (\S+)")


@pytest.fixture(autouse=True)
def _private_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


def invoke(args: list[str], data: bytes) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, ["truncate", *args], input=data)
    return result.exit_code, result.stdout_bytes, result.stderr


def test_head_filter_prints_preview_marker_and_spill_path(tmp_path: Path) -> None:
    data = "".join(f"{i}\n" for i in range(1, 101)).encode()
    code, out, err = invoke(["--max-lines", "3", "--spill-dir", str(tmp_path)], data)
    assert code == 0
    match = SAVED_RE.search(err)
    assert match is not None
    path = Path(match.group(1))
    assert path.parent == tmp_path and path.read_bytes() == data
    text = out.decode()
    assert text.startswith("1\n2\n3\n\n...98 lines truncated...\n\n")
    assert str(path) in text


def test_tail_and_middle_directions(tmp_path: Path) -> None:
    data = "".join(f"row {i}\n" for i in range(1000)).encode()
    code, out, _ = invoke(
        ["--direction", "tail", "--max-lines", "3", "--spill-dir", str(tmp_path), "--hint", ""],
        data,
    )
    assert code == 0 and out == b"...998 lines truncated...\n\nrow 998\nrow 999\n"
    code, out, _ = invoke(
        ["--direction", "middle", "--max-lines", "0", "--max-bytes", "16", "--hint", ""],
        data,
    )
    removed = -(-(len(data) - 16) // 4)
    assert code == 0 and out == f"row 0\nro…{removed} tokens truncated…row 999\n".encode()


def test_within_limits_passes_bytes_through_and_writes_nothing(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    for data in (b"", b"hello\n", b"\xff\xfe not utf-8 \x80\n", "héllo 😀\r\n".encode()):
        code, out, err = invoke(["--spill-dir", str(spill)], data)
        assert (code, out, err) == (0, data, "")
    assert not spill.exists()


def test_invalid_utf8_is_spilled_verbatim(tmp_path: Path) -> None:
    data = b"\xff\xfe\x80" * 1000 + b"\n" + b"\xc3" * 10
    code, out, err = invoke(["--max-bytes", "100", "--spill-dir", str(tmp_path)], data)
    assert code == 0
    match = SAVED_RE.search(err)
    assert match is not None and Path(match.group(1)).read_bytes() == data
    assert b"bytes truncated" in out


def test_spill_failure_still_exits_zero_with_a_notice(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, out, err = invoke(
        ["--max-lines", "1", "--spill-dir", str(blocker / "spill")], b"a\nb\nc\n"
    )
    assert code == 0
    assert "could not save the full output" in err
    assert out.startswith(b"a\n\n...3 lines truncated...\n\n") and b"could not be saved" in out


def test_no_spill_simulates(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    code, out, err = invoke(
        ["--max-lines", "1", "--spill-dir", str(spill), "--no-spill"], b"a\nb\n"
    )
    assert code == 0 and "would be" in err and not spill.exists()
    assert out.startswith(b"a\n\n...2 lines truncated...")


def test_bad_option_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["truncate", "--max-lines", "-1"], input=b"")
    assert result.exit_code == 2 and "max-lines" in result.output


class RecordingSource(io.BytesIO):
    """A stdin stand-in that records how it is read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.sizes: list[int | None] = []

    def read(self, size: int | None = -1, /) -> bytes:
        self.sizes.append(size)
        return super().read(size)


def test_filter_reads_in_chunks_never_all_at_once(tmp_path: Path) -> None:
    data = b"x" * (3 * CHUNK_BYTES + 5)
    source, sink, errors = RecordingSource(data), io.BytesIO(), io.BytesIO()
    code = run_filter(source, sink, errors, TruncateOptions(spill_dir=str(tmp_path)))
    assert code == 0
    assert source.sizes and all(size == CHUNK_BYTES for size in source.sizes)
    assert len(source.sizes) == 5  # four chunks, then the empty read at end of file
    assert sink.getvalue().startswith(b"x" * 51200 + b"\n\n...")


def test_console_script_on_a_real_pipe(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "ctxscope"
    if not script.exists():
        pytest.skip("the ctxscope console script is not installed in this environment")
    data = b"".join(b"%07d %s\n" % (i, b"y" * 72) for i in range(60_000))  # 4.8 MB
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [str(script), "truncate", "--direction", "tail", "--spill-dir", str(tmp_path / "spill")],
        input=data,
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    match = SAVED_RE.search(done.stderr.decode())
    assert match is not None and Path(match.group(1)).read_bytes() == data
    # the last line is empty (trailing newline, 0 bytes), then 81 bytes per 80-char line:
    # 632 lines fit in 51,200 bytes, 632 * 81 = 51,192 kept
    assert done.stdout.startswith(b"...%d bytes truncated...\n\n" % (len(data) - 632 * 81))
    assert done.stdout.endswith(b"%07d %s\n" % (59_999, b"y" * 72))
