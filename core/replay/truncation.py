"""Per truncation setting, what the policy would have sent of every tool output.

Recorded outputs were already truncated by the recording agent, so a policy can only shorten them
further (or add its hint to one just over a limit). Only outputs over a limit are truncated at all:
an output with more characters than its byte limit is over without being measured, the others are
measured once per session; the truncated content is made once per output and limit (one encoding
of the output) to be counted, and each setting's result once (``spill=False``: nothing is written
while simulating). The truncated words are not kept: a setting's copy of an output is made again
when first read (:class:`Copies`), which a replay does only to compact or prune a context holding
it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING, Any, overload

from core.model.session import Message, Session, replace
from core.model.tokens import OutputSizes, get_counter, message_text, output_sizes
from core.policy import Policy, TruncationPolicy
from core.replay.state import Item

if TYPE_CHECKING:
    from core.algorithms.truncate import TruncationResult

_Content = tuple[str, str | None]
"""A truncated output's note and the reason (None: not truncated)."""


def sent_output(message: Message, rules: TruncationPolicy) -> TruncationResult:
    """Tool output ``message`` as ``rules`` would send it (simulated: nothing is written): the
    one call of :func:`core.algorithms.truncate.truncate_tool_output` the replay and the detail pane share,
    so what the pane previews is what the replay counted."""
    # (imported on first use: a replay that truncates nothing, analyze of most sessions, starts
    # without the truncation algorithms and their models)
    from core.algorithms.truncate import truncate_tool_output

    tool_result = message.tool_result
    assert tool_result is not None, "a tool output"
    return truncate_tool_output(
        tool_result.output,
        tool_name=tool_result.tool_name,
        call_id=tool_result.call_id,
        policy=rules,
        spill=False,
        truncated_by_tool=tool_result.truncated_by_tool,
    )


def _copy_of(message: Message, outcome: TruncationResult) -> Message | None:
    """Tool output ``message`` with the words ``outcome`` sends (None: it is not truncated)."""
    if not outcome.truncated:
        return None
    tool_result = message.tool_result
    assert tool_result is not None
    return replace(message, tool_result=replace(tool_result, output=outcome.content))


def _copy_at(messages: Sequence[Message], rules: TruncationPolicy, i: int) -> Message | None:
    """Message ``i`` as ``rules`` send it, when they truncate it (else None)."""
    return _copy_of(messages[i], sent_output(messages[i], rules))


class Truncation:
    """One truncation setting applied to every tool output."""

    __slots__ = ("items", "messages", "notes", "reasons", "tokens", "truncated")

    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens
        """Tokens of every message as the policy sends it (the estimator's own list when no
        output is truncated; never modified once made)."""
        self.truncated = bytearray(len(tokens))
        """Per message: its output is truncated, 1, else 0 (a byte a message)."""
        self.notes: dict[int, str] = {}
        """What truncation cut and where the full output would be saved, per truncated output."""
        self.reasons: dict[int, str] = {}
        """One sentence per truncated output: the limit it was over and what was kept."""
        self.messages: Copies = Copies(lambda _i: None)
        """The truncated copy of each truncated message (made when first read)."""
        self.items: WalkedItems | None = None
        """The context item of each message under this setting (None: not in the main
        context), made when asked for, by every run: items are never modified."""

    def differs_from(self, other: Truncation, i: int) -> bool:
        """Message ``i`` is sent otherwise under ``other``."""
        return (
            self.tokens[i] != other.tokens[i]
            or self.truncated[i] != other.truncated[i]
            or self.notes.get(i) != other.notes.get(i)
            or self.reasons.get(i) != other.reasons.get(i)
            or not self.messages.same_output(other.messages, i)
        )


Recipe = tuple[Any, ...]
"""What a truncated output's words follow from: its index, limits, direction and the wording
rules (``Truncations._truncated``'s key)."""


