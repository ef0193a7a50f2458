"""A summary keeps a command when it holds every word of the command's keys: the words looked
up as sets in C (one command fact a shell call of every head), the same verdicts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.conversation_facts import Fact, NormalisedText, keeps

_WORDS = st.sampled_from(["make", "test", "pytest", "x", "tests", "git", "push", "origin"])


class _NoLookups(set):  # type: ignore[type-arg]
    """A vocabulary that refuses to be asked word by word."""

    def __contains__(self, item: object) -> bool:
        raise AssertionError("a word was looked up alone")


def test_a_command_s_words_are_compared_as_sets() -> None:
    summary = NormalisedText("we ran make test and pytest")
    summary.vocabulary = _NoLookups(summary.vocabulary)
    assert keeps(summary, Fact("command", "make test", 3, ("make test",)))
    assert not keeps(summary, Fact("command", "git push", 4, ("git push",)))


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=6), st.lists(st.lists(_WORDS, max_size=3), max_size=3))
def test_a_command_is_kept_when_every_word_of_its_keys_is_there(
    summary_words: list[str], keys: list[list[str]]
) -> None:
    summary = NormalisedText(" ".join(summary_words))
    joined = tuple(" ".join(key) for key in keys)
    fact = Fact("command", "cmd", 0, joined)
    expected = all(word in set(summary_words) for key in joined for word in key.split())
    assert keeps(summary, fact) is expected
