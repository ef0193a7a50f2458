"""What a compaction forgot (core.insights.conversation_facts, core.insights.forgotten_facts): each kind of fact found, kept and
dropped on built sessions; a summary that is the whole head verbatim keeps every fact (a
property); the LLM judge; and every readable recorded summary of ../shared/samples."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import load_session
from core.insights.conversation_facts import FACT_KINDS, _exit_code, extract_facts
from core.insights.forgotten_facts import (
    ENCRYPTED,
    forgotten_of,
    judge,
    recorded_forgotten,
)
from core.insights.side_by_side import compare_summaries
from core.llm.protocol import ChatMessage, LLMUsage, SummaryResult
from core.model.session import Message, SourceFormat, ToolResult
from core.model.tokens import message_text
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO

SAMPLES = REPO.parent / "shared" / "samples"
WITH_COMPACTIONS = (
    sorted(
        p
        for p in SAMPLES.rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json") and "storage" not in p.parts
    )
    if SAMPLES.is_dir()
    else []
)


def head() -> list[Message]:
    """A head with one fact of every kind (and a failing command)."""
    return (
        SessionBuilder()
        .user(
            "Fix the flaky parser test. Don't touch the public API of parse_config. "
            "See https://example.com/issues/42 for the report."
        )
        .call("Read", {"file_path": "/repo/src/config/parser.py"})
        .result("def parse_config(text): ...")
        .call("Edit", {"file_path": "/repo/src/config/loader.py", "old": "a", "new": "b"})
        .result("ok")
        .call("Bash", {"command": "pytest tests/test_parser.py -q"})
        .result(
            "FAILED tests/test_parser.py::test_roundtrip\n"
            "E   AssertionError: expected utf-8 decoding of the header\n"
            "Exit code: 1",
            is_error=True,
        )
        .call("Bash", {"command": "git checkout -b fix/parser-roundtrip"})
        .result("Switched to a new branch 'fix/parser-roundtrip'")
        .call(
            "TodoWrite",
            {
                "todos": [
                    {"content": "Fix the header decoding in loader", "status": "in_progress"},
                    {"content": "Run the parser test suite", "status": "completed"},
                ]
            },
        )
        .result("ok")
        .reply(
            "The root cause is the header decoding in load_header(), which assumes latin-1. "
            "I decided to decode with utf-8 instead of guessing the encoding."
        )
        .messages
    )


def kinds_of(facts: Sequence[object]) -> set[str]:
    return {getattr(f, "kind") for f in facts}  # noqa: B009 - facts and records alike


def test_every_kind_of_fact_is_found_with_its_message() -> None:
    facts = extract_facts(head())
    assert kinds_of(facts) == set(FACT_KINDS)
    by_text = {(f.kind, f.text): f for f in facts}
    assert ("file_read", "/repo/src/config/parser.py") in by_text
    assert ("file_written", "/repo/src/config/loader.py") in by_text
    assert by_text["command", "pytest tests/test_parser.py -q"].message_index == 5
    failed = next(f for f in facts if f.kind == "failed_command")
    assert failed.text == "pytest tests/test_parser.py -q"
    assert failed.message_index == 6  # the output that says it failed
    assert failed.detail == "FAILED tests/test_parser.py::test_roundtrip"
    assert any(f.kind == "instruction" and "Don't touch" in f.text for f in facts)
    identifiers = {(f.detail, f.text) for f in facts if f.kind == "identifier"}
    assert ("url", "https://example.com/issues/42") in identifiers
    assert ("branch", "fix/parser-roundtrip") in identifiers
    assert ("function", "load_header") in identifiers
    assert ("test", "tests/test_parser.py::test_roundtrip") in identifiers
    assert [f.text for f in facts if f.kind == "open_task"] == ["Fix the header decoding in loader"]
    assert any(f.kind == "decision" and "root cause" in f.text for f in facts)


def test_a_summary_that_keeps_each_kind_and_one_that_drops_them() -> None:
    keeping = (
        "The user asked to fix the flaky parser test and not to touch the public API of "
        "parse_config (report: https://example.com/issues/42). Read src/config/parser.py, "
        "edited config/loader.py. Ran pytest tests/test_parser.py: it failed with "
        "FAILED tests/test_parser.py::test_roundtrip. Created branch fix/parser-roundtrip. "
        "The root cause is the header decoding in load_header(), which assumes latin-1; "
        "decided to decode with utf-8 instead of guessing the encoding. "
        "Open: fix the header decoding in loader."
    )
    report, records = forgotten_of(head(), keeping)
    kept_kinds = {r.kind for r in records if r.kept}
    assert kept_kinds == set(FACT_KINDS)
    report, records = forgotten_of(head(), "Worked on the parser.")
    assert report.kept == 0 and report.recall == 0.0
    assert {d.kind for d in report.dropped} == set(FACT_KINDS)
    assert all(d.message_index >= 0 for d in report.dropped)
    assert {k.kind: k.recall for k in report.by_kind}["file_read"] == 0.0


def test_a_path_is_kept_by_its_last_components_or_its_file_name() -> None:
    messages = SessionBuilder().call("Read", {"file_path": "/a/b/src/deep/module.py"}).messages
    for summary, kept in [
        ("read deep/module.py", True),
        ("read module.py", True),
        ("read the module", False),
    ]:
        report, _ = forgotten_of(messages, summary)
        assert (report.kept == 1) is kept, summary


def test_the_keys_of_a_path_read_again_are_shared() -> None:
    """A path read and edited again and again (the files of a session) has its keys worked out
    once: the facts of every message naming it share them."""
    path = "/repo/src/config/parser.py"
    first = SessionBuilder().call("Read", {"file_path": path}).messages
    again = SessionBuilder().call("Edit", {"file_path": path, "old": "a", "new": "b"}).messages
    (read,) = extract_facts(first)
    (written,) = extract_facts(again)
    assert (read.kind, written.kind) == ("file_read", "file_written")
    assert read.keys == ("config parser py", "parser py")
    assert written.keys is read.keys


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9)


@st.composite
def heads(draw: st.DrawFn) -> list[Message]:
    builder = SessionBuilder()
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["user", "read", "edit", "bash", "fail", "reply", "todo"]))
        a, b, c = draw(_WORD), draw(_WORD), draw(_WORD)
        if kind == "user":
            builder.user(f"Please never {a} the {b} module. Also see https://{c}.org/{a}.")
        elif kind == "read":
            builder.call("Read", {"file_path": f"/{a}/{b}/{c}.py"}).result("x")
        elif kind == "edit":
            builder.call("Edit", {"file_path": f"{b}/{c}.ts"}).result("ok")
        elif kind == "bash":
            builder.call("Bash", {"command": f"{a} {b} --{c}"}).result("ok")
        elif kind == "fail":
            builder.call("Bash", {"command": f"make {a}"}).result(
                f"error: {b} {c} not found\nexit code: 2", is_error=True
            )
        elif kind == "reply":
            builder.reply(f"The root cause is {a}_{b}() in {c}; decided to rewrite {a}_{b}.")
        else:
            builder.call("TodoWrite", {"todos": [{"content": f"{a} {b} {c}"}]}).result("ok")
    return builder.messages


@settings(max_examples=60, deadline=None)
@given(heads())
def test_a_summary_that_is_the_whole_head_verbatim_keeps_every_fact(
    messages: list[Message],
) -> None:
    verbatim = "\n\n".join(message_text(m) for m in messages)
    report, records = forgotten_of(messages, verbatim)
    assert report.dropped == []
    assert report.kept == report.facts == len(records)


class _Judge:
    name = "judge"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def summarize(
        self,
        messages: Sequence[ChatMessage],
        prompt: str,
        max_tokens: int,
        *,
        on_delta: object = None,
    ) -> SummaryResult:
        self.asked.append(messages[0].content)
        return SummaryResult(text=self.answer, usage=LLMUsage(), model="judge")


def test_the_llm_judge_marks_the_facts_it_finds_kept_in_other_words() -> None:
    report, records = forgotten_of(head(), "Worked on the parser.")
    judged = asyncio.run(
        judge(report, records, "Worked on the parser.", _Judge('{"kept": [1, 2]}'))
    )
    assert judged.judged
    assert judged.kept == 2
    assert [r.kept_by for r in records if r.kept] == ["judge", "judge"]
    report, records = forgotten_of(head(), "Worked on the parser.")
    unchanged = asyncio.run(judge(report, records, "x", _Judge("no idea")))
    assert unchanged.kept == 0


def test_recorded_and_replayed_summaries_side_by_side() -> None:
    recorded, replayed, rows = compare_summaries(
        head(), "Read /repo/src/config/parser.py.", "Edited src/config/loader.py."
    )
    assert recorded.summary_source == "recorded" and replayed.summary_source == "replayed"
    only = {(r.fact.text, r.kept_by_recorded, r.kept_by_replayed) for r in rows}
    assert ("/repo/src/config/parser.py", True, False) in only
    assert ("/repo/src/config/loader.py", False, True) in only


def test_a_built_recorded_compaction_is_checked_against_its_summary() -> None:
    session = (
        SessionBuilder()
        .user("Never push to main.")
        .call("Read", {"file_path": "/r/app/main.py"}, context=1_000)
        .result("print()")
        .reply("done", context=2_000)
        .compaction("## Summary\n- read app/main.py", tokens_before=2_000)
        .user("next")
        .reply("ok", context=1_500)
        .session()
    )
    ((report, records),) = recorded_forgotten(session).values()
    assert report.readable and report.head_messages == 4
    kept = {r.text: r.kept for r in records}
    assert kept == {"/r/app/main.py": True, "Never push to main.": False}


@pytest.mark.skipif(not WITH_COMPACTIONS, reason="shared samples are not available")
@pytest.mark.parametrize("path", WITH_COMPACTIONS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_readable_recorded_summary_lists_its_facts(path: Path) -> None:
    session = load_session(path)
    for index, (report, records) in recorded_forgotten(session).items():
        if session.format is SourceFormat.CODEX:
            assert not report.readable and report.reason == ENCRYPTED  # remote compactions
            continue
        assert report.readable, index
        if report.head_messages >= 20:
            assert report.facts > 0 and report.recall is not None
        assert report.facts == len(records)
        for record in records:
            assert 0 <= record.message_index < len(session.messages)
        assert {d.message_index for d in report.dropped} <= {r.message_index for r in records}


@pytest.mark.parametrize(
    ("output", "failed"),
    [
        ("Process exited with code 1", True),
        ("Process exited with code 0", False),
        ("EXIT STATUS 3\n" + "x" * 1990, True),  # short: its start is its end
        ("x" * 5000 + "\nexit code: 2", True),  # long: the code in its last 2,000 characters
        ("exit code: 7\n" + "x" * 5000, True),  # long: in its first 2,000
        ("x" * 2500 + "\nexit code: 9\n" + "x" * 2500, False),  # in neither end: not read
        ("", False),
    ],
)
def test_a_tool_output_fails_by_the_exit_code_either_end_states(output: str, failed: bool) -> None:
    messages = SessionBuilder().call("Bash", {"command": "make all"}).result(output).messages
    kinds = [fact.kind for fact in extract_facts(messages)]
    assert ("failed_command" in kinds) is failed


def test_an_output_whose_ends_state_no_exit_code_is_not_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long output held as UTF-8 (a Read output's arrows) with no ``exit`` in either end: no
    failure, found without decoding the output or its ends (most outputs of a session)."""
    text = "   1→ok\n" * 2000 + "exit code: 9\n" + "   2→ok\n" * 2000
    messages = SessionBuilder().call("Bash", {"command": "make all"}).result(text).messages
    read: list[str] = []
    ends = ToolResult.output_ends

    def output(result: ToolResult) -> str:
        read.append("output")
        return "(not read)"

    def output_ends(result: ToolResult, count: int) -> tuple[str, str | None]:
        read.append("ends")
        return ends(result, count)

    monkeypatch.setattr(ToolResult, "output", property(output))
    monkeypatch.setattr(ToolResult, "output_ends", output_ends)
    assert [fact.kind for fact in extract_facts(messages)] == ["command"]
    assert read == []


