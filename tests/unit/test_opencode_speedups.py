"""What the opencode loader's quicker paths give is what the plain rules give.

:func:`core.formats.opencode_messages.iso_ms` writes a whole millisecond from a table of the
minutes it met (emptied now and then) instead of a datetime: the text is the datetime's for
every millisecond it can hold. The call an overflow compaction marks as refused is the last
step of the assistant message before it (not an earlier step, nor a tool result).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

from core.algorithms.overflow import overflow_reason
from core.formats import opencode as oc
from core.formats import opencode_messages as om
from core.formats.opencode_messages import REFUSED_CALL_ERROR, iso_ms
from tests.support.paths import TESTS

FIXTURE = TESTS / "fixtures" / "opencode" / "triggers.json"


def _datetime_text(value: int) -> str:
    moment = datetime.fromtimestamp(value / 1000.0, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_iso_ms_is_the_datetime_text_of_every_millisecond() -> None:
    rng = random.Random(24)
    edges = [1, 999, 1000, 59_999, 60_000, 86_399_999, 86_400_000, om._EXACT_MS - 1]
    values = edges + [rng.randrange(1, om._EXACT_MS) for _ in range(3 * om._MAX_MINUTES)]
    # (more minutes than the table keeps: it is emptied on the way, and read again after)
    assert [iso_ms(v) for v in values] == [_datetime_text(v) for v in values]
    assert [iso_ms(v) for v in values[:50]] == [_datetime_text(v) for v in values[:50]]
    assert len(om._MINUTES) <= om._MAX_MINUTES


def test_iso_ms_of_what_is_not_a_time() -> None:
    assert [iso_ms(v) for v in (0, -5, True, "1786000007000", None)] == [None] * 5
    assert iso_ms(1786000007000.0) == _datetime_text(1786000007000)


def test_the_refused_call_is_the_last_step_of_the_message_before(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    entry = next(m for m in doc["messages"] if m["info"]["id"] == "msg_09")
    del entry["info"]["tokens"]
    tokens = {"input": 900, "output": 40, "reasoning": 0, "cache": {"read": 60000, "write": 0}}
    tool = {"status": "completed", "input": {"filePath": "a"}, "output": "x" * 40}
    entry["parts"] = [
        {"id": "p1", "type": "step-start"},
        {"id": "p2", "type": "tool", "callID": "c9", "tool": "read", "state": tool},
        {"id": "p3", "type": "step-finish", "reason": "tool-calls", "tokens": tokens},
        {"id": "p4", "type": "step-start"},
        {"id": "p5", "type": "tool", "callID": "c10", "tool": "read", "state": tool},
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    session = oc.load(path)
    by_id = {m.id: m for m in session.messages}
    first, last = by_id["msg_09"], by_id["msg_09#step2"]
    assert first.error is None and overflow_reason(first, None) is None
    assert last.error == REFUSED_CALL_ERROR and overflow_reason(last, None) == "error"
    assert by_id["p5"].tool_result is not None and by_id["p5"].error is None
