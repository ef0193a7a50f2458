"""A context window of 0 or less is refused wherever it comes from, in one clear line: ``--window``,
a policy file, the TUI's command line, the API, or a session's own header (set aside there, with
a warning, so the session still loads)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from core.agents.window_evidence import resolve_window
from core.formats import load_session
from tests.support.paths import REPO
from tui.cli.main import cli

SAMPLE = REPO / "sample_sessions" / "ctxscope" / "long.jsonl"


def _with_header_window(tmp_path: Path, window: int) -> Path:
    lines = SAMPLE.read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header.update(context_window=window, window_source="recorded")
    path = tmp_path / f"window{window}.jsonl"
    path.write_bytes(b"\n".join([orjson.dumps(header), *lines[1:]]) + b"\n")
    return path


@pytest.mark.parametrize("window", [0, -5])
def test_a_recorded_window_below_one_is_set_aside_with_a_warning(
    tmp_path: Path, window: int
) -> None:
    session = load_session(_with_header_window(tmp_path, window))
    assert session.context_window == 200_000 and session.window_source == "table"
    warnings = [d.message for d in session.diagnostics if str(d.severity) == "warning"]
    if window < 0:  # no count is negative: the loader drops it, naming the field
        assert f"context_window: negative count {window} dropped" in warnings
    else:
        assert any(f"context window of {window:,} tokens" in text for text in warnings)


@pytest.mark.parametrize("window", [0, -5])
def test_analyze_never_reports_against_a_window_below_one(tmp_path: Path, window: int) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(_with_header_window(tmp_path, window))])
    assert result.exit_code == 0, result.output
    assert f"of {window} tokens" not in result.stdout
    assert "200,000 tokens" in result.stdout


@pytest.mark.parametrize("window", [0, -5])
def test_a_user_window_below_one_is_refused_by_the_api(window: int) -> None:
    with pytest.raises(ValueError, match="must be a positive number of tokens"):
        load_session(SAMPLE, window=window)
    session = load_session(SAMPLE)
    with pytest.raises(ValueError, match="must be a positive number of tokens"):
        resolve_window(session, window)


@pytest.mark.parametrize("command", ["analyze", "replay", "compare"])
@pytest.mark.parametrize("window", ["0", "-5"])
def test_window_option_below_one_exits_2(command: str, window: str) -> None:
    result = CliRunner().invoke(cli, [command, str(SAMPLE), "--window", window])
    assert result.exit_code == 2
    assert "--window" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("window", ["0", "-5"])
def test_the_tui_refuses_a_window_below_one_before_starting(window: str) -> None:
    result = CliRunner().invoke(cli, [str(SAMPLE), "--window", window])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"ctxscope: --window must be a positive number of tokens, not {window}"
    )


@pytest.mark.parametrize("window", ["0", "-5"])
def test_a_policy_file_with_a_window_below_one_exits_2_naming_the_field(
    tmp_path: Path, window: str
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f"context_window = {window}\n")
    result = CliRunner().invoke(cli, ["analyze", str(SAMPLE), "-p", str(policy)])
    assert result.exit_code == 2
    assert str(policy) in result.stderr and "context_window" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
