"""Forgotten facts: a previous summary's sentences are no instructions, a git
remote is no branch."""

from __future__ import annotations

from core.insights.conversation_facts import extract_facts
from tests.support.builders import SessionBuilder


def _identifiers(command: str) -> set[str]:
    messages = SessionBuilder().user("go").call("Bash", {"command": command}).result("ok")
    return {f.text for f in extract_facts(messages.messages) if f.kind == "identifier"}


def test_a_git_remote_is_no_branch() -> None:
    assert _identifiers("git push -u origin feature/x") == {"feature/x"}
    assert _identifiers("git push --set-upstream origin feature/y") == {"feature/y"}
    assert _identifiers("git push origin\necho done") == set()
    assert _identifiers("git push -u origin") == set()
    assert _identifiers("git checkout -b fix/parser") == {"fix/parser"}


def test_a_previous_summary_gives_no_instructions() -> None:
    builder = SessionBuilder().system(
        "Summary of the work so far. The user asked to never change the public API. "
        "Make sure the tests pass before committing.",
        summary=True,
    )
    builder.user("Don't touch the database schema, please.")
    facts = extract_facts(builder.messages)
    instructions = [f.text for f in facts if f.kind == "instruction"]
    assert instructions == ["Don't touch the database schema, please."]
