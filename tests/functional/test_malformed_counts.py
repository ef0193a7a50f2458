"""Damaged numbers, ids and links in every loader: a diagnostic with the line, never a traceback.

The files of ``tests/fixtures/malformed/`` each hold one kind of damage (negative, 1e20, NaN and
infinite, string and boolean counts; token counts of 2^63 and 2^64 - 1; a window of -5 or 0; a
``type`` or an id of the wrong type; a ``parentUuid`` cycle). Every loader checks its figures at
the edge (``SessionBuilder.count`` / ``counts``, ``bad-count``), so nothing downstream — the
replay, the JSON, ``convert``, the TUI's gauge (``array("q")``) — ever sees a figure above
10^9, and the converted file reads back as the same session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats import load_session
from core.formats.ctxscope_jsonl import dumps_session
from core.model.read_numbers import MAX_COUNT
from core.model.session import Session
from core.replay import native_policy, replay
from tests.support.paths import REPO, TESTS
from tui.cli.main import cli

MALFORMED = TESTS / "fixtures" / "malformed"
FILES = sorted(MALFORMED.iterdir())


def _diagnostics(session: Session, code: str) -> list[tuple[int | None, str]]:
    return [(d.line, d.message) for d in session.diagnostics if d.code == code]


def _figures(session: Session) -> list[int]:
    """Every count the session holds after loading."""
    found: list[int] = []
    if session.max_output_tokens is not None:
        found.append(session.max_output_tokens)
    for message in session.messages:
        usage = message.usage
        if usage is not None:
            found += [usage.input, usage.output, usage.cache_read, usage.cache_write]
            found += [usage.reasoning, usage.total or 0]
        found.append(message.agent_estimate_tokens or 0)
    for event in session.compactions:
        found += [event.tokens_before or 0, event.tokens_after or 0]
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_figure_is_within_what_a_session_holds(path: Path) -> None:
    session = load_session(path)
    figures = _figures(session)
    assert figures and all(0 <= value <= MAX_COUNT for value in figures)
    # Derived figures (a call's context is a sum of four counts; a window inferred from it)
    # stay far below 2^63.
    derived = [m.usage.context_tokens for m in session.messages if m.usage is not None]
    assert all(value <= 4 * MAX_COUNT for value in [*derived, session.context_window or 0])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_load_replay_json_convert_reload(path: Path, tmp_path: Path) -> None:
    """The whole way through: no traceback, and the converted file is the same session."""
    session = load_session(path)
    result = replay(session, native_policy(session))
    json.loads(result.model_dump_json())
    runner = CliRunner()
    analyzed = runner.invoke(cli, ["analyze", "--json", str(path)])
    assert analyzed.exit_code == 0, analyzed.output
    report = json.loads(analyzed.stdout)
    assert report["summary"]["peak_recorded"] <= 4 * MAX_COUNT
    converted = tmp_path / "converted.jsonl"
    done = runner.invoke(cli, ["convert", str(path), "-o", str(converted)])
    assert done.exit_code == 0, done.output
    again = load_session(converted)
    assert again.messages == session.messages
    assert again.compactions == session.compactions
    assert dumps_session(again).splitlines()[1:] == dumps_session(session).splitlines()[1:]


def test_claude_counts_name_the_line_and_the_field() -> None:
    session = load_session(MALFORMED / "claude-bad-counts.jsonl")
    bad = _diagnostics(session, "bad-count")
    assert (2, "usage.input_tokens: negative count -5 taken as 0") in bad
    assert any(line == 2 and "9223372036854775808 is above 1,000,000,000" in m for line, m in bad)
    assert any(line == 4 and "'12000' is not a number" in m for line, m in bad)
    assert any(line == 4 and "True is not a number" in m for line, m in bad)
    assert any(line == 6 and "nan is not finite" in m for line, m in bad)
    assert any(
        line == 6 and "compactMetadata.preTokens: negative count -1 dropped" in m for line, m in bad
    )
    assert ("invalid-json", 5) in [(d.code, d.line) for d in session.diagnostics]
    first = session.messages[1].usage
    assert first is not None
    assert (first.input, first.output, first.cache_read) == (0, MAX_COUNT, MAX_COUNT)
    assert session.compactions[0].tokens_before is None
    assert session.compactions[0].tokens_after == MAX_COUNT


def test_codex_counts_and_windows() -> None:
    session = load_session(MALFORMED / "codex-bad-counts.jsonl")
    bad = _diagnostics(session, "bad-count")
    assert (2, "model_context_window -5 is not a window; ignored") in bad
    assert (6, "model_context_window 0 is not a window; ignored") in bad
    assert any(line == 6 and "last_token_usage.cached_input_tokens" in m for line, m in bad)
    assert any(line == 9 and "False is not a number" in m for line, m in bad)
    assert session.context_window == 272_000
    assert [m.usage.total for m in session.messages if m.usage] == [MAX_COUNT, 15_200]


def test_pi_opencode_ctxscope_counts() -> None:
    pi = load_session(MALFORMED / "pi-bad-counts.jsonl")
    assert any(
        line == 4 and m.startswith("tokensBefore") for line, m in _diagnostics(pi, "bad-count")
    )
    assert (5, "id 7 is not a string; ignored") in _diagnostics(pi, "bad-id")
    opencode = load_session(MALFORMED / "opencode-bad-counts.json")
    assert any("tokens.cache.write" in m for _, m in _diagnostics(opencode, "bad-count"))
    ours = load_session(MALFORMED / "ctxscope-bad-counts.jsonl")
    assert (1, "context_window: negative count -5 dropped") in _diagnostics(ours, "bad-count")
    assert ours.window_source != "recorded" or ours.context_window != -5


def test_a_type_or_an_id_of_the_wrong_type() -> None:
    session = load_session(MALFORMED / "claude-wrong-types.jsonl")
    codes = [(d.code, d.line) for d in session.diagnostics]
    assert ("unknown-record", 2) in codes  # {"type": {}} after a valid line
    assert ("unknown-record", 3) in codes
    assert ("bad-id", 4) in codes and ("bad-id", 5) in codes
    assert session.messages[0].text == "hello"


def test_a_parent_cycle_is_broken_with_a_diagnostic() -> None:
    session = load_session(MALFORMED / "claude-parent-cycle.jsonl")
    assert [(d.code, d.line) for d in session.diagnostics] == [("parent-cycle", 1)]
    assert next(m.text or m.role.value for m in session.messages) == "where does this start?"
    assert len(session.messages) == 3


FORKED_RUNS = r"""
import os, sys, traceback
from tui.cli.main import main  # imported once; each file is analysed in a fork of this process

