"""``ctxscope compactions``' dropped facts: a long fact loses its middle, so files that share a
long start stay told apart, at any terminal width."""

from __future__ import annotations

import pytest
from rich.console import Console

from core.insights.forgotten_facts import FactRecord, Forgotten, KindRecall
from tui.cli.commands.compactions_tables import forgotten_table, middle_ellipsis

STEM = "/Users/someone/projects/a-rather-long-project-name/packages/service/src/handlers/"
FILES = ["create_order.py", "cancel_order.py", "refund_order.py", "list_orders.py"]


def dropped_files() -> Forgotten:
    facts = [
        FactRecord(kind="file_read", text=STEM + name, message_index=10 + n, kept=False)
        for n, name in enumerate(FILES)
    ]
    return Forgotten(
        readable=True,
        summary_source="recorded",
        head_messages=40,
        facts=4,
        kept=0,
        recall=0.0,
        by_kind=[KindRecall(kind="file_read", facts=4, kept=0, recall=0.0)],
        dropped=facts,
    )


@pytest.mark.parametrize("width", [80, 120, 200])
def test_dropped_files_with_one_long_stem_stay_apart(width: int) -> None:
    console = Console(width=width, record=True, color_system=None)
    console.print(forgotten_table(dropped_files(), width=width))
    lines = console.export_text().splitlines()
    for n, name in enumerate(FILES):
        # each file on one line of its own, its name whole
        (line,) = [line for line in lines if f"#{10 + n}:" in line]
        assert name in line, line
        assert len(line.rstrip()) <= width


def test_middle_ellipsis_keeps_both_ends() -> None:
    text = "a" * 50 + "MIDDLE" + "z" * 50
    short = middle_ellipsis(text, 41, head_share=0.25)
    assert len(short) == 41 and short.startswith("a" * 10) and short.endswith("z" * 30)
    assert "…" in short and "MIDDLE" not in short
    assert middle_ellipsis("short", 41) == "short"
