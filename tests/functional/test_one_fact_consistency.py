"""One fact, one number: the same fact about a real session agrees across every output.

Compared over every session file in ``../shared/samples`` and ``../shared/new-formats``
(skipped when absent): ``analyze --json``, ``replay --json``, ``breakdown --json``,
``compactions --json``, ``fidelity --json``, ``fleet --json``, ``export`` (Parquet read back) and
``report`` (the HTML's tables parsed). The facts: the window and its evidence, the peak prompt and
its call, the recorded compactions (how many; each one's at message, agent's count, check, last
prompt and tokens after) and the costs. Each command runs once per session, in process
(session-scoped fixtures); the test fails on any difference and names the outputs that disagree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.paths import REPO, opencode_storage_piece
from tui.cli.main import cli

ROOTS = (REPO.parent / "shared" / "samples", REPO.parent / "shared" / "new-formats")


SAMPLES = sorted(
    path
    for root in ROOTS
    if root.is_dir()
    for path in root.rglob("*")
    if path.is_file() and path.suffix in (".jsonl", ".json") and not opencode_storage_piece(path)
)

pytestmark = pytest.mark.skipif(not SAMPLES, reason="../shared samples are absent")

Facts = dict[str, dict[str, Any]]
"""fact -> {output: value}."""


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def _json(*args: str) -> Any:
    code, out = _run(*args, "--json")
    assert code in (0, 1), f"{args}: exit {code}: {out[-400:]}"
    return json.loads(out)


def _count(text: str) -> int | None:
    digits = text.split(" (")[0].replace(",", "")
    return int(digits) if digits.isdigit() else None


def _usd(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@pytest.fixture(scope="session")
def loadable() -> list[Path]:
    """The samples every command can read (a file that does not load is an error in all)."""
    return [p for p in SAMPLES if _run("analyze", str(p), "--json")[0] in (0, 1)]


@pytest.fixture(scope="session")
def fleet_rows(loadable: list[Path]) -> dict[str, dict[str, Any]]:
    report = _json("fleet", "--no-cache", "-j", "2", *map(str, loadable))
    return {row["path"]: row for row in report["rows"]}


@pytest.fixture(scope="session")
def exported(
    loadable: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("export")
    code, out = _run("export", "--to", str(folder), "-j", "2", *map(str, loadable))
    assert code == 0, out
    sessions = {r["path"]: r for r in pq.read_table(folder / "sessions.parquet").to_pylist()}
    compactions: dict[str, list[dict[str, Any]]] = {}
    for row in pq.read_table(folder / "compactions.parquet").to_pylist():
        compactions.setdefault(row["path"], []).append(row)
    return sessions, compactions


@pytest.fixture(scope="session")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], dict[str, Any]]:
    """Each session's per-session outputs, computed once per session file."""
    done: dict[Path, dict[str, Any]] = {}

    def of(sample: Path) -> dict[str, Any]:
        if sample not in done:
            path = str(sample)
            page = tmp_path_factory.mktemp("report") / "report.html"
            code, out = _run("report", path, "-o", str(page), "--force")
            assert code == 0, out
            done[sample] = {
                "analyze": _json("analyze", path),
                "replay": _json("replay", path),
                "breakdown": _json("breakdown", path),
                "compactions": _json("compactions", path),
                "fidelity": _json("fidelity", path),
                "report": page.read_text(encoding="utf-8"),
            }
        return done[sample]

    return of