class Copies(Mapping[int, Message]):
    """The truncated copy of each output a setting truncates, made when first read and kept
    from then on (every later reader gets the same object: a compaction's outcome holds it).
    Until then only what it is made from is kept: 1,534 outputs cut to 30,000 bytes each held
    89 MB at the peak of ``analyze``, whose replay of that session never reads one (it reads
    a copy only to compact or prune a context holding it)."""

    __slots__ = ("_made", "_make", "_recipes")

    def __init__(self, make: Callable[[int], Message | None]) -> None:
        self._make = make
        self._recipes: dict[int, Recipe] = {}
        self._made: dict[int, Message] = {}

    def add(self, i: int, recipe: Recipe) -> None:
        """Output ``i`` is truncated, its words following from ``recipe``."""
        self._recipes[i] = recipe

    def __getitem__(self, i: int) -> Message:
        made = self._made.get(i)
        if made is None:
            if i not in self._recipes:
                raise KeyError(i)
            copy = self._make(i)
            assert copy is not None, "a truncated output's copy"
            made = self._made[i] = copy
        return made

    def __iter__(self) -> Iterator[int]:
        return iter(self._recipes)

    def __len__(self) -> int:
        return len(self._recipes)

    def __contains__(self, i: object) -> bool:
        return i in self._recipes

    def made(self) -> int:
        """How many copies were made so far."""
        return len(self._made)

    def output(self, i: int) -> str | None:
        """The words output ``i`` is sent with (None: not truncated), made again when its copy
        is not kept (and not kept then)."""
        if i not in self._recipes:
            return None
        copy = self._made.get(i)
        if copy is None:
            copy = self._make(i)
        result = None if copy is None else copy.tool_result
        return None if result is None else result.output

    def same_output(self, other: Copies, i: int) -> bool:
        """Output ``i`` is sent with the same words here and in ``other`` (a hint worded
        otherwise can keep its tokens and notes); copies made from the same recipe are not
        made to be compared."""
        mine, theirs = self._recipes.get(i), other._recipes.get(i)
        if mine is None or theirs is None:
            return mine is theirs
        return mine == theirs or self.output(i) == other.output(i)


