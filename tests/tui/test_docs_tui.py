"""docs/tui.md stays true: what it names exists, and what the code has, it names."""

from __future__ import annotations

import ast
import re

from tests.support.paths import REPO

DOC = (REPO / "docs" / "tui.md").read_text()
TUI_SOURCES = sorted((REPO / "tui").rglob("*.py"))


def _worker_groups() -> set[str]:
    """The ``group=`` of every ``@work(...)`` in tui/."""
    groups = set()
    for path in TUI_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "work":
                for keyword in node.keywords:
                    if keyword.arg == "group" and isinstance(keyword.value, ast.Constant):
                        groups.add(str(keyword.value.value))
    return groups


def _message_classes() -> set[str]:
    """Every Textual message class defined in tui/ (top level or nested in a widget)."""
    names = set()
    for path in TUI_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                getattr(base, "id", None) in ("Message", "TextualMessage") for base in node.bases
            ):
                names.add(node.name)
    return names


def test_every_path_named_exists() -> None:
    paths = set(re.findall(r"`(tui/[\w/.]*)`", DOC))
    assert paths
    assert [p for p in sorted(paths) if not (REPO / p).exists()] == []


def test_every_worker_group_is_in_the_table() -> None:
    table = set(re.findall(r"^\| `([a-z][\w-]*)` \|", DOC, re.MULTILINE))
    assert table == _worker_groups()


def test_every_message_is_named() -> None:
    named = set(re.findall(r"`(?:\w+\.)?(\w+)`", DOC))
    assert sorted(_message_classes() - named) == []
