"""The price table: what a model charges per token, from pydantic's ``genai-prices`` data.

``genai-prices`` ships a maintained table of model prices (cache reads and writes, tiers above a
prompt size, prices that changed on a date) inside the package, and reads it offline; it fetches
newer data only when asked to (``UpdatePrices``), which ctxscope never does. :func:`rates` looks a
model up by the provider that served it and the time of the call, and gives the price of each
kind of token at that call (the tier depends on the call's prompt); a model the table does not
know gets a reason, never a price of 0.

Providers are named as the sessions name them; :data:`PROVIDER_IDS` maps them to the table's. A
provider the table does not have (a subscription, a gateway such as opencode's) is priced at the
model's list price where the table knows the model under another provider, and says so.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import warnings
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from itertools import compress, islice, pairwise, repeat
from operator import getitem, le, ne
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from genai_prices.types import ModelPrice, TieredPrices

PROVIDER_IDS: dict[str, str | None] = {
    "anthropic": "anthropic",
    "amazon-bedrock": "aws",
    "bedrock": "aws",
    "vertex": "google",
    "google-vertex": "google",
    "google-vertex-anthropic": "google",
    "google": "google",
    "openai": "openai",
    "openai-codex": "openai",
    "azure": "azure",
    "openrouter": "openrouter",
    "groq": "groq",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "x-ai": "x-ai",
    "xai": "x-ai",
}
"""Session provider → the table's provider id (None, or absent: look the model up by name)."""

SUBSCRIPTIONS = {"openai-codex", "github-copilot", "opencode"}
"""Providers billed by subscription or credits: the figure is the API list price of the same
tokens, what the session would have cost on the model's own API."""

_MTOK = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token of each kind, for one call (the tier of its prompt applied)."""

    input: Decimal
    """Uncached prompt tokens."""
    cache_read: Decimal
    """Prompt tokens read from the cache."""
    cache_write: Decimal
    """Prompt tokens written to the cache."""
    output: Decimal
    """Generated tokens (reasoning included)."""
    model_id: str
    """The table's name of the model."""
    provider_id: str
    """The table's name of the provider it was priced under."""
    note: str | None = None
    """How it was priced when not as recorded (another provider's list price)."""


class UnknownPrice(Exception):
    """The table has no price for this model; ``str(error)`` says which and why."""


def rates(
    model: str | None, provider: str | None, at: datetime | None, prompt_tokens: int
) -> Rates:
    """The rates of ``model`` served by ``provider`` at ``at`` for a prompt of
    ``prompt_tokens`` (tiers). Raises :class:`UnknownPrice`."""
    return rates_on(model, provider, at.date().isoformat() if at else None, prompt_tokens)


def rates_on(model: str | None, provider: str | None, day: str | None, prompt_tokens: int) -> Rates:
    """:func:`rates` on ``day`` (``YYYY-MM-DD``; None: today's prices)."""
    if not model or model.startswith("<"):
        raise UnknownPrice(f"no model recorded ({model or 'none'})")
    entry = _ENTRIES.get((model, provider, day))
    if entry is None:
        entry = _ENTRIES[(model, provider, day)] = _MEMO.entry(model, provider, day)
    if isinstance(entry, str):
        raise UnknownPrice(entry)
    # The same rates for every prompt between two tier starts: made once per stretch.
    key = (model, provider, day, bisect_left(entry.starts, prompt_tokens))
    found = _RATES.get(key)
    if found is None:
        found = _RATES[key] = _rates(entry, prompt_tokens)
    return found


def rate_runs(
    model: str | None, provider: str | None, day: str | None, prompts: Sequence[int]
) -> list[tuple[int, int, Rates]]:
    """:func:`rates_on` of every prompt of a stretch of calls of one model, provider and day,
    as runs: ``(start, end, rates)`` for each stretch of consecutive prompts priced at one rate
    (a tier crossed starts another), in order. The model is looked up once and the prompts'
    tiers compared over the whole stretch at once (none for a model without tiers: one run).
    Raises :class:`UnknownPrice` (the same for every prompt of the stretch)."""
    count = len(prompts)
    if not count:
        return []
    first = rates_on(model, provider, day, prompts[0])
    entry = _ENTRIES[(model or "", provider, day)]
    if isinstance(entry, str) or not entry.starts:
        return [(0, count, first)]
    tiers = array("q", map(bisect_left, repeat(entry.starts), prompts))  # (8 bytes a prompt)
    bounds = [0]
    bounds += compress(range(1, count), map(ne, islice(tiers, 1, None), tiers))
    bounds.append(count)
    return [(lo, hi, rates_on(model, provider, day, prompts[lo])) for lo, hi in pairwise(bounds)]


