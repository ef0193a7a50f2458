"""Real-shaped sessions, damaged at random, through load → replay → diagnose → JSON → reload.

Hypothesis takes a session of every format (the samples, the loaders' fixtures, a built one),
damages a few of its records — a value replaced by another type or an absurd figure, a key
removed, a record dropped, repeated, swapped, cut short or replaced by garbage — and runs what
``analyze`` and ``convert`` run. Invariants: the file either loads or is refused with a
:class:`LoadError`; the replay, the diagnosis and the report never raise; the report is valid
JSON; the session written as ctxscope JSONL reads back with the same messages and compactions.

Figures stay far below 2^63 (a sum of a few of them too): above 64 bits, the ctxscope writer
depends on the loaders' clamping at 10^9 (core/model/read_numbers.py); the corpus of
tests/functional/test_hostile_corpus.py holds those cases (2^63, 2^64 - 1, 1e300).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import LoadError, load_session
from core.formats.ctxscope_jsonl import dumps_session, write_session
from core.insights.diagnosis import diagnose
from core.replay import Replayer, native_policy
from core.reports.analyze import analysis_report
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO

ROOT = REPO
FIXTURES = ROOT / "tests" / "fixtures"
BASES = [
    FIXTURES / "claude" / "overflow_recovery.jsonl",
    FIXTURES / "claude" / "compact_after_rewind.jsonl",
    FIXTURES / "claude" / "preserved_segment.jsonl",
    FIXTURES / "codex" / "rollout-2026-04-01T12-00-00-019d0000-aaaa-7bbb-8ccc-000000000001.jsonl",
    FIXTURES / "pi" / "v3-tree.jsonl",
    FIXTURES / "pi" / "triggers-v3.jsonl",
    FIXTURES / "opencode" / "export.json",
    ROOT / "sample_sessions" / "pi" / "branched.jsonl",
    ROOT / "sample_sessions" / "live" / "growing.jsonl",
]
ODD_VALUES: list[Any] = [
    None,
    -1,
    0,
    2**31,
    10**12,
    -(10**12),
    1.5,
    -0.0,
    1e12,
    float("nan"),
    float("inf"),
    "",
    "12",
    "x" * 300,
    "\u0000\ud7ff😀",
    True,
    False,
    {},
    [],
    [1, "a", None],
    {"type": {}, "uuid": []},
]
"""Replacement values: wrong types, negative, non-finite and large figures, empty ones."""
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _built(path: Path) -> Path:
    """A ctxscope JSONL session from the test builder: calls, outputs, a recorded compaction."""
    convo = SessionBuilder().user("fix the parser")
    for n in range(6):
        convo.call("read", {"path": f"core/m{n}.py"}, context=20_000 * (n + 1)).result(tokens=3_000)
        convo.reply(f"step {n}", context=20_000 * (n + 1) + 3_500).user(f"next {n}")
    convo.compaction(tokens_before=130_000).reply("after", context=30_000)
    write_session(convo.session(window=128_000), path)
    return path


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: the keys and indices leading to each member."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, member in value.items():
            found.append((*prefix, key))
            found.extend(_paths(member, (*prefix, key)))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found.append((*prefix, index))
            found.extend(_paths(member, (*prefix, index)))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> None:
    for step in path[:-1]:
        value = value[step]
    if delete:
        del value[path[-1]]
    else:
        value[path[-1]] = new


@st.composite
def damaged(draw: st.DrawFn, bases: list[Path]) -> tuple[Path, bytes]:
    """A base session and its bytes after one to four kinds of damage."""
    base = draw(st.sampled_from(bases))
    raw = base.read_bytes()
    whole = base.suffix == ".json"
    preamble = b""
    if whole:  # opencode's export may print a line before its JSON document
        preamble, raw = raw[: raw.index(b"{")], raw[raw.index(b"{") :]
    records: list[Any] = (
        [json.loads(raw)] if whole else [json.loads(x) for x in raw.splitlines() if x.strip()]
    )
    texts: list[str | None] = [None] * len(records)  # a record replaced by raw text
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                ["value", "value", "delete", "drop", "repeat", "swap", "cut", "garbage"]
            )
        )
        at = draw(st.integers(0, len(records) - 1))
        if kind in ("value", "delete"):
            places = _paths(records[at])
            if places:
                place = draw(st.sampled_from(places))
                value = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))  # never shared
                _set(records[at], place, value, kind == "delete")
        elif kind == "drop" and len(records) > 1 and not whole:
            del records[at], texts[at]
        elif kind == "repeat" and not whole:
            records.insert(at, json.loads(json.dumps(records[at])))
            texts.insert(at, texts[at])
        elif kind == "swap" and not whole:
            other = draw(st.integers(0, len(records) - 1))
            records[at], records[other] = records[other], records[at]
            texts[at], texts[other] = texts[other], texts[at]
        elif kind == "cut" and not whole:
            line = json.dumps(records[at])
            texts[at] = line[: draw(st.integers(0, max(0, len(line) - 1)))]
        elif kind == "garbage" and not whole:
            texts[at] = draw(
                st.sampled_from(["\x00\x01", "{", "[]", "null", "42", "{} {}", "\ufeff{}"])
            )
    lines = [
        text if text is not None else json.dumps(record)
        for record, text in zip(records, texts, strict=True)
    ]
    return base, preamble + ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return [*BASES, _built(tmp_path_factory.mktemp("built") / "built.jsonl")]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutants")


def test_damaged_sessions_load_replay_diagnose_report_and_reload(
    bases: list[Path], scratch: Path
) -> None:
    @SETTINGS
    @given(case=damaged(bases))
    def check(case: tuple[Path, bytes]) -> None:
        base, data = case
        path = scratch / f"mutant{base.suffix}"
        path.write_bytes(data)
        try:
            session = load_session(path)
        except LoadError:
            return  # refused in one sentence: fine
        replayer = Replayer(session)
        result = replayer.run(native_policy(session))
        diagnosis = diagnose(session, result)
        report = analysis_report(session, result, diagnosis, replayer.inferred_threshold())
        orjson.loads(report.model_dump_json())
        written = scratch / "mutant.ctxscope.jsonl"
        written.write_bytes(dumps_session(session))
        again = load_session(written)
        assert again.messages == session.messages
        assert again.compactions == session.compactions

    check()
