"""Deep, huge and wrongly typed values in every field a loader reads: a session
whose records hold them loads (or is refused with a :class:`LoadError`), replays and converts,
never raising anything else.

Each example takes the first records of a sample session of one format, puts one hostile value
at one key path of one record, and writes the records back as JSON Lines (with
:func:`core.model.deep_json.dumps`, which writes any depth). The opencode export (one JSON document)
gets the same treatment.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import LoadError, load_session
from core.formats.ctxscope_jsonl import write_session
from core.model.deep_json import dumps
from core.replay import Replayer, native_policy
from tests.support.paths import REPO

SAMPLES = REPO / "sample_sessions"
LINE_SAMPLES = {
    "claude-code": SAMPLES / "claude-code" / "compacted.jsonl",
    "codex": next(iter(sorted((SAMPLES / "codex").glob("*.jsonl")))),
    "pi": SAMPLES / "pi" / "session.jsonl",
    "ctxscope": SAMPLES / "ctxscope" / "long.jsonl",
}
RECORDS = 40
"""Records of each sample kept (enough for calls, results and a compaction)."""


def _nested(depth: int, leaf: Any, as_list: bool) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"k": value}
    return value


HOSTILE = st.one_of(
    st.builds(_nested, st.integers(50, 3_000), st.sampled_from([1, "x", None]), st.booleans()),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**400, -1, 0]),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e308, -0.0, 1e-320]),
    st.text(max_size=20),
    st.sampled_from(["", "2026-02-30T10:00:00Z", "0000-00-00", "9" * 5_000, "\x00\x1b[2J"]),
    st.builds(lambda n: "w " * n, st.integers(10_000, 200_000)),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every key path into ``value`` (dict keys and list positions), up to 6 levels."""
    found: list[tuple[Any, ...]] = []
    if depth > 6:
        return found
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value[:4]))
    for key, member in items:
        found.append((*prefix, key))
        found.extend(_paths(member, (*prefix, key), depth + 1))
    return found


FAVOURED = {"input", "arguments", "file_path", "timestamp", "usage", "content", "text", "tokens"}
"""Fields the loaders read closely: drawn as often as all the others together."""


def _field(data: st.DataObject, paths: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    favoured = [p for p in paths if p[-1] in FAVOURED]
    choices = st.sampled_from(paths)
    if favoured:
        choices = st.one_of(st.sampled_from(favoured), choices)
    return data.draw(choices, label="field")


def _put(record: Any, path: tuple[Any, ...], value: Any) -> None:
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _records(sample: Path) -> list[dict[str, Any]]:
    lines = sample.read_bytes().splitlines()
    return [orjson.loads(line) for line in lines if line.strip()][:RECORDS]


def _exercise(path: Path) -> None:
    """Load, replay and convert; a LoadError is a fine answer, anything else a failure."""
    try:
        session = load_session(path)
    except LoadError:
        return
    Replayer(session).run(native_policy(session))
    write_session(session, io.BytesIO())


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("agent", list(LINE_SAMPLES))
@FUZZ
@given(data=st.data(), value=HOSTILE)
def test_a_hostile_value_in_any_field_of_a_jsonl_session(
    agent: str, data: st.DataObject, value: Any
) -> None:
    records = _records(LINE_SAMPLES[agent])
    index = data.draw(st.integers(0, len(records) - 1), label="record")
    paths = _paths(records[index])
    if paths:
        _put(records[index], _field(data, paths), value)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        path.write_text(
            "\n".join(dumps(r) for r in records) + "\n", encoding="utf-8", errors="surrogatepass"
        )
        _exercise(path)


@FUZZ
@given(data=st.data(), value=HOSTILE)
def test_a_hostile_value_in_any_field_of_an_opencode_export(
    data: st.DataObject, value: Any
) -> None:
    doc = json.loads((SAMPLES / "opencode" / "export.json").read_text())
    paths = _paths(doc)
    _put(doc, _field(data, paths), value)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.json"
        path.write_text(dumps(doc), encoding="utf-8", errors="surrogatepass")
        _exercise(path)
