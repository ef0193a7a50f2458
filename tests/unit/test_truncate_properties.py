"""Invariants of T15 truncation, checked with hypothesis.

The head/tail walk is checked against a literal transcription of the anchors' algorithm
(split on newlines, walk whole lines, stop at the first limit) written here independently.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.algorithms.truncate import StreamingTruncator, TruncateOptions, new_spill_name, truncate

# Newlines, CR, ASCII and 2-, 3- and 4-byte code points; never the middle marker's "…".
ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\n", "\r", "é", "中", "😀", "\t"])
LINE = st.text(alphabet=st.sampled_from(["a", "b", " ", "\r", "é", "中", "😀"]), max_size=12)
# Free text, plus texts built from many lines (hypothesis keeps plain text short).
TEXT = st.text(alphabet=ALPHABET, max_size=300) | st.lists(LINE, max_size=40).map("\n".join)
DIRECTION = st.sampled_from(["head", "tail", "middle"])
MIDDLE_RE = re.compile(r"…(\d+) (tokens|chars) truncated…")
NAME = new_spill_name()
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw: st.DrawFn, min_limit: int = 0) -> tuple[str, int, int]:
    """A text with limits drawn around its own size, so that both limits bind often."""
    text = draw(TEXT)
    total_bytes = len(text.encode("utf-8"))
    total_lines = text.count("\n") + 1
    data = text.encode("utf-8")
    # byte sizes of whole-line prefixes and suffixes: the exact edges of the walk
    edges = [i for i, byte in enumerate(data) if byte == 10]
    edges += [total_bytes - i - 1 for i in edges]
    edges = [edge for edge in edges if edge >= min_limit] or [max(min_limit, total_bytes)]
    max_bytes = draw(
        st.integers(min_limit, total_bytes + 2)
        | st.integers(min_limit, 120)
        | st.sampled_from(edges)
    )
    max_lines = draw(
        st.integers(max(min_limit, 0), total_lines + 1) | st.just(0) | st.integers(1, 12)
    )
    if min_limit and max_lines == 0:
        max_lines = min_limit
    return text, max_lines, max_bytes


@pytest.fixture(autouse=True, scope="module")
def _private_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg"))
    yield
    if previous is None:
        del os.environ["XDG_DATA_HOME"]
    else:
        os.environ["XDG_DATA_HOME"] = previous


def options(**kwargs: object) -> TruncateOptions:
    data: dict[str, object] = {"hint_template": "", "spill": False, "spill_name": NAME}
    data.update(kwargs)
    return TruncateOptions.model_validate(data)


def reference_walk(
    text: str, max_lines: int, max_bytes: int, direction: str
) -> tuple[str, int, str, int] | None:
    """(preview, removed, unit, kept lines) as the anchors compute it; None when within limits."""
    lines = text.split("\n")
    total = len(text.encode("utf-8"))
    cap = max_lines if max_lines else len(lines)
    if len(lines) <= cap and total <= max_bytes:
        return None
    order = lines if direction == "head" else list(reversed(lines))
    kept: list[str] = []
    used = 0
    hit_bytes = False
    for line in order:
        if len(kept) >= cap:
            break
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > max_bytes:
            hit_bytes = True
            break
        kept.append(line)
        used += size
    if direction == "tail":
        kept.reverse()
    if hit_bytes:
        return "\n".join(kept), total - used, "bytes", len(kept)
    return "\n".join(kept), len(lines) - len(kept), "lines", len(kept)


@SETTINGS
@given(
    case=cases(),
    direction=st.sampled_from(["head", "tail"]),
)
def test_head_and_tail_match_the_reference_walk(case: tuple[str, int, int], direction: str) -> None:
    text, max_lines, max_bytes = case
    result = truncate(text, options(max_lines=max_lines, max_bytes=max_bytes, direction=direction))
    expected = reference_walk(text, max_lines, max_bytes, direction)
    if expected is None:
        assert not result.truncated and result.content is text
        return
    preview, removed, unit, kept = expected
    assert result.truncated and result.unit == unit
    if unit == "bytes" and kept == 0:
        # Beyond the anchors: not one whole line fits, so a UTF-8-safe cut of it is kept.
        assert result.partial_line
        assert result.removed == result.total_bytes - result.kept_bytes
        line = text.split("\n")[0 if direction == "head" else -1]
        assert (line.startswith if direction == "head" else line.endswith)(result.preview)
        assert len(result.preview.encode()) <= max_bytes < len(line.encode())
        return
    assert (result.preview, result.removed, result.kept_lines) == (preview, removed, kept)
    marker = f"...{removed} {unit} truncated..."
    if direction == "head":
        assert result.content == f"{preview}\n\n{marker}"
    else:
        assert result.content == f"{marker}\n\n{preview}"


@SETTINGS
@given(case=cases(), direction=DIRECTION)
def test_preview_respects_both_limits(case: tuple[str, int, int], direction: str) -> None:
    text, max_lines, max_bytes = case
    result = truncate(text, options(max_lines=max_lines, max_bytes=max_bytes, direction=direction))
    if not result.truncated:
        assert result.total_bytes <= max_bytes
        assert not max_lines or result.total_lines <= max_lines
        return
    assert result.kept_bytes == len(result.preview.encode("utf-8")) <= max_bytes
    assert "\ufffd" not in result.preview
    if max_lines:
        assert result.kept_lines <= max_lines
        if direction != "middle":
            assert result.preview.count("\n") + 1 <= max_lines
    if direction == "head":
        assert text.startswith(result.preview)
    elif direction == "tail":
        assert text.endswith(result.preview)
    if result.limit_hit == "bytes" and direction != "middle":
        assert result.kept_bytes + result.removed == result.total_bytes
    if result.limit_hit == "lines" and direction != "middle":
        assert result.kept_lines + result.removed == result.total_lines


@SETTINGS
@given(case=cases(), unit=st.sampled_from(["tokens", "chars"]))
def test_middle_keeps_both_ends_and_never_splits_a_code_point(
    case: tuple[str, int, int], unit: str
) -> None:
    text, max_lines, max_bytes = case
    result = truncate(
        text,
        options(max_lines=max_lines, max_bytes=max_bytes, direction="middle", middle_unit=unit),
    )
    if not result.truncated:
        return
    markers = list(MIDDLE_RE.finditer(result.content))
    assert len(markers) == 1 and markers[0].group(2) == unit
    prefix, suffix = result.content[: markers[0].start()], result.content[markers[0].end() :]
    assert text.startswith(prefix) and text.endswith(suffix)
    assert len(prefix) + len(suffix) <= len(text)
    # both parts are whole code points of the original: they re-encode to the original's bytes
    data = text.encode("utf-8")
    assert data.startswith(prefix.encode()) and data.endswith(suffix.encode())
    assert len(prefix.encode()) + len(suffix.encode()) <= max_bytes
    if unit == "chars":
        assert result.removed == len(text) - len(prefix) - len(suffix)
    elif result.limit_hit == "bytes":
        assert result.removed == -(-(len(data) - max_bytes) // 4)


@SETTINGS
@given(case=cases(1), direction=DIRECTION)
def test_spill_file_is_byte_identical_to_the_input(
    case: tuple[str, int, int], direction: str
) -> None:
    text, max_lines, max_bytes = case
    with tempfile.TemporaryDirectory() as folder:
        spill = Path(folder) / "spill"
        result = truncate(
            text,
            TruncateOptions(
                max_lines=max_lines, max_bytes=max_bytes, direction=direction, spill_dir=str(spill)
            ),
        )
        if result.truncated:
            assert result.spilled and result.output_path is not None
            assert Path(result.output_path).read_bytes() == text.encode("utf-8")
            assert os.listdir(spill) == [Path(result.output_path).name]
        else:
            assert not spill.exists()  # fast path: nothing written, not even the folder
            assert result.content is text and result.output_path is None


@SETTINGS
@given(case=cases(), direction=DIRECTION)
def test_fast_path_returns_input_unchanged(case: tuple[str, int, int], direction: str) -> None:
    text, max_lines, max_bytes = case
    total = len(text.encode("utf-8"))
    assume(total <= max_bytes and (not max_lines or text.count("\n") + 1 <= max_lines))
    result = truncate(
        text, options(max_lines=max_lines, max_bytes=max_bytes, direction=direction, spill=True)
    )
    assert result.content is text and not result.truncated and not result.spilled
    assert result.output_path is None and result.reason == "within_limits"


@st.composite
def chunked(draw: st.DrawFn, min_limit: int = 0) -> tuple[str, list[bytes], int, int]:
    """A case whose bytes are cut into pieces at arbitrary points (also inside code points)."""
    text, max_lines, max_bytes = draw(cases(min_limit))
    data = text.encode("utf-8")
    if draw(st.booleans()):
        cuts = list(range(1, len(data)))  # one byte at a time: exercises the tail ring's trimming
    else:
        cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    return text, pieces, max_lines, max_bytes


@SETTINGS
@given(sample=chunked(), direction=DIRECTION, unit=st.sampled_from(["tokens", "chars"]))
def test_streaming_equals_in_memory(
    sample: tuple[str, list[bytes], int, int], direction: str, unit: str
) -> None:
    text, pieces, max_lines, max_bytes = sample  # pieces may split code points
    opts = options(
        max_lines=max_lines,
        max_bytes=max_bytes,
        direction=direction,
        middle_unit=unit,
        hint_template="see {path}",
    )
    streaming = StreamingTruncator(opts)
    for piece in pieces:
        streaming.write(piece)
    streamed = streaming.finish()
    assert streamed.model_dump() == truncate(text, opts).model_dump()
    if not streamed.truncated:
        assert streaming.passthrough == text.encode("utf-8")


@SETTINGS
@given(sample=chunked(1), direction=DIRECTION)
def test_streaming_spill_is_byte_identical(
    sample: tuple[str, list[bytes], int, int], direction: str
) -> None:
    text, pieces, max_lines, max_bytes = sample
    with tempfile.TemporaryDirectory() as folder:
        opts = TruncateOptions(
            max_lines=max_lines, max_bytes=max_bytes, direction=direction, spill_dir=folder
        )
        streaming = StreamingTruncator(opts)
        for piece in pieces:
            streaming.write(piece)
        result = streaming.finish()
        in_memory = truncate(text, opts.model_copy(update={"spill": False}))
        assert result.truncated == in_memory.truncated
        if result.truncated:
            assert result.spilled
            assert Path(result.output_path or "").read_bytes() == text.encode("utf-8")
            assert len(os.listdir(folder)) == 1
        else:
            assert os.listdir(folder) == []


@SETTINGS
@given(case=cases(), direction=DIRECTION)
def test_simulation_equals_spilling_run(case: tuple[str, int, int], direction: str) -> None:
    text, max_lines, max_bytes = case
    # The simulation takes a shortcut for ASCII text (no full encode); it must not change a byte.
    simulated = truncate(
        text, options(max_lines=max_lines, max_bytes=max_bytes, direction=direction)
    )
    with tempfile.TemporaryDirectory() as folder:
        real = truncate(
            text,
            options(
                max_lines=max_lines,
                max_bytes=max_bytes,
                direction=direction,
                spill=True,
                spill_dir=folder,
            ),
        )
    assert simulated.content.replace(str(simulated.output_path), "P") == real.content.replace(
        str(real.output_path), "P"
    )
    assert simulated.model_dump(exclude={"spilled", "output_path", "content"}) == real.model_dump(
        exclude={"spilled", "output_path", "content"}
    )


@SETTINGS
@given(data=st.binary(max_size=200), max_bytes=st.integers(0, 60), direction=DIRECTION)
def test_streaming_survives_invalid_utf8(data: bytes, max_bytes: int, direction: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        streaming = StreamingTruncator(
            TruncateOptions(max_bytes=max_bytes, direction=direction, spill_dir=folder)
        )
        streaming.write(data)
        result = streaming.finish()
        if result.truncated:
            assert Path(result.output_path or "").read_bytes() == data
        else:
            assert streaming.passthrough == data


@pytest.mark.parametrize(
    "text",
    [
        "ab\r\ncd\r\n" * 20,  # \r\n lines
        "é" * 9 + "\n" + "中" * 30,  # the cut inside a multibyte character of the last line
        "a" * 10 + "\n" + "b" * 30,  # the head window is the whole first line and a bit
        "x\n" * 11,  # the head window ends exactly at the end of the output
        "\n" * 40,  # empty lines only
        "中😀\n" * 12,
    ],
)
def test_the_head_cut_counts_its_lines_as_the_stream_does(text: str) -> None:
    # In memory the head's newlines are counted while encoding, and the kept lines are found
    # from them; streaming counts the kept part itself. Both must agree, field for field.
    opts = options(max_lines=0, max_bytes=21, direction="head", hint_template="")
    streaming = StreamingTruncator(opts)
    streaming.write(text.encode())
    assert streaming.finish().model_dump() == truncate(text, opts).model_dump()