def stretch_rates(
    model: str | None, provider: str | None, day: str | None, largest: int
) -> Rates | None:
    """The one rate of a stretch of calls of one model, provider and day none of whose prompts
    is above ``largest``, where no tier starts below ``largest`` (a model without tiers, or
    prompts all in the first tier): :func:`rates_on` of each of them, the prompts not read.
    None where a tier starts below it: the stretch may cross one (:func:`rate_runs`). Raises
    :class:`UnknownPrice` as :func:`rate_runs` does."""
    found = rates_on(model, provider, day, largest)
    entry = _ENTRIES[(model or "", provider, day)]
    if isinstance(entry, str) or not entry.starts or largest <= entry.starts[0]:
        return found
    return None


_RATES: dict[tuple[str, str | None, str | None, int], Rates] = {}
_ENTRIES: dict[tuple[str, str | None, str | None], _Entry | str] = {}


def _rates(entry: _Entry, prompt_tokens: int) -> Rates:
    return Rates(
        input=_per_token(entry.input, prompt_tokens),
        cache_read=_per_token(_or_input(entry.cache_read, entry), prompt_tokens),
        cache_write=_per_token(_or_input(entry.cache_write, entry), prompt_tokens),
        output=_per_token(entry.output, prompt_tokens),
        model_id=entry.model_id,
        provider_id=entry.provider_id,
        note=entry.note,
    )


