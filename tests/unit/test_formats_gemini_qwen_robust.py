"""Gemini CLI and Qwen Code logs with values of the wrong type anywhere (a seeded walk that
replaces some values with None, numbers, strings, lists or objects) load or fail with a
:class:`LoadError`, never with another exception."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from core.formats import LoadError, load_session
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures"
LINES = ["gemini/rewind.jsonl", "gemini/checkpoint.jsonl", "qwen/branch-compress.jsonl"]
ODD: list[Any] = [None, 1, -5, "x", "", [], {}, [1], {"a": 1}, 1e300, True]


def _mutate(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {
            k: rng.choice(ODD) if rng.random() < 0.15 else _mutate(v, rng) for k, v in value.items()
        }
    if isinstance(value, list):
        return [rng.choice(ODD) if rng.random() < 0.15 else _mutate(v, rng) for v in value]
    return value


def _loads_or_says_why(path: Path, fmt: str | None) -> None:
    try:
        load_session(path, format=fmt)
    except LoadError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize("name", LINES)
def test_json_lines_with_odd_values(name: str, tmp_path: Path) -> None:
    records = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]
    rng = random.Random(name)
    for n in range(40):
        path = tmp_path / f"{n}.jsonl"
        path.write_text("".join(json.dumps(_mutate(r, rng)) + "\n" for r in records))
        for fmt in (None, "gemini-cli", "qwen-code"):
            _loads_or_says_why(path, fmt)


def test_single_json_with_odd_values(tmp_path: Path) -> None:
    record = json.loads((FIXTURES / "gemini" / "single.json").read_text())
    rng = random.Random(7)
    for n in range(60):
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(_mutate(record, rng), indent=2))
        _loads_or_says_why(path, "gemini-cli")
        _loads_or_says_why(path, None)