class Truncations:
    """Every truncation setting a session was replayed under (cached by setting and estimator)."""

    def __init__(self, session: Session, tokens: Callable[[str], list[int]]) -> None:
        self.session = session
        self._tokens = tokens
        self._settings: dict[tuple[Any, ...], Truncation] = {}
        self._content: dict[Recipe, _Content] = {}
        self._counted: dict[tuple[Recipe, str], int] = {}
        """Tokens of each truncated copy, by recipe and estimator."""
        self._sizes: OutputSizes | None = None
        self._bytes: array[int] | None = None
        """UTF-8 bytes of each message's tool output as far as measured (-1: not yet); a column
        (8 bytes a message) rather than a dict of int objects."""
        self._lines: array[int] | None = None
        """Lines of each message's tool output as far as counted (-1: not yet)."""
        self._plain_items: dict[str, PlainItems] = {}
        self._by_lines: dict[tuple[str | None, bool], ByLines] = {}
        """Each :data:`OutputSizes` group's outputs by their lines, once every output's lines
        are counted (:meth:`keep_by_lines`)."""

    def of(self, policy: Policy) -> Truncation:
        """The truncation ``policy`` makes (its estimator counts the truncated outputs)."""
        key = (policy.estimator, policy.truncation.key())
        cached = self._settings.get(key)
        if cached is not None:
            return cached
        rules = policy.truncation
        plain = self._tokens(policy.estimator)
        result = Truncation(plain)  # (the estimator's own list until an output is truncated)
        text_key = rules.key(
            include={
                "middle_unit",
                "hint_template",
                "subagent_hint_template",
                "use_subagent_hint",
                "respect_tool_truncation",
                "spill_dir",  # (the hint names the file the output would be saved to)
            }
        )
        frozen = rules.model_copy(deep=True)  # (what the copies are made with, later)
        # (the copies read the messages, not these truncations: no reference cycle)
        copies = result.messages = Copies(partial(_copy_at, self.session.messages, frozen))
        for i, max_lines, max_bytes, direction in self._over_limits(rules):
            recipe = (i, max_lines, max_bytes, direction, text_key)
            tokens, note, reason = self._truncated(recipe, rules, policy.estimator)
            if reason is None:
                continue
            copies.add(i, recipe)
            if result.tokens is plain:
                result.tokens = list(plain)
            result.tokens[i] = tokens
            result.truncated[i] = True
            result.notes[i] = note
            result.reasons[i] = reason
        self._settings[key] = result
        return result

    def _over_limits(self, rules: TruncationPolicy) -> list[tuple[int, int, int, Any]]:
        """The outputs over their tool's limits, in message order: ``(message index, max lines,
        max bytes, direction)``."""
        over: list[tuple[int, int, int, Any]] = []
        counted = self._line_counts()
        for (name, by_tool), outputs in self._output_sizes().items():
            enabled, max_lines, max_bytes, direction = rules.limits_for(name)
            if not enabled or (by_tool and rules.respect_tool_truncation):
                continue
            by_lines = self._by_lines.get((name, by_tool))
            if by_lines is not None and max_lines > 0 and by_lines.most_chars <= max_bytes // 4:
                # (none is measured in bytes: those over are the ones of most lines, found
                # by a search, not looked at one by one)
                over += [(i, max_lines, max_bytes, direction) for i in by_lines.over(max_lines)]
                continue
            # A character is 1 to 4 bytes and a line ends at a character: an output of at
            # most ``short`` characters fits unmeasured. More characters than bytes allowed is
            # over: only an output between the two is measured, once per session.
            short = max_bytes // 4 if max_lines <= 0 else min(max_bytes // 4, max_lines - 1)
            # The same holds of each limit alone: its bytes are measured only past a quarter of
            # the bytes allowed, its lines counted only from as many characters as lines allowed.
            indices, sizes = outputs
            longer = list(map(short.__lt__, sizes))
            few_bytes = max_bytes // 4
            for i, chars in zip(compress(indices, longer), compress(sizes, longer), strict=True):
                if chars > max_bytes or (chars > few_bytes and self._size(i) > max_bytes):
                    over.append((i, max_lines, max_bytes, direction))
                elif 0 < max_lines <= chars:
                    lines = counted[i]
                    if lines < 0:  # (counted here, once per session: a call per output cost more)
                        lines = self._count_lines(i)
                        counted = self._line_counts()  # (8 bytes a count past 2**31 lines)
                    if lines > max_lines:
                        over.append((i, max_lines, max_bytes, direction))
        over.sort()
        return over

    def _count_lines(self, i: int) -> int:
        """Count the lines of tool output ``i`` and keep the count."""
        counted = self._line_counts()
        result = self.session.messages[i].tool_result
        assert result is not None
        lines = result.output_lines()
        try:
            counted[i] = lines
        except OverflowError:  # (over 2**31 lines: 8 bytes a count from here)
            counted = self._lines = array("q", counted)
            counted[i] = lines
        return lines

    def uncounted_lines(self) -> list[int]:
        """The tool outputs whose lines are not counted yet (what the first change of a line
        limit reads: 50 MB of outputs at 200,000 messages, 60 ms), in message order."""
        counted = self._line_counts()
        listed = sorted(i for indices, _chars in self._output_sizes().values() for i in indices)
        return [i for i in listed if counted[i] < 0]

    def count_lines(self, indices: Iterable[int]) -> None:
        """Count the lines of the tool outputs at ``indices`` now (the TUI counts them ahead, while
        it waits for the user, so that a change of a line limit does not read every output)."""
        counted = self._line_counts()
        for i in indices:
            if counted[i] < 0:
                self._count_lines(i)
                counted = self._line_counts()

    def keep_by_lines(self) -> None:
        """Once every output's lines are counted (:meth:`count_lines`), keep each group's outputs
        in the order of their lines: a line limit, with bytes allowed that need no output of the
        group measured, finds the ones over it by a search rather than looking at each."""
        groups = self._output_sizes()
        if len(self._by_lines) == len(groups):
            return
        counted = self._line_counts()
        for group, (listed, chars) in groups.items():
            lines = list(map(counted.__getitem__, listed))
            if lines and min(lines) < 0:
                return  # (not every output counted yet)
            self._by_lines[group] = ByLines(listed, lines, max(chars, default=0))

    def _truncated(
        self, recipe: Recipe, rules: TruncationPolicy, estimator: str
    ) -> tuple[int, str, str | None]:
        """The tokens (by ``estimator``), note and reason of output ``i`` truncated under these
        limits (``recipe``: ``(i, max lines, max bytes, direction, wording)``): worked out once
        per output and limits, counted once per estimator too; the words are not kept."""
        entry = self._content.get(recipe)
        tokens = self._counted.get((recipe, estimator), -1)
        if entry is not None and (entry[1] is None or tokens >= 0):
            return tokens, *entry
        i, max_lines, max_bytes, direction, _text_key = recipe
        message = self.session.messages[i]
        tool_result = message.tool_result
        assert tool_result is not None
        outcome = sent_output(message, rules)
        copy = _copy_of(message, outcome)
        if copy is None:
            entry = ("", None)
        else:
            what = f"{outcome.removed:,} {outcome.unit or 'bytes'}"
            entry = (
                f"...{what} truncated... (would spill to {outcome.output_path})",
                f"{tool_result.tool_name or 'tool'} output of {outcome.total_lines:,} "
                f"lines / {outcome.total_bytes:,} bytes is over the "
                f"{outcome.limit_hit or 'size'} limit ({max_lines:,} lines, "
                f"{max_bytes:,} bytes): {what} cut, the {direction} kept.",
            )
            tokens = get_counter(estimator).count(message_text(copy))
            self._counted[recipe, estimator] = tokens
        self._content[recipe] = entry
        return tokens, *entry

    def _output_sizes(self) -> OutputSizes:
        """:data:`OutputSizes`, listed once per session (each truncation setting compares them
        with its limits for that tool)."""
        if self._sizes is None:
            # (listed by the tokens' count of the messages when it is a MessageTokens, which
            # reads every output anyway: not read again here)
            listed: OutputSizes | None = getattr(self._tokens, "outputs", None)
            self._sizes = listed if listed is not None else output_sizes(self.session.messages)
        return self._sizes

    def _size(self, i: int) -> int:
        """UTF-8 bytes of tool output ``i``, measured once per session."""
        sizes = self._bytes
        if sizes is None:
            sizes = self._bytes = array("q", [-1]) * len(self.session.messages)
        size = sizes[i]
        if size < 0:
            tool_result = self.session.messages[i].tool_result
            assert tool_result is not None
            size = sizes[i] = tool_result.output_utf8_size()
        return size

    def _line_counts(self) -> array[int]:
        """Lines of each tool output (``split("\\n")`` count) as far as counted (-1: not yet;
        each is counted once per session)."""
        counts = self._lines
        if counts is None:
            counts = self._lines = array("i", [-1]) * len(self.session.messages)
        return counts

    def items(self, truncation: Truncation, estimator: str, walked: Sequence[int]) -> WalkedItems:
        """The context item of every message a walk adds under ``truncation`` (None for the
        others): the session's own messages (shared by every setting of this estimator), with
        the outputs this setting truncates in their place; each stretch made when asked for."""
        if truncation.items is None:
            plain = self._plain_items.get(estimator)
            if plain is None:
                tok = self._tokens(estimator)
                plain = self._plain_items[estimator] = PlainItems(
                    self.session.messages, tok, walked
                )
            truncation.items = WalkedItems(plain, truncation)
        return truncation.items


