"""A one-shot command defines the pydantic models it prints, not those of other commands: each
model class costs its process ~2 M instructions to create (its fields collected, their
annotations evaluated), whether or not the command makes one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.processes import run_python

RUN = """
import contextlib, io, sys
from tui.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    cli.main(args=[{command!r}, "--json", {path!r}], standalone_mode=False)
assert out.getvalue().lstrip()[:1] in ("{{", "[")
print(",".join(sorted(m for m in {modules!r} if m in sys.modules)))
"""

SAMPLE_CLAUDE = Path("sample_sessions") / "claude-code" / "compacted.jsonl"


def _loaded(command: str, sample: Path, modules: tuple[str, ...], cache: Path) -> str:
    """Which of ``modules`` a whole run of ``command --json sample`` imported: its second run
    with ``cache`` as its cache folder (the first writes the price memo: the price table, read
    once per model, imports asyncio)."""
    code = RUN.format(command=command, path=str(sample), modules=modules)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    run_python(code, env=env)
    return run_python(code, env=env).strip()


@pytest.mark.parametrize(
    "sample",
    [
        REPO / "sample_sessions" / "claude-code" / "compacted.jsonl",
        REPO
        / "sample_sessions"
        / "codex"
        / "rollout-2026-03-14T09-12-33-019ceb67-7968-7c30-9ae9-f3a029d24123.jsonl",
    ],
    ids=["claude-code", "codex"],
)
def test_breakdown_defines_none_of_the_replays_models(tmp_path: Path, sample: Path) -> None:
    """``breakdown --json`` replays nothing: the replay's result models (and the comparison's)
    are not defined in its process (its models' base class, :class:`Documented`, is not
    theirs)."""
    assert _loaded("breakdown", sample, ("core.replay.results",), tmp_path) == ""


def test_the_replays_models_share_the_breakdowns_base() -> None:
    """The result models of the replay and those of the breakdown, the cost and the sub-agents
    have one base: one class, wherever it is imported from."""
    from core.fleet.subagent_info import SubagentInfo
    from core.insights.breakdown import ContextBreakdown
    from core.insights.cost import SessionCost
    from core.model.fastmodel import Documented
    from core.replay import results

    assert results.Documented is Documented
    for model in (results.ReplayResult, ContextBreakdown, SessionCost, SubagentInfo):
        assert issubclass(model, Documented)


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_a_replay_that_compacts_nowhere_defines_no_llm_models(tmp_path: Path, command: str) -> None:
    """The LLM's request and answer models are made where a compaction asks a summarizer (or a
    judge a model): a replay that compacts nowhere (the branched pi sample's) defines none."""
    sample = REPO / "sample_sessions" / "pi" / "branched.jsonl"
    assert _loaded(command, sample, ("core.llm.protocol",), tmp_path) == ""


def test_compactions_json_draws_no_table_and_asks_no_model(tmp_path: Path) -> None:
    """``compactions --json`` prints its reports' JSON: rich (its tables), asyncio, the LLM
    client and the compaction algorithm (only ``--compare`` and ``--llm`` ask a model) are not
    imported."""
    sample = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"
    unused = (
        "rich",
        "rich.table",
        "asyncio",
        "core.llm.factory",
        "core.llm.protocol",
        "core.algorithms.compact",
        "tui.cli.render",
    )
    assert _loaded("compactions", sample, unused, tmp_path) == ""


def test_fidelity_json_draws_no_table(tmp_path: Path) -> None:
    """``fidelity --json`` prints its report's JSON: rich and the table renderer are not
    imported."""
    folder = REPO / "sample_sessions" / "claude-code"
    assert _loaded("fidelity", folder, ("rich", "rich.table", "tui.cli.render"), tmp_path) == ""


DUMP = """
import contextlib, io, sys
from tui.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    cli.main(args=["policy", "dump", "pi"], standalone_mode=False)
assert "[compaction]" in out.getvalue()
print(",".join(sorted(m for m in ("rich", "tui.cli.render") if m in sys.modules)))
"""


def test_policy_dump_draws_no_table(tmp_path: Path) -> None:
    """``policy dump`` writes TOML: rich and the table renderer are not imported."""
    assert run_python(DUMP, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)}).strip() == ""


SESSIONS = """
import contextlib, io, json, sys
from tui.cli.main import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    cli.main(args=["sessions", "--json"], standalone_mode=False)
assert isinstance(json.loads(out.getvalue()), list)
print(",".join(sorted(m for m in ("rich", "tui.cli.table_fit", "tui.cli.render") if m in sys.modules)))
"""


def test_sessions_json_draws_no_table(tmp_path: Path) -> None:
    """``sessions --json`` prints a list: its columns are defined (:mod:`tui.cli.table_column`)
    without rich and the fitting that draws them."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    assert run_python(SESSIONS, env=env).strip() == ""


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_a_replay_defines_none_of_the_comparisons_models(tmp_path: Path, command: str) -> None:
    """Only ``compare`` makes a :class:`CompareResult`: a single replay does not define the
    comparison's models (:mod:`core.replay.compare_results`), whose import the replay's own
    results (:mod:`core.replay.results`) no longer carry."""
    sample = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"
    modules = ("core.replay.compare_results", "core.replay.results")
    assert _loaded(command, sample, modules, tmp_path) == "core.replay.results"


@pytest.mark.parametrize("command", ["analyze", "compactions"])
def test_only_a_comparison_of_summaries_defines_its_rows(tmp_path: Path, command: str) -> None:
    """The side-by-side rows of two summaries of one head (``compactions --compare``) have a
    module of their own: ``analyze`` and ``compactions --json`` of a session with compactions
    read each summary's forgotten facts without defining :class:`SideBySide`."""
    sample = REPO / "sample_sessions" / "claude-code" / "compacted.jsonl"
    modules = ("core.insights.forgotten_facts", "core.insights.side_by_side")
    assert _loaded(command, sample, modules, tmp_path) == "core.insights.forgotten_facts"


def test_a_replay_with_the_policy_s_own_llm_builds_no_llm_schema(tmp_path: Path) -> None:
    """``replay --json`` without ``--llm``, ``--model`` or a limit on the line keeps the policy's
    LLM settings as they were validated: the settings' model builds no schema for a copy."""
    code = RUN.format(command="replay", path=str(REPO / SAMPLE_CLAUDE), modules=()) + (
        "from core.policy import LLMConfig\nprint(LLMConfig.__pydantic_complete__)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    assert run_python(code, env=env).split() == ["False"]


@pytest.mark.parametrize(
    "sample",
    [SAMPLE_CLAUDE, Path("sample_sessions") / "pi" / "branched.jsonl"],
    ids=["claude-code", "pi"],
)
def test_analyze_defines_no_model_it_never_builds(tmp_path: Path, sample: Path) -> None:
    """``analyze --json`` of a session without sub-agents, a calibration or a window change
    builds no sub-agent's figures, no call's cost, no calibration, no window change and (none
    overflowing nor near it) no point or message state of its replay: their
    classes (field types of models it does build) are not created
    (:func:`core.model.fastmodel.lazy_field_types`)."""
    unused = (
        "core.fleet.subagent_info",
        "core.insights.call_cost",
        "core.insights.calibration_figures",
        "core.model.window_change",
        "core.replay.points",
    )
    assert _loaded("analyze", REPO / sample, unused, tmp_path) == ""
