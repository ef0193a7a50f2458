"""The README's table of agent rules is the one core/agents/constants.py holds."""

from __future__ import annotations

from core.agents.constants import CONSTANTS
from tools.agents_readme import BEGIN, END, README, table, updated


def test_the_readme_table_is_up_to_date() -> None:
    document = README.read_text(encoding="utf-8")
    assert updated(document) == document, "run python -m tools.agents_readme"


def test_every_fact_is_a_row_with_its_source() -> None:
    rows = table().splitlines()[2:]
    assert len(rows) == len(CONSTANTS)
    for row, constant in zip(rows, CONSTANTS, strict=True):
        assert constant.agent in row and constant.source in row
    document = README.read_text(encoding="utf-8")
    assert document.index(BEGIN) < document.index(END)
