"""Reading a summary prompt back (the previous summary, the section headings) with ``str.find``
gives what the regexes they stand for give."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm import summary_templates
from core.llm.summary_templates import (
    PREVIOUS_SUMMARY_CLOSE,
    PREVIOUS_SUMMARY_OPEN,
    extract_previous_summary,
    section_headings,
    split_sections,
)

_PREVIOUS_REGEX = re.compile(
    re.escape(PREVIOUS_SUMMARY_OPEN) + r"\n?(.*?)\n?" + re.escape(PREVIOUS_SUMMARY_CLOSE), re.DOTALL
)
"""The rule :func:`extract_previous_summary` follows, as a regex."""


def _by_regex(prompt: str) -> tuple[str | None, str]:
    match = _PREVIOUS_REGEX.search(prompt)
    if match is None:
        return None, prompt
    return match.group(1).strip(), prompt[: match.start()] + prompt[match.end() :]


_PROMPT_PIECES = (
    PREVIOUS_SUMMARY_OPEN,
    PREVIOUS_SUMMARY_CLOSE,
    "<previous-summary",
    "</previous-summary",
    "\n",
    "\n\n",
    " ",
    "\t",
    "#",
    "##",
    "## ",
    "## Goal",
    "### Files",
    "##\t Next steps ##  ",
    "- a bullet",
    "\r",
)
"""Pieces a prompt is made of: its tags (whole and cut), headings of every shape, blanks."""
_PIECES = st.sampled_from(_PROMPT_PIECES) | st.text(max_size=5)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_the_previous_summary_is_read_as_its_regex_reads_it(prompt: str) -> None:
    assert extract_previous_summary(prompt) == _by_regex(prompt)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_headings_are_found_as_the_multiline_regex_finds_them(text: str) -> None:
    pattern = summary_templates._HEADING
    expected = [(m.start(), m.end(), m.group(1)) for m in pattern.finditer(text)]
    found = [(m.start(), m.end(), m.group(1)) for m in summary_templates._headings(text)]
    assert found == expected


def test_a_prompt_with_a_previous_summary_splits_into_its_sections() -> None:
    prompt = (
        f"Update it.\n{PREVIOUS_SUMMARY_OPEN}\n## Goal\n- fix it\n\n## Files\n- `a.py`\n"
        f"{PREVIOUS_SUMMARY_CLOSE}\n## Goal\n## Next steps\n"
    )
    previous, rest = extract_previous_summary(prompt)
    assert previous == "## Goal\n- fix it\n\n## Files\n- `a.py`"
    assert rest == "Update it.\n\n## Goal\n## Next steps\n"
    assert section_headings(rest) == ["Goal", "Next steps"]
    assert split_sections(previous) == {"Goal": "- fix it", "Files": "- `a.py`"}
