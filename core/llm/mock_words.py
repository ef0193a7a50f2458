"""The mock summariser's keyword searches: whole words in any case, answered with ``str.find`` on
ASCII text and by the regex they stand for on any other (:class:`Words`), and the word lists
:mod:`core.llm.mock` reads instructions, findings and decisions with."""

from __future__ import annotations

import re


def is_word_char(char: str) -> bool:
    r"""``char`` is a regex word character (``\w``) — for ASCII characters: letters, digits, ``_``."""
    return char.isalnum() or char == "_"


class Words:
    r"""A case-insensitive search for whole words: the regex ``\b(w1|w2|...)\b`` (IGNORECASE).

    Replay summarises thousands of messages, and the regex costs tens of microseconds per
    message. For ASCII text (almost all of it) the same answer comes from ``str.find`` on the
    lowered text plus a word-boundary check on each side; for other text the regex itself
    decides, so Unicode case folding and word boundaries stay exactly the regex's. The words are
    lowercase and start and end with a letter, so ``\b`` before and after them means "no word
    character there".
    """

    __slots__ = ("needed", "pattern", "words")

    def __init__(self, *words: str) -> None:
        self.words = words
        self.pattern = re.compile(r"\b(" + "|".join(words) + r")\b", re.IGNORECASE)
        # The longest space-separated part of each word, leaving out a part that holds
        # another one (where "decided" is, "decide" is too).
        longest = {max(word.split(), key=len) for word in words}
        self.needed = tuple(
            sorted(p for p in longest if not any(q != p and q in p for q in longest))
        )

    def none_in_folded(self, lowered: str) -> bool:
        """No word occurs in the whitespace-folded form (``" ".join(text.split())``) of an ASCII
        text whose lower case is ``lowered``, known without folding it: a word occurs there only
        where each of its space-separated parts occurs in ``lowered``, so none does when none
        of :attr:`needed` occurs in it. (True: :meth:`present` of the folded text is empty;
        False: it may not be.)"""
        return not any(map(lowered.__contains__, self.needed))

    def present(self, text: str) -> tuple[str, ...] | None:
        """The words that occur in ASCII ``text`` at all (as substrings, in any case): the only
        ones :meth:`search` needs to try on any part of it. None for non-ASCII text."""
        if not text.isascii():
            return None
        return tuple(filter(text.lower().__contains__, self.words))

    def search(
        self, text: str, words: tuple[str, ...] | None = None, *, lowered: str | None = None
    ) -> bool:
        """``text`` holds one of the words as a whole word, in any case.

        ``words``: what :meth:`present` returned for a text that contains this one (a shorter
        list to try); None tries every word. ``lowered``: ``text.lower()`` of an ASCII ``text``,
        when the caller has it.
        """
        if lowered is None and not text.isascii():
            return self.pattern.search(text) is not None
        if words is not None and not words:
            return False
        if lowered is None:
            lowered = text.lower()
        size = len(lowered)
        # (only the words that occur at all, told by ``in`` in one C loop: most texts hold none)
        for word in filter(lowered.__contains__, self.words if words is None else words):
            at = lowered.find(word)
            while at >= 0:
                end = at + len(word)
                if (at == 0 or not is_word_char(lowered[at - 1])) and (
                    end == size or not is_word_char(lowered[end])
                ):
                    return True
                at = lowered.find(word, at + 1)
        return False


INSTRUCTION_LINE = Words(
    "must",
    "should",
    "don't",
    "do not",
    "never",
    "always",
    "please",
    "make sure",
    "avoid",
    "prefer",
    "only",
    "instead",
)
FINDING = Words(
    "found",
    "turns out",
    "because",
    "the cause",
    "the issue",
    "the problem",
    "root cause",
    "it seems",
    "appears to",
)
DECISION = Words(
    "decided",
    "decide",
    "instead",
    "chose",
    "choose",
    "i will",
    "i'll",
    "we will",
    "let's",
    "going to",
    "plan is",
)