_OUTPUT_PIECES = st.sampled_from(
    [
        "x" * 700,
        "→" * 700,
        "ok\n",
        "exit",
        "EXIT",
        "Exİt",
        "exıt",
        "K",
        " code ",
        "exited with code",
        ": 1",
        " 0",
        "7",
        "é",
        "🚀",
        "🚀" * 600,
        "é" * 1100,
        "process ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_OUTPUT_PIECES, max_size=14).map("".join))
def test_an_output_fails_as_its_ends_exit_codes_say(output: str) -> None:
    """Whatever the ends hold (every case of ``exit``, characters outside ASCII that fold to
    its letters, long outputs held as UTF-8): a failure exactly when either end's first exit
    code is not 0."""
    messages = SessionBuilder().call("Bash", {"command": "make all"}).result(output).messages
    head, tail = ToolResult(call_id="c", output=output).output_ends(2000)
    code = _exit_code(head) or (_exit_code(tail) if tail is not None else None)
    failed = code is not None and code.group(1) != "0"
    kinds = [fact.kind for fact in extract_facts(messages)]
    assert ("failed_command" in kinds) is failed


@pytest.mark.parametrize(
    "summary",
    [
        "",
        "Fixed parser.py and loader.py; pytest tests/test_parser.py still fails.",
        " ".join(message_text(m) for m in head()),
    ],
)
def test_a_report_without_records_is_the_report_with_them(summary: str) -> None:
    full, records = forgotten_of(head(), summary, source="replayed")
    lean, none = forgotten_of(head(), summary, source="replayed", records=False)
    assert records and none == []
    assert lean == full
    assert lean.by_kind and (summary == "" or lean.kept > 0)
