"""A command fact's key: the program and its first arguments that are not options, after any
``cd … &&``, read in one loop that stops at the third token; the same keys as the two filters
over every token it was written as before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights import conversation_facts
from core.insights.conversation_facts import _PLAIN, _SEGMENT_SPLIT, words
from core.insights.shell_words import shell_words

_key = conversation_facts._command_key.__wrapped__


def _reference_key(command: str) -> str:
    """The key as every token was filtered, then the first three kept."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    split = "&" in line or ";" in line or "|" in line
    segments = _SEGMENT_SPLIT.split(line) if split else [line]
    segment = next((s for s in segments if not s.strip().startswith("cd ")), segments[-1])
    if _PLAIN.fullmatch(segment):
        tokens = segment.split()
    else:
        try:
            tokens = shell_words(segment)
        except ValueError:
            tokens = segment.split()
    tokens = [t for t in tokens if "=" not in t.partition("/")[0] or t.startswith("-")]
    chosen = [t for t in tokens if not t.startswith("-")][:3]
    return " ".join(words(" ".join(chosen)))


_TOKENS = st.sampled_from(
    [
        "cd",
        "cd /tmp",
        "git",
        "push",
        "origin",
        "main",
        "-n",
        "--force",
        "-C",
        "A=1",
        "PATH=/usr/bin:$PATH",
        "src/a=b.py",
        "./run.sh",
        "'1,200p'",
        '"two words"',
        "it\\'s",
        "&&",
        "||",
        ";",
        "|",
        "&",
        "\n",
        "\t",
        "'",
        "",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_TOKENS, max_size=12).map(" ".join))
def test_the_key_is_the_filtered_tokens_first_three(command: str) -> None:
    assert _key(command) == _reference_key(command)


def test_known_keys() -> None:
    assert _key("sed -n '1,200p' src/m230.py") == "sed 1 200p src m230 py"
    assert _key("cd /repo && FOO=1 pytest -q tests/unit -k parser") == "pytest tests unit parser"
    assert _key("cd /repo") == "cd repo"
    assert _key("  \n") == ""
    assert _key("A=1 B=2 -x") == ""
