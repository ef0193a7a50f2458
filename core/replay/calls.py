"""What the session is, whatever the policy and the estimator: its model calls and turns, and what
the recording says about each call (usage, on which side of the reply it was measured, whether it
overflowed).

Built once per session by the :class:`~core.replay.engine.Replayer`; never modified afterwards.
"""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from functools import cached_property
from itertools import accumulate, compress, repeat
from operator import add, eq, ne
from struct import pack
from typing import TypeVar, cast

from core.algorithms.overflow import RecordedKind, overflow_reason, recorded_side, usable_columns
from core.model.session import (
    FLAG_CALL,
    FLAG_MAIN,
    FLAG_TURN,
    IS_MAIN_CALL,
    Session,
    SourceFormat,
    UsageConvention,
    message_flags,
)


def _table(*codes: int, value: int = 1) -> bytes:
    """A ``bytes.translate`` table: ``value`` for each of ``codes``, 0 for every other byte."""
    table = bytearray(256)
    for code in codes:
        table[code] = value
    return bytes(table)


_MAIN, _CALL, _TURN = FLAG_MAIN, FLAG_MAIN | FLAG_CALL, FLAG_MAIN | FLAG_TURN
"""The three codes a main message's flags take (a side chain's: 0)."""
_IS_MAIN = _table(_MAIN, _CALL, _TURN)
_IS_CALL = IS_MAIN_CALL
_IS_TURN = _table(_TURN)
_CALLS_AND_TURNS = bytes(1 if code == _CALL else 2 if code == _TURN else 0 for code in range(256))
"""With :data:`_NEITHER` deleted: a call 1, a turn's start 2, in the messages' order."""
_NEITHER = bytes(code for code in range(256) if code not in (_CALL, _TURN))
_STARTED = _table(3)
"""A call after a turn's start (the pair 2, 1 of :data:`_CALLS_AND_TURNS` made one 3): 1."""

_AFTER_REPLY_FORMATS = (SourceFormat.PI, SourceFormat.CODEX, SourceFormat.OPENCODE)
"""Formats whose agents measure the context after the reply (when no usage says otherwise)."""