class ByLines:
    """The outputs of one group in the order of their lines (:meth:`Truncations.keep_by_lines`):
    two columns, 16 bytes an output."""

    __slots__ = ("indices", "lines", "most_chars")

    def __init__(self, indices: Sequence[int], lines: list[int], most_chars: int) -> None:
        order = sorted(range(len(lines)), key=lines.__getitem__)
        self.indices = array("q", map(indices.__getitem__, order))
        """The outputs' message indices, fewest lines first."""
        self.lines = array("q", map(lines.__getitem__, order))
        """Their lines, in that order."""
        self.most_chars = most_chars
        """The most characters of one of them."""

    def over(self, max_lines: int) -> array[int]:
        """The outputs of more than ``max_lines`` lines."""
        return self.indices[bisect_right(self.lines, max_lines) :]


class PlainItems:
    """The context item of every message a walk adds (None for the others) under one estimator,
    made in C (a struct per message, then None for those not walked) for the stretch asked for,
    each time it is asked for: none is kept. A walk asks for each stretch about once (what a
    compaction or a pruning is given), so keeping them saved no work for a one-shot command and
    held an item per message of a 100 MB session (9 MB) at its peak. Shared by every truncation
    setting of the estimator."""

    __slots__ = ("_messages", "_tokens", "_walked")

    def __init__(
        self, messages: Sequence[Message], tokens: list[int], walked: Sequence[int]
    ) -> None:
        self._messages = messages
        self._tokens = tokens
        self._walked = walked

    def __len__(self) -> int:
        return len(self._walked)

    def span(self, start: int, stop: int) -> list[Item | None]:
        """The items of messages ``start`` to ``stop`` (not included; ``0 <= start <= stop <=
        len(self)``), made now."""
        span = range(start, stop)
        items: list[Item | None] = list(
            map(Item, self._messages[start:stop], span, self._tokens[start:stop])
        )
        for j in compress(range(stop - start), map(not_, self._walked[start:stop])):
            items[j] = None
        return items


