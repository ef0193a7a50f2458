"""The README's table of agent rules is the one core/agents/table.py holds."""

from __future__ import annotations

from core.agents.readme import BEGIN, END, README, table, updated
from core.agents.table import FACTS


def test_the_readme_table_is_up_to_date() -> None:
    document = README.read_text(encoding="utf-8")
    assert updated(document) == document, "run python -m core.agents.readme"


def test_every_fact_is_a_row_with_its_source() -> None:
    rows = table().splitlines()[2:]
    assert len(rows) == len(FACTS)
    for row, fact in zip(rows, FACTS, strict=True):
        assert fact.agent in row and fact.source in row
    document = README.read_text(encoding="utf-8")
    assert document.index(BEGIN) < document.index(END)
