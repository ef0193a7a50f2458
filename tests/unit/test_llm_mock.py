"""The offline summariser: deterministic, template-following, bounded, streaming, overflowing on demand."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.mock import MockSummarizer
from core.llm.protocol import ChatMessage, ContextOverflowError, Summarizer
from core.llm.summary_templates import (
    SYSTEM_PROMPT,
    TEMPLATES,
    build_prompt,
    section_headings,
    split_sections,
)
from core.model.session import Provenance

TRANSCRIPT = """<conversation>
[User]: Fix the failing tests in core/parser.py
Always run pytest -q before finishing. Do not touch the CLI.

[Tool call]: read {"path":"core/parser.py"}

[Tool result]: read
def parse(): ...

[Tool call]: bash {"command":"pytest -q"}

[Tool error]: bash
FAILED tests/test_parser.py::test_x - AssertionError

[Assistant]: The issue is an off-by-one in parse. I'll fix the loop bound.

[Tool call]: edit {"filePath":"core/lexer.py","old":"a","new":"b"}

[Tool call]: apply_patch {"input":"*** Begin Patch\\n*** Update File: core/model/tokens.py\\n@@\\n*** End Patch"}

[User]: also add a regression test
</conversation>"""


def request(transcript: str = TRANSCRIPT) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT),
        ChatMessage(role="user", content=transcript),
    ]


def run(
    mock: MockSummarizer, messages: list[ChatMessage], prompt: str, max_tokens: int = 2000
) -> str:
    return asyncio.run(mock.summarize(messages, prompt, max_tokens)).text


def test_is_a_summarizer() -> None:
    assert isinstance(MockSummarizer(), Summarizer)


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_sections_follow_the_template_in_the_prompt(template: str) -> None:
    text = run(MockSummarizer(), request(), build_prompt(template))
    assert section_headings(text) == TEMPLATES[template].headings


def test_sections_are_filled_from_the_head() -> None:
    text = run(MockSummarizer(), request(), build_prompt("t12"))
    sections = split_sections(text)
    assert "Fix the failing tests in core/parser.py" in sections["Goal"]
    assert "Do not touch the CLI" in sections["Instructions"]
    assert "also add a regression test" in sections["Instructions"]
    assert "FAILED tests/test_parser.py::test_x" in sections["Discoveries"]
    assert "`pytest -q`" in sections["Accomplished"]
    files = sections["Relevant files"]
    assert "`core/parser.py` (read)" in files
    assert "`core/lexer.py` (edited)" in files  # filePath argument of an edit tool
    assert "`core/model/tokens.py` (edited)" in files  # a file named inside a patch


def test_custom_headings_are_followed() -> None:
    prompt = "Summarise.\n\n## Objective\nx\n\n## Files touched\ny\n\n## Whatever else\nz"
    text = run(MockSummarizer(), request(), prompt)
    sections = split_sections(text)
    assert list(sections) == ["Objective", "Files touched", "Whatever else"]
    assert "core/parser.py" in sections["Files touched"]
    assert sections["Whatever else"] == "(none)"


def test_plain_chat_messages_without_the_transcript_layout() -> None:
    messages = [
        ChatMessage(role="user", content="Port the CLI to click"),
        ChatMessage(role="assistant", content="I'll start with the entry point."),
    ]
    sections = split_sections(run(MockSummarizer(), messages, build_prompt("t12")))
    assert "Port the CLI to click" in sections["Goal"]


def test_same_input_gives_the_same_text() -> None:
    prompt = build_prompt("anchored")
    first = run(MockSummarizer(), request(), prompt)
    second = run(MockSummarizer(), request(), prompt)
    assert first == second


def test_update_keeps_previous_bullets_and_adds_new_ones() -> None:
    previous = "## Goal\n- Ship version 2\n\n## Instructions\n- Use tabs\n\n## Discoveries\n(none)"
    text = run(MockSummarizer(), request(), build_prompt("t12", previous_summary=previous))
    sections = split_sections(text)
    assert sections["Goal"].splitlines()[0] == "- Ship version 2"
    assert "Then: Fix the failing tests" in sections["Goal"]
    assert "- Use tabs" in sections["Instructions"]
    assert "also add a regression test" in sections["Instructions"]
    # The previous summary's headings are not mistaken for the template's.
    assert section_headings(text) == TEMPLATES["t12"].headings


def test_update_with_an_identical_head_does_not_duplicate() -> None:
    mock = MockSummarizer()
    first = run(mock, request(), build_prompt("pi"))
    again = run(mock, request(), build_prompt("pi", previous_summary=first))
    assert again == first


@settings(max_examples=40, deadline=None)
@given(max_tokens=st.integers(min_value=1, max_value=400), repeat=st.integers(1, 40))
def test_text_fits_max_tokens(max_tokens: int, repeat: int) -> None:
    body = "\n\n".join(
        f"[User]: request number {i} "
        + "word " * 30
        + f'\n\n[Tool call]: edit {{"path":"src/file_{i}.py"}}'
        for i in range(repeat)
    )
    text = run(
        MockSummarizer(),
        request(f"<conversation>\n{body}\n</conversation>"),
        build_prompt("t12"),
        max_tokens,
    )
    assert len(text) <= max_tokens * 4


def test_streams_the_whole_text_in_chunks() -> None:
    pieces: list[str] = []
    mock = MockSummarizer()
    result = asyncio.run(
        mock.summarize(request(), build_prompt("t12"), 2000, on_delta=pieces.append)
    )
    assert len(pieces) >= 2
    assert "".join(pieces) == result.text


def test_usage_is_estimated_and_counts_the_request() -> None:
    result = asyncio.run(MockSummarizer().summarize(request(), build_prompt("t12"), 2000))
    assert result.usage.provenance is Provenance.ESTIMATED
    assert result.usage.input_tokens >= len(TRANSCRIPT) // 4
    assert result.usage.output_tokens == pytest.approx(len(result.text) / 4, abs=1)
    assert result.model == "mock"


def test_context_limit_raises_overflow() -> None:
    mock = MockSummarizer(context_limit_tokens=50)
    with pytest.raises(ContextOverflowError, match="context limit of 50"):
        asyncio.run(mock.summarize(request(), build_prompt("t12"), 2000))
    small = [ChatMessage(role="user", content="hi")]
    assert asyncio.run(mock.summarize(small, "## Goal", 100)).text.startswith("## Goal")


# --- speed paths: they must answer exactly as the plain versions -------------------------------

# Word pieces the searches look for, in odd cases and with Unicode look-alikes (dotless i,
# long s, Kelvin sign) that only the regex's own case folding handles.
_PIECES = st.one_of(
    st.sampled_from(
        [
            "found",
            "FOUND",
            "turns out",
            "because",
            "I'll",
            "i will",
            "instead",
            "Let's",
            "do not",
            "make sure",
            "the issue",
            "_",
            "x",
            "9",
            " ",
            "\n",
            ".",
            "'",
            "ı",
            "İ",
            "ſ",
            "K",
            "é",
        ]
    ),
    st.text(max_size=6),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_word_searches_answer_as_their_regex(text: str) -> None:
    from core.llm.mock_words import DECISION, FINDING, INSTRUCTION_LINE

    for words in (FINDING, DECISION, INSTRUCTION_LINE):
        expected = words.pattern.search(text) is not None
        assert words.search(text) is expected
        # Narrowed to the words present in a longer text holding this one: same answer.
        assert words.search(text, words.present(text + " and more")) is expected


_ENTRY_PIECES = st.one_of(
    st.sampled_from(
        [
            "[User]: ",
            "[User]:",
            "[Assistant]: ",
            "[Assistant reasoning]: ",
            "[Tool call]: ",
            "[Tool result]: ",
            "[Tool error]: ",
            "[System]: ",
            "[Earlier summary]: ",
            "[User]",
            "[",
            "[... 12 more characters cut from this tool output]",
            "[0, 1]",
            "[Tool",
            "\n",
            "\n\n",
            "bash",
            "error: boom",
            "We found it because of X. I'll fix it.",
            '{"path": "a.py"}',
            '{"command": ["bash", "-lc", "ls"]}',
            "*** Update File: b.py\n",
        ]
    ),
    st.text(max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ENTRY_PIECES, max_size=24).map("".join))
def test_entries_are_split_as_the_line_start_regex_splits_them(text: str) -> None:
    import re

    from core.llm import mock_entries
    from core.llm.summary_templates import ENTRY_LABELS

    pattern = re.compile(
        "^(" + "|".join(re.escape(label) for label in ENTRY_LABELS) + "):[ ]?", re.MULTILINE
    )
    matches = list(pattern.finditer(text))
    expected = [
        (m.group(1), text[m.end() : (matches[k + 1].start() if k + 1 < len(matches) else None)])
        for k, m in enumerate(matches)
    ]
    assert mock_entries.raw_entries(text) == [(label, body.strip("\n")) for label, body in expected]


@settings(max_examples=300, deadline=None)
@given(st.lists(_ENTRY_PIECES, max_size=24).map("".join))
def test_a_piece_that_starts_with_an_entry_is_read_as_the_whole_text_split(text: str) -> None:
    # A piece of a transcript is read alone only when it starts with an entry; its entries are
    # then those splitting it as a whole text gives (none is lost before the first label).
    from core.llm import mock_entries

    starts_with_entry = mock_entries.LABEL_AT.match(text) is not None
    expected = mock_entries.raw_entries(text) if starts_with_entry else None
    assert mock_entries.piece_entries(text) == expected


def _regex_entries(text: str) -> list[tuple[str, str]]:
    """The entries the multi-line regex ``^(label|...):[ ]?`` splits ``text`` into."""
    import re

    from core.llm.summary_templates import ENTRY_LABELS

    pattern = re.compile(
        "^(" + "|".join(re.escape(label) for label in ENTRY_LABELS) + "):[ ]?", re.MULTILINE
    )
    matches = list(pattern.finditer(text))
    ends = [m.start() for m in matches[1:]] + [len(text)]  # (one end too many when no match)
    return [(m.group(1), text[m.end() : ends[k]].strip("\n")) for k, m in enumerate(matches)]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["[User]: ", "[Tool result]: ", "[Assistant]:", "a[", "[", "[[", "\n", "\n[", "x", "é["]
        ),
        max_size=40,
    ).map("".join)
)
def test_entries_among_many_brackets_are_the_regex_entries(text: str) -> None:
    # Lines with many brackets inside them take the two-character search after a few
    # one-character ones, within a piece as in a whole text: the entries are the regex's.
    from core.llm import mock_entries

    expected = _regex_entries(text)
    assert mock_entries.raw_entries(text) == expected
    starts_with_entry = mock_entries.LABEL_AT.match(text) is not None
    assert mock_entries.piece_entries(text) == (expected if starts_with_entry else None)


def test_a_line_start_bracket_no_label_starts_with_is_not_an_entry() -> None:
    from core.llm import mock_entries

    text = "[Tool result]: bash\nok\n\n[... 9 more characters cut from this tool output]\n[0]"
    assert mock_entries.piece_entries(text) == [
        ("[Tool result]", "bash\nok\n\n[... 9 more characters cut from this tool output]\n[0]")
    ]
    assert mock_entries.piece_entries("[0]\n[User]: hi") is None
    assert mock_entries.raw_entries("[0]\n[User]: hi") == [("[User]", "hi")]


def test_a_cached_head_gives_the_same_summary() -> None:
    mock = MockSummarizer()
    prompt = build_prompt("anchored")
    first = run(mock, request(), prompt)
    assert len(mock._facts) > 0  # the entries were cached
    # A longer head that starts with the same entries: cached and new entries together.
    longer = TRANSCRIPT.replace(
        "</conversation>", "\n[Assistant]: Found it: the cause is a stale cache.\n</conversation>"
    )
    assert run(mock, request(), prompt) == first
    assert run(mock, request(longer), prompt) == run(MockSummarizer(), request(longer), prompt)


def test_the_entry_cache_stays_within_its_bound() -> None:
    mock = MockSummarizer(cache_chars=2_000)
    body = "\n\n".join(f"[Assistant]: step {i} " + "word " * 40 for i in range(50))
    text = run(mock, request(f"<conversation>\n{body}\n</conversation>"), build_prompt("t12"))
    assert 0 < len(mock._facts) < 50  # the oldest entries were evicted
    assert mock._facts._weight <= 2_000
    unbounded = run(
        MockSummarizer(), request(f"<conversation>\n{body}\n</conversation>"), build_prompt("t12")
    )
    assert text == unbounded


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["[User]: ", "[Assistant]: ", "[Tool call]: ", "[Tool result]: ", "x"]),
            st.lists(_ENTRY_PIECES, max_size=8).map("".join),
        ).map("".join),
        max_size=10,
    )
)
def test_a_transcript_read_by_its_entries_reads_as_its_text(entries: list[str]) -> None:
    # A transcript core.llm.summary_templates just built is read from the entries it joined; the same text
    # arriving as any other string is split. Both must give the same summary.
    from core.llm.summary_templates import build_transcript

    built = build_transcript([e for e in entries if e])
    other = "".join(list(built))  # an equal string, not the one built
    prompt = build_prompt("anchored")
    assert run(MockSummarizer(), request(built), prompt) == run(
        MockSummarizer(), request(other), prompt
    )


COMMANDS_FIRST = """<conversation>
[User]: /model
[User]: <command-name>/model</command-name>
<command-message>model</command-message>
[User]: <bash-input>git switch main</bash-input>
[User]: <local-command-stdout>Set model to Sonnet 4.5</local-command-stdout>
[User]: Make the flaky webhook test deterministic
[User]: /compact
[User]: /goal keep every public name and add a regression test
</conversation>"""


def test_commands_and_injected_text_are_not_the_goal() -> None:
    # Regression: "Goal • /model" — a slash command is not what the user asked for
    prompt = build_prompt(TEMPLATES["t12"])
    sections = split_sections(run(MockSummarizer(), request(COMMANDS_FIRST), prompt))
    assert sections["Goal"].strip() == "- Make the flaky webhook test deterministic"
    instructions = sections["Instructions"]
    assert "/compact" not in instructions and "<bash-input>" not in instructions
    # a command's own words are a request
    assert "- keep every public name and add a regression test" in instructions


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["[", "\n", "\n[", "a[b", "[[", "x", "\u00e9[", "\r\n["]), max_size=20
    ).map("".join),
    st.integers(min_value=0, max_value=60),
)
def test_a_line_start_bracket_is_found_as_the_two_character_search_finds_it(
    text: str, start: int
) -> None:
    # The memchr search for "[" (and its fall back after a few inside lines) must answer as
    # text.find("\n[", start) + 1 does, with many brackets inside lines or none at all.
    from core.llm import mock_entries

    assert mock_entries.line_bracket(text, start) == text.find("\n[", start) + 1


def test_a_text_with_many_brackets_inside_lines_still_finds_its_entries() -> None:
    from core.llm import mock_entries

    text = "[User]: a[0] b[1] c[2] d[3] e[4] f[5]\n[Assistant]: ok [x]\n[Tool call]: ls"
    labels = [label for label, _body in mock_entries.raw_entries(text)]
    assert labels == ["[User]", "[Assistant]", "[Tool call]"]


_ARGUMENT_KEYS = st.sampled_from(
    [
        *("path", "file_path", "filePath", "filename", "paths", "input", "patch", "content"),
        *("cmd", "command", "yield_time_ms", "max_output_tokens", "query"),
    ]
)
_ARGUMENT_VALUES = st.one_of(
    st.sampled_from(["a.py", " ", "", "*** Update File: b.py\n", "*** Add File: c.md\nx"]),
    st.lists(st.sampled_from(["d.py", "", 3]), max_size=3),
    st.integers(),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_ARGUMENT_KEYS, _ARGUMENT_VALUES, max_size=6))
def test_paths_of_arguments_without_a_path_key_are_none(arguments: dict[str, object]) -> None:
    # _paths_in passes over arguments holding none of the keys it reads; with some, every key
    # is read in order, as reading each key of every argument dict does.
    from core.llm import mock as llm_mock

    expected: list[str] = []
    for key in llm_mock._PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            expected.append(value.strip())
    many = arguments.get("paths")
    if isinstance(many, list):
        expected.extend(p for p in many if isinstance(p, str) and p.strip())
    for key in ("input", "patch", "content"):
        value = arguments.get(key)
        if isinstance(value, str) and "*** " in value:
            expected.extend(m.strip() for m in llm_mock._PATCH_FILE.findall(value))
    assert llm_mock._paths_in(arguments) == expected


@given(
    st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "\t", "\u2003", "é"]), max_size=80),
    st.integers(0, 30),
)
def test_a_line_folds_and_cuts_as_the_whole_text_folded(text: str, limit: int) -> None:
    """``_one_line`` folds a long text's start only (the words, then the cut): the same line
    as the whole text folded, then cut."""
    from core.llm.mock import _one_line

    folded = " ".join(text.split())
    expected = folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"
    assert _one_line(text, limit) == expected


def test_a_long_text_is_folded_from_its_start_only() -> None:
    from core.llm.mock import _one_line

    class Whole(str):
        def split(self, *_args: object, **_kwargs: object) -> list[str]:
            raise AssertionError("the whole text folded")

    text = Whole("word  " * 10_000)
    assert _one_line(text, 20) == "word word word word…"