class WalkedItems(Sequence["Item | None"]):
    """The items a walk adds under one truncation setting (:meth:`Truncations.items`): the
    estimator's :class:`PlainItems` with the setting's truncated outputs in their place, made
    when asked for (a truncated output's item is made once: the setting keeps its copy)."""

    __slots__ = ("_at", "_plain", "_truncation")

    def __init__(self, plain: PlainItems, truncation: Truncation) -> None:
        self._plain = plain
        self._truncation = truncation
        self._at = sorted(truncation.messages)

    def __len__(self) -> int:
        return len(self._plain)

    def _span(self, start: int, stop: int) -> list[Item | None]:
        items = self._plain.span(start, stop)
        copies, tokens = self._truncation.messages, self._truncation.tokens
        for j in self._at[bisect_left(self._at, start) : bisect_left(self._at, stop)]:
            if items[j - start] is not None:  # (walked: its copy is made now, if not yet)
                items[j - start] = Item(copies[j], j, tokens[j])
        return items

    @overload
    def __getitem__(self, at: int) -> Item | None: ...

    @overload
    def __getitem__(self, at: slice) -> list[Item | None]: ...

    def __getitem__(self, at: int | slice) -> Item | list[Item | None] | None:
        n = len(self)
        if isinstance(at, slice):
            # (bounds of the whole sequence)
            start, stop, step = at.indices(n)
            if step == 1:
                return self._span(start, max(start, stop))
            picked = range(start, stop, step)
            if not picked:
                return []
            low, high = min(picked), max(picked)
            items = self._span(low, high + 1)
            return [items[j - low] for j in picked]
        if not -n <= at < n:
            raise IndexError("item index out of range")
        j = at % n
        return self._span(j, j + 1)[0]