class Calls:
    """The model calls of a session, its turns, and the recorded usage of each call."""

    def __init__(self, session: Session) -> None:
        self._session = weakref.ref(session)
        self.n = n = len(session.messages)
        flags = message_flags(session)
        self.main = bytearray(flags.translate(_IS_MAIN))
        """Messages of the main conversation (not a sub-agent's side chain): 1, else 0. This and
        the other per-message flags are bytes (one a message, not a list's 8-byte pointer)."""
        self.calls = array("i")
        """The message index of each model call (assistant message), in order (4 bytes a call, no
        int object kept per call)."""
        self.call_of = array("i", [-1]) * n
        """The call index of each message (-1: not a call); this and the other per-message int
        columns are arrays (4 bytes a message, no int object per call)."""
        self.first_of_turn = bytearray()
        """Per call: a turn started since the previous call (the check schedule's turn end), 1,
        else 0 (a byte a call)."""
        self.turn_start = bytearray(flags.translate(_IS_TURN))
        """Per message of the main conversation: it starts a turn, 1 (:attr:`Message.is_turn_start`,
        read once here rather than at every walk), else 0."""
        self.is_call = is_call = self._index_calls(flags)
        """Per message: a model call of the main conversation, 1, else 0 (a byte a message)."""
        reasoning = [message.reasoning_estimate_tokens for message in session.messages]
        self.reasoning: list[int] | None = reasoning if any(reasoning) else None
        """Per message: its estimated encrypted reasoning
        (:attr:`Message.reasoning_estimate_tokens`); None when no message has any (most
        sessions: a walk then adds nothing up)."""

        self.usage_context: list[int | None] = []
        """Per call: the recorded context (the provider's convention), None without usable usage."""
        self.usage_prompt: list[int | None] = []
        """Per call: the recorded prompt (before the reply)."""
        self.usage_after: list[int | None] = []
        """Per call: the recorded context after the reply."""
        self.fixed_overflow: list[str | None] = []
        """Per call: an overflow whatever the window (stop reason ``length``, overflow error)."""
        self.kinds: list[RecordedKind] = []
        """Per call: on which side of the reply its figures are measured."""
        self.after_reply = bytearray()
        """Per call: its figures are measured after the reply (``kinds``, as flags: 1, else 0)."""
        self.usage_notes: list[str] = []
        self.has_usage = False
        """Any call recorded a usable figure."""
        self._read_usage(is_call)

        self._overflow_reasons: dict[int | None, list[str | None]] = {}
        self._overflow_flags: dict[int | None, list[bool]] = {}
        self._overflow_counts: dict[int | None, int] = {}
        self._links: array[int] | None = None
        self._peak_usage: tuple[int | None] | None = None
        self._missing_usage: int | None = None

    @property
    def session(self) -> Session:
        """The session, held weakly: these calls are kept in its :attr:`Session.derived`, and a
        strong reference back would make a reference cycle of the session (freed by the cyclic
        collector rather than by reference counting once it is no longer used)."""
        session = self._session()
        if session is None:
            raise ReferenceError("the session these calls were placed in is gone")
        return session

    def _index_calls(self, flags: bytes | bytearray) -> bytes | bytearray:
        """The calls, each message's call and each call's turn flag, from the messages' flags
        (:func:`message_flags`) in C: no message is read here. Returns the calls' flags (per
        message: a call, 1, else 0)."""
        is_call = flags.translate(_IS_CALL)
        count = is_call.count(1)
        # (the int column made from a packed buffer: an array's append or item assignment
        # parses each int through PyArg_Parse, ~700 instructions)
        self.calls = calls = array("i", pack(f"{count}i", *compress(range(self.n), is_call)))
        cells = memoryview(self.call_of)  # (its item assignment converts an int directly)
        for c, i in enumerate(calls):
            cells[i] = c
        cells.release()
        # a call follows a turn's start when the last of the calls and turn starts before it is
        # a turn start (the first call: as if one were), found by replacing each turn start
        # followed by a call with one byte
        order = b"\x02" + flags.translate(_CALLS_AND_TURNS, _NEITHER)
        self.first_of_turn = bytearray(
            order.replace(b"\x02\x01", b"\x03").translate(_STARTED, b"\x02")
        )
        return is_call

    @cached_property
    def turn_of(self) -> array[int]:
        """The 0-based turn of each message (-1 before the first user message): the turns
        started up to it, less one (made in C when first read: only the timeline's rows read
        it)."""
        return array("i", map(add, repeat(-1), accumulate(self.turn_start)))

    @cached_property
    def next_call(self) -> array[int]:
        """Per message: the first call at or after it (-1: none), and -1 after the last message
        (made in C when first read: :meth:`next_call_or_none` and :meth:`checkpoint_before`
        look the calls up instead)."""
        next_call = array("i", accumulate(map(ne, self.call_of, repeat(-1)), initial=0))
        last = self.calls[-1] if self.calls else -1
        next_call[last + 1 :] = array("i", [-1]) * (self.n - last)
        return next_call

    def _read_usage(self, is_call: bytes | bytearray) -> None:
        """Each call's recorded figures, side of the reply and fixed overflow (``is_call``: per
        message, a call 1, else 0)."""
        messages = self.session.messages
        called = list(compress(messages, is_call))  # (the calls' messages, in order)
        usages = [message.usage for message in called]
        # each call's figures read in one pass, by the rules of usable_usage and of the usage's
        # properties (usable_columns)
        context, prompt, after, conventions = usable_columns(usages)
        # the calls with a usage that is not usable (an all-zero one)
        zero_calls = conventions.count(None) - usages.count(None)
        # calls stopped for length or with an error (none, nearly always: each call's two
        # fields read as columns and looked for in C, the calls found only where there are some)
        stops = [message.stop_reason for message in called]
        errors = [message.error for message in called]
        fixed = (
            [
                c
                for c, (stop, error) in enumerate(zip(stops, errors, strict=True))
                if stop == "length" or error
            ]
            if "length" in stops or any(errors)
            else []
        )
        self.usage_context, self.usage_prompt, self.usage_after = context, prompt, after
        # what overflow_reason says of a call with neither a stop for length nor an error,
        # whatever its usage: None (the few others asked)
        self.fixed_overflow = [None] * len(conventions)
        for c in fixed:
            self.fixed_overflow[c] = overflow_reason(messages[self.calls[c]], None)
        first_convention = next(filter(None, conventions), None)
        self.has_usage = first_convention is not None
        # the side of each call: once per convention, not once per call
        kind_of: dict[UsageConvention | None, RecordedKind] = {
            None: self._default_kind(first_convention)
        }
        for seen in set(conventions).difference((None,)):
            kind_of[seen] = recorded_side(cast("UsageConvention", seen))
        self.kinds = list(map(kind_of.__getitem__, conventions))
        self.after_reply = bytearray(map(eq, self.kinds, repeat("after-reply")))
        if zero_calls:
            self.usage_notes.append(
                f"{zero_calls} call(s) recorded an all-zero usage (aborted or failed calls); "
                "their context is estimated from the neighbouring calls."
            )

    def _default_kind(self, first_convention: UsageConvention | None) -> RecordedKind:
        """The side of the reply of a call without usage: the session's first convention, else
        the recording agent's habit."""
        if first_convention is not None:
            return recorded_side(first_convention)
        if self.session.format in _AFTER_REPLY_FORMATS:
            return "after-reply"
        return "before-reply"

    def __len__(self) -> int:
        return len(self.calls)

    def _position(self, message_index: int) -> int:
        """``message_index`` as a position of :attr:`next_call` (which has one past the last
        message; a negative one counts from its end), or IndexError as that column would."""
        position = message_index + self.n + 1 if message_index < 0 else message_index
        if not 0 <= position <= self.n:
            raise IndexError("array index out of range")
        return position

    def next_call_or_none(self, message_index: int) -> int | None:
        """The first call at or after ``message_index``, None when no call follows."""
        message_index = self._position(message_index)
        upcoming = bisect_left(self.calls, message_index)
        return upcoming if upcoming < len(self.calls) else None

    def recorded_overflows(self, window: int | None) -> list[str | None]:
        """Why each recorded call overflowed against ``window`` (None: it did not), worked out
        once per window (a list of the calls' length for each window a policy used; the fixed
        overflows' own list, read only, where no call is over the window: the usual case)."""
        reasons = self._overflow_reasons.get(window)
        if reasons is None:
            fixed_overflow = self.fixed_overflow
            if window:
                reasons = [
                    "over-window"
                    if fixed is None and prompt is not None and prompt > window
                    else fixed
                    for fixed, prompt in zip(fixed_overflow, self.usage_prompt, strict=True)
                ]
                if reasons == fixed_overflow:
                    reasons = fixed_overflow
            else:
                reasons = fixed_overflow  # (no window: only the fixed overflows)
            self._overflow_reasons[window] = reasons
        return reasons

    def recorded_overflow_flags(self, window: int | None) -> list[bool]:
        """Per call: it overflowed against ``window`` in the recording (:meth:`recorded_overflows`
        as flags, worked out once per window: every result of a limit change reads them)."""
        flags = self._overflow_flags.get(window)
        if flags is None:
            flags = [reason is not None for reason in self.recorded_overflows(window)]
            self._overflow_flags[window] = flags
        return flags

    def recorded_overflow_count(self, window: int | None) -> int:
        """How many calls overflowed against ``window`` in the recording
        (:meth:`recorded_overflow_flags` counted once per window: every result of a limit
        change reports it)."""
        counted = self._overflow_counts.get(window)
        if counted is None:
            counted = self._overflow_counts[window] = sum(self.recorded_overflow_flags(window))
        return counted

    def missing_usage(self) -> int:
        """How many calls have no usable usage (None in :attr:`usage_context`), counted once
        (every result of a limit change says it)."""
        if self._missing_usage is None:
            self._missing_usage = self.usage_context.count(None)
        return self._missing_usage

    def peak_usage(self) -> int | None:
        """The largest recorded context (:attr:`usage_context`; None: no call recorded one),
        worked out once (every result of a limit change reports it)."""
        if self._peak_usage is None:
            known = [figure for figure in self.usage_context if figure is not None]
            self._peak_usage = (max(known, default=None),)
        return self._peak_usage[0]

    def checkpoint_before(self, message_index: int) -> int:
        """The last call at or before ``message_index`` (its checkpoint precedes the message)."""
        message_index = self._position(message_index)
        nxt = bisect_left(self.calls, message_index)  # (the first call at or after it, or none)
        # Checkpoint nxt is taken before message calls[nxt] >= message_index; the state it holds
        # already includes message_index when calls[nxt] > message_index, so go one call back.
        if nxt < len(self.calls) and self.calls[nxt] == message_index:
            return nxt
        return max(0, nxt - 1) if nxt > 0 else 0

    def linked_back(self) -> Sequence[int]:
        """For each message, the first earlier message that shares a tool call id with it (the
        call a result answers, or an earlier message holding or answering the same id); the
        message's own index when there is none."""
        if self._links is None:
            first: dict[str, int] = {}
            # (4 bytes a message, as the other columns; unsigned: an int is written into it
            # without parsing a format, several times quicker than into a signed array)
            links = array("I", range(self.n))
            first_of = first.setdefault
            # Each id's first message, the calls' ids before the result's (a message holding
            # both sets both to itself when new); a message links to the least of its ids'
            # (no list of ids per message: one step per call and result).
            for i, message in enumerate(self.session.messages):
                least = i
                tool_calls = message.tool_calls
                if tool_calls:
                    for call in tool_calls:
                        seen = first_of(call.id, i)
                        if seen < least:
                            least = seen
                tool_result = message.tool_result
                if tool_result is not None:
                    seen = first_of(tool_result.call_id, i)
                    if seen < least:
                        least = seen
                if least < i:
                    links[i] = least
            self._links = links
        return self._links


_SIGNED_TOP = 2**31
"""The first int a signed 4-byte array does not hold."""
_Ints = TypeVar("_Ints", bound=Sequence[int])


def narrowest(values: _Ints) -> _Ints | array[int]:
    """``values`` in the narrowest int array that holds them all (4 bytes a value, else 8; not
    a list's 8-byte slot and, for values made one a call, a 32-byte int object each), or
    ``values`` themselves when neither does (a count past 2**63).

    Values from 0 to 2**31 - 1 (token counts, indices) are read into an unsigned array, whose
    bytes are then the signed one's: an int is read into an unsigned array without parsing a
    format, several times quicker than into a signed one."""
    try:
        unsigned = array("I", values)
    except OverflowError:
        pass
    else:
        if max(unsigned, default=0) < _SIGNED_TOP:
            return array("i", unsigned.tobytes())
    for typecode in "iq":
        try:
            return array(typecode, values)
        except OverflowError:
            continue
    return values