folder = sys.argv[1]
for number, path in enumerate(sys.argv[2:]):
    pid = os.fork()
    if pid == 0:  # the child: a process of its own, with its own stdout, stderr and exit status
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(f"{folder}/{number}.{name}", os.O_WRONLY | os.O_CREAT, 0o600), fd)
        sys.argv = ["ctxscope", "analyze", "--json", path]
        code = 0
        try:
            main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else int(done.code is not None)
        except BaseException:
            traceback.print_exc()  # as the interpreter would
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
"""


def test_the_command_line_never_shows_a_traceback(tmp_path: Path) -> None:
    """In a real process per file, as a user runs it: exit 0, JSON on stdout, nothing on stderr.
    (The processes are forks of one that imported the command line once: 7 interpreter starts
    cost more than the analyses.)"""
    done = subprocess.run(
        [sys.executable, "-c", FORKED_RUNS, str(tmp_path), *map(str, FILES)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    statuses = done.stdout.split()
    assert len(statuses) == len(FILES)
    for number, (path, status) in enumerate(zip(FILES, statuses, strict=True)):
        stderr = (tmp_path / f"{number}.err").read_text()
        assert status == "0", (path.name, stderr)
        assert "Traceback" not in stderr
        json.loads((tmp_path / f"{number}.out").read_text())