def _html_rows(html: str, after: str) -> list[list[str]]:
    """The body rows of the first table after ``after``, cells unescaped."""
    start = html.index(after)
    table = html[start : html.index("</table>", start)]
    body = table[table.index("<tbody>") :] if "<tbody>" in table else table
    return [
        [unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def _add(facts: Facts, fact: str, output: str, value: Any) -> None:
    facts.setdefault(fact, {})[output] = value


def _session_facts(out: dict[str, Any], fleet: dict[str, Any], export: dict[str, Any]) -> Facts:
    facts: Facts = {}
    analysis, replay, fidelity = out["analyze"], out["replay"], out["fidelity"]
    session = analysis["session"]
    summary = dict(_html_rows(out["report"], "<th>figure</th>"))
    peak = next(v for k, v in summary.items() if k.startswith("peak prompt, "))
    sources: dict[str, dict[str, Any]] = {
        "analyze": {
            "window": session["window"],
            "window evidence": session["window_evidence"],
            "peak": session["peak_tokens"],
            "peak call": session["peak_call_index"],
            "recorded compactions": session["recorded_compactions"],
            "cost": _usd((analysis["cost"] or {}).get("total_usd")),
        },
        "replay": {"window": replay["window"], "window evidence": replay["window_evidence"]},
        "breakdown": {"cost": _usd((out["breakdown"]["cost"] or {}).get("total_usd"))},
        "compactions": {
            "recorded compactions": sum(
                1 for c in out["compactions"] if c["why"]["source"] == "recorded"
            )
        },
        "fleet": {
            "window": fleet["window_tokens"],
            "window evidence": fleet["window_evidence"],
            "peak": fleet["peak_tokens"],
            "peak call": fleet["peak_call_index"],
            "recorded compactions": fleet["compactions"],
            "cost": fleet["cost_usd"],
        },
        "export": {
            "window": export["window_tokens"],
            "window evidence": export["window_evidence"],
            "peak": export["peak_tokens"],
            "peak call": export["peak_call_index"],
            "recorded compactions": export["compactions"],
            "cost": export["cost_usd"],
        },
        "report": {
            "window": _count(summary["window"]),
            "peak": _count(peak),
            "peak call": _count(summary["peak call"]),
            "recorded compactions": _count(summary["recorded compactions"]),
        },
    }
    for entry in fidelity["entries"]:
        sources["fidelity"] = {
            "window": entry["window"],
            "window evidence": entry["window_evidence"],
        }
    for output, values in sources.items():
        for fact, value in values.items():
            _add(facts, fact, output, value)
    return facts


_FIGURES = ("at message", "agent's count", "check", "last prompt", "tokens after")


def _compaction_usd(cost: dict[str, Any] | None) -> float | None:
    """A compaction's cost as the export sums it: its summary call and the cache rebuilt."""
    if cost is None or (cost["summary_call_usd"] is None and cost["cache_rebuild_usd"] is None):
        return None
    return _usd((cost["summary_call_usd"] or 0.0) + (cost["cache_rebuild_usd"] or 0.0))


def _named(figures: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(figures[key] for key in _KEYS)


_KEYS = ("at_message", "agent_count", "check_tokens", "last_prompt", "tokens_after")
_EXPORTED = ("message_index", "tokens_before", "check_tokens", "last_prompt_tokens", "tokens_after")


def _compaction_rows(out: dict[str, Any], exported: list[dict[str, Any]]) -> list[Any]:
    """``(output, recorded index, figures)`` of every output that states a recorded compaction's
    figures (``...``: the output does not state that one)."""
    rows: list[Any] = []
    for output in ("analyze", "compactions"):
        reports = out["analyze"]["compactions"] if output == "analyze" else out["compactions"]
        rows += [
            (output, r["figures"]["recorded_index"], _named(r["figures"]))
            for r in reports
            if r["figures"] is not None
        ]
    for output, fidelity in (
        ("analyze fidelity", out["analyze"]["fidelity"]),
        ("replay", out["replay"]["fidelity"]),
    ):
        rows += [
            (
                output,
                r["recorded_index"],
                (r["message_index"], r["tokens_before"], r["check_tokens"], ..., ...),
            )
            for r in fidelity
        ]
    rows += [
        ("fidelity", e["row"]["recorded_index"], _named(e["figures"]))
        for e in out["fidelity"]["entries"]
    ]
    rows += [("export", r["recorded_index"], tuple(r[k] for k in _EXPORTED)) for r in exported]
    if ">at message</th>" in out["report"]:
        rows += [
            ("report", int(c[0]), (int(c[1]), *(_count(x) for x in c[5:9])))
            for c in _html_rows(out["report"], ">at message</th>")
        ]
    return rows


def _compaction_facts(out: dict[str, Any], exported: list[dict[str, Any]]) -> Facts:
    facts: Facts = {}
    for output, index, values in _compaction_rows(out, exported):
        for name, value in zip(_FIGURES, values, strict=True):
            if value is not ...:
                _add(facts, f"compaction {index} {name}", output, value)
    for output in ("analyze", "compactions"):
        reports = out["analyze"]["compactions"] if output == "analyze" else out["compactions"]
        for r in reports:
            if r["figures"] is not None:
                index = r["figures"]["recorded_index"]
                _add(facts, f"compaction {index} cost", output, _compaction_usd(r["cost"]))
    for row in exported:
        if not row["rewound"]:
            _add(facts, f"compaction {row['recorded_index']} cost", "export", row["cost_usd"])
    return facts


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name[:50]}")
def test_the_same_facts_agree(
    sample: Path,
    loadable: list[Path],
    outputs: Callable[[Path], dict[str, Any]],
    fleet_rows: dict[str, dict[str, Any]],
    exported: tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]],
) -> None:
    assert sample in loadable, f"{sample.name}: analyze --json could not read it"
    out = outputs(sample)
    sessions, compactions = exported
    facts = _session_facts(out, fleet_rows[str(sample)], sessions[str(sample)])
    facts.update(_compaction_facts(out, compactions.get(str(sample), [])))
    differ = {
        fact: by for fact, by in facts.items() if len({json.dumps(v) for v in by.values()}) > 1
    }
    assert not differ, f"the outputs disagree: {differ}"
