"""Codex's estimate of a tool output: the bytes as written when the output is kept whole, the
capped output re-serialised when it is not (the shortcut for whole text outputs must not skip
the cap)."""

from __future__ import annotations

import orjson

from core.formats.codex_sizes import OutputCap, approx_tokens, item_tokens


def _item(output: str) -> dict[str, object]:
    return {"type": "function_call_output", "call_id": "c1", "output": output}


def test_whole_text_output_counts_its_written_bytes() -> None:
    cap = OutputCap.from_policy({"mode": "bytes", "limit": 1000})
    item = _item("short output")
    written = len(orjson.dumps(item))
    assert item_tokens(item, cap, written) == approx_tokens(written)
    assert item_tokens(item, cap, written) == item_tokens(item, cap)


def test_over_the_cap_output_ignores_the_written_bytes() -> None:
    cap = OutputCap.from_policy({"mode": "bytes", "limit": 100})
    item = _item("x" * 10_000)
    written = len(orjson.dumps(item))
    estimate = item_tokens(item, cap, written)
    assert estimate < approx_tokens(written) // 10
    assert estimate == item_tokens(item, cap)


def test_byte_budget_follows_the_policy_mode() -> None:
    assert OutputCap.from_policy({"mode": "bytes", "limit": 100}).max_bytes == 120
    assert OutputCap.from_policy({"mode": "tokens", "limit": 100}).max_bytes == 480