_Price = tuple[Decimal, tuple[tuple[int, Decimal], ...]]
"""A price per million tokens: the base and the tiers, ``(start, price)`` ascending; a tier
applies to every token of a prompt larger than its start (the table's "cliff" tiers)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    """What the table says of one model, provider and day, in a form kept between runs."""

    input: _Price | None
    cache_read: _Price | None
    cache_write: _Price | None
    output: _Price | None
    model_id: str
    provider_id: str
    note: str | None
    starts: tuple[int, ...] = field(init=False)
    """Every tier start of its prices, ascending (where the rates can change)."""

    def __post_init__(self) -> None:
        prices = (self.input, self.cache_read, self.cache_write, self.output)
        starts = {start for price in prices if price is not None for start, _ in price[1]}
        object.__setattr__(self, "starts", tuple(sorted(starts)))


_KINDS = ("input", "cache_read", "cache_write", "output")


def _or_input(price: _Price | None, entry: _Entry) -> _Price | None:
    """A cache price, or the input price where the table gives none (or a flat 0)."""
    if price is None or (not price[0] and not price[1]):
        return entry.input
    return price


def _per_token(price: _Price | None, prompt_tokens: int) -> Decimal:
    if price is None:
        return Decimal(0)
    base, tiers = price
    applies = base
    for start, tier_price in reversed(tiers):
        if prompt_tokens > start:
            applies = tier_price
            break
    return applies / _MTOK


class _Memo:
    """The table's answers kept on disk (``prices.json`` in the cache folder), so that a run
    that prices models seen before does not import the table: importing it takes 0.2 s, most of
    a small session's analysis. The memo is keyed by the installed table (its data file's size
    and time), so a new ``genai-prices`` starts it afresh; a memo that cannot be read or written
    is done without."""

    def __init__(self) -> None:
        self._entries: dict[str, object] | None = None
        self._stamp = ""

    def entry(self, model: str, provider: str | None, day: str | None) -> _Entry | str:
        """The entry of ``model`` (a string: why the table has no price for it). The memo's
        entries are decoded as they are asked for: it holds one per model, provider and day
        priced on this machine, a run prices a few (decoding each one cost ~56 K instructions)."""
        entries = self._load()
        key = "\x1f".join((model, provider or "", day or ""))
        found = _decoded(entries.get(key))
        if found is not None:
            entries[key] = found
        else:
            try:
                price, model_id, provider_id, note = _lookup(model, provider, day)
                found = _Entry(
                    input=_from_table(price.input_mtok),
                    cache_read=_from_table(price.cache_read_mtok),
                    cache_write=_from_table(price.cache_write_mtok),
                    output=_from_table(price.output_mtok),
                    model_id=model_id,
                    provider_id=provider_id,
                    note=note,
                )
            except UnknownPrice as exc:
                found = str(exc)
            entries[key] = found
            self._save(entries)
        return found

    def _load(self) -> dict[str, object]:
        """The memo's entries: each an :class:`_Entry` or a reason once decoded, the file's
        value (:func:`_encode`'s) until then."""
        if self._entries is not None:
            return self._entries
        self._stamp = _table_stamp()
        self._entries = self._on_disk()
        return self._entries

    def _on_disk(self) -> dict[str, object]:
        """The memo's entries as the file holds them now, not decoded ({} when it holds none
        of this table)."""
        if not self._stamp:
            return {}
        try:
            import orjson

            data = orjson.loads(_memo_path().read_bytes())
            if data.get("table") == self._stamp:
                return dict(data["entries"].items())
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
            pass  # no memo yet, or one of another table or shape: start afresh
        return {}

    def _save(self, entries: dict[str, object]) -> None:
        from core.cache_folder import read_only

        if not self._stamp or read_only():
            return
        import tempfile

        import orjson

        # another run may have saved since this one read the memo (two fleet workers pricing at
        # once): its entries are read again and kept, so that the last to save does not drop them
        for key, value in self._on_disk().items():
            entries.setdefault(key, value)
        data = {"table": self._stamp, "entries": {k: _encode(v) for k, v in entries.items()}}
        path = _memo_path()
        try:  # written beside and renamed: two runs at once never read half a memo
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=".prices.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(orjson.dumps(data))
                os.replace(name, path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)
        except OSError:
            pass  # a read-only cache folder: the next run asks the table again


_MEMO = _Memo()


def _memo_path() -> Path:
    from core.cache_folder import cache_dir

    return cache_dir() / "prices.json"


def _table_stamp() -> str:
    """The installed table's data file, by size and modification time ("" if not found)."""
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or not spec.submodule_search_locations:
        return ""
    data = Path(next(iter(spec.submodule_search_locations))) / "data.py"
    try:
        stat = data.stat()
    except OSError:
        return ""
    return f"{data}:{stat.st_size}:{stat.st_mtime_ns}"


def _from_table(price: Decimal | TieredPrices | None) -> _Price | None:
    if price is None:
        return None
    if isinstance(price, Decimal):
        return (price, ())
    return (price.base, tuple((tier.start, tier.price) for tier in price.tiers))


def _encode(entry: object) -> object:
    """An entry as the memo file holds it (one not decoded yet is kept as the file had it)."""
    if not isinstance(entry, _Entry):
        return entry

    def price(value: _Price | None) -> object:
        if value is None:
            return None
        return [str(value[0]), [[start, str(p)] for start, p in value[1]]]

    return {
        **{kind: price(getattr(entry, kind)) for kind in _KINDS},
        "model_id": entry.model_id,
        "provider_id": entry.provider_id,
        "note": entry.note,
    }


def _decoded(value: object) -> _Entry | str | None:
    """A memo entry decoded (None: not in the memo, or not an entry this module wrote: the
    table is asked again, and the memo's entry replaced)."""
    if value is None or isinstance(value, _Entry):
        return value
    try:
        return _decode(value)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


def _decode(value: object) -> _Entry | str:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise TypeError("not an entry")

    def price(raw: object) -> _Price | None:
        if raw is None:
            return None
        if not isinstance(raw, list):
            raise TypeError("not a price")
        base, tiers = raw
        return (Decimal(base), tuple((int(start), Decimal(p)) for start, p in tiers))

    return _Entry(
        input=price(value["input"]),
        cache_read=price(value["cache_read"]),
        cache_write=price(value["cache_write"]),
        output=price(value["output"]),
        model_id=str(value["model_id"]),
        provider_id=str(value["provider_id"]),
        note=None if value["note"] is None else str(value["note"]),
    )


_UTC = ("Z", "+00:00")


def day_of(stamp: str | None) -> str | None:
    """The day of a timestamp (``YYYY-MM-DD``, in its own offset), None without one."""
    if not stamp:
        return None
    if stamp.endswith(_UTC) and len(stamp) >= 10 and stamp[4] == "-":
        return stamp[:10]  # (UTC, as nearly every agent writes it: no parse needed)
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return None


def days_of(stamps: list[str | None]) -> list[str | None]:
    """:func:`day_of` of every timestamp, one string per day (not one per call): each
    timestamp's first ten characters (interned as cut) where every one is a UTC stamp of ten
    or more with its ``-`` in place (as :func:`day_of` takes it without a parse), else
    timestamp by timestamp. Checked in C, and over the distinct days: a stamp ending in ``Z``
    is told by its last character, and each day's cut is checked once; the stamps of one day
    (the least and the greatest of the same day) or in order (as recorded) are cut once a day
    (:func:`_ordered_days`)."""
    if stamps and _all_utc(stamps):
        utc = cast("list[str]", stamps)
        first = min(utc)[:10]
        if first == max(utc)[:10]:  # every stamp between the two starts as they do
            cut = [intern(first)] * len(utc)
        elif all(map(le, utc, islice(utc, 1, None))):
            cut = _ordered_days(utc)
        else:
            cut = list(map(intern, cast("Iterator[str]", map(getitem, utc, repeat(_DAY)))))
        if all(len(day) == 10 and day[4] == "-" for day in set(cut)):
            return cast("list[str | None]", cut)
    seen: dict[str | None, str | None] = {}
    return [seen.setdefault(day, day) for day in map(day_of, stamps)]


_AFTER = "\U0010ffff"
"""Above any character: a day followed by it is above every stamp of that day."""


def _ordered_days(stamps: list[str]) -> list[str]:
    """Each stamp's first ten characters (interned), of ``stamps`` in ascending order: the
    stamps of one day are consecutive, and each day's last one found by bisection."""
    days: list[str] = []
    start, count = 0, len(stamps)
    while start < count:
        day = intern(stamps[start][:10])
        end = bisect_left(stamps, day + _AFTER, start)
        days += repeat(day, end - start)
        start = end
    return days


def _all_utc(stamps: list[str | None]) -> bool:
    """Whether every one of ``stamps`` is a string ending as a UTC stamp (:data:`_UTC`)."""
    try:  # (None: TypeError; "": IndexError)
        ends = set(map(getitem, cast("list[str]", stamps), repeat(-1)))
    except (TypeError, IndexError):
        return False
    if ends <= {"Z"}:
        return True
    return all(map(str.endswith, cast("list[str]", stamps), repeat(_UTC)))


_DAY = slice(0, 10)


@lru_cache(maxsize=512)
def _noon_of(day: str | None) -> datetime | None:
    """Noon UTC of ``day`` (``YYYY-MM-DD``); None for no day or one no calendar has (a
    recorded February 30, ``0000-00-00``): the table's current price then."""
    if not day:
        return None
    try:
        return datetime.fromisoformat(f"{day}T12:00:00+00:00")
    except ValueError:
        return None


def _lookup(
    model: str, provider: str | None, day: str | None
) -> tuple[ModelPrice, str, str, str | None]:
    """The table's price of ``model`` (cached per model, provider and day). The table is
    imported on first use: loading it takes a tenth of a second."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    at = _noon_of(day)
    table_provider = PROVIDER_IDS.get(provider or "")
    attempts: list[str | None] = [table_provider] if table_provider else []
    attempts.append(None)
    last = ""
    for provider_id in attempts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = calc_price(
                    PriceUsage(input_tokens=1, output_tokens=1),
                    model_ref=model,
                    provider_id=provider_id,
                    genai_request_timestamp=at,
                )
        except LookupError as exc:
            last = str(exc)
            continue
        note = None
        if provider and (provider_id is None or provider in SUBSCRIPTIONS):
            if found.provider.id != provider:
                note = (
                    f"priced at {found.provider.id}'s list price ({provider} is not in the table)"
                )
            if provider in SUBSCRIPTIONS:
                note = f"{provider} bills by subscription: the list price of the same tokens"
        return found.model_price, found.model.id, found.provider.id, note
    raise UnknownPrice(f"{model} is not in the price table ({last})")


def list_price(model: str, provider: str | None = None) -> ModelPrice:
    """The table's price entry of a model today (for tests and the README)."""
    return _lookup(model, provider, None)[0]
