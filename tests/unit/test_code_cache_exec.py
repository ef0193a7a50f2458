"""A library module that ``exec``s the functions it writes as it loads (typing-inspection's
check functions) runs them from the code cache in a one-shot command, and is left as the import
system would have left it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.processes import run_python

CHECKS = """
import inspect, json, sys, types, typing
import typing_extensions
RUN_COMMAND
import typing_inspection.typing_objects as objects
from tui.cli import code_cache
names = [n for n in objects.__all__ if isinstance(getattr(objects, n), types.FunctionType)]
probes = [typing.Annotated, typing.Any, typing.ClassVar, typing.ForwardRef("x"), int, None,
          typing_extensions.TypeAliasType, typing.Literal, typing.Final, typing_extensions.Never]
answers = {n: [bool(getattr(objects, n)(p)) for p in probes] for n in names
           if getattr(objects, n).__code__.co_filename == "<string>"}
annotations = {n: repr(inspect.get_annotations(getattr(objects, n))) for n in answers}
cached = sum(1 for key in code_cache._codes if key[0] == "exec" and "def is_" in key[2])
print(json.dumps({
    "answers": answers,
    "annotations": annotations,
    "exec_in_module": "exec" in vars(objects),
    "loader_patched": "exec_module" in vars(objects.__spec__.loader),
    "finders": sorted(type(f).__name__ for f in sys.meta_path),
    "cached": cached,
}))
code_cache.save()
"""


def _run(cache: Path, *, command: bool) -> dict[str, object]:
    prelude = (
        "sys.argv = ['ctxscope', 'analyze']\n"
        "from tui.cli.main import _import_command\n_import_command('analyze')"
        if command
        else "pass"
    )
    out = run_python(
        CHECKS.replace("RUN_COMMAND", prelude), env={**os.environ, "XDG_CACHE_HOME": str(cache)}
    )
    result: dict[str, object] = json.loads(out)
    return result


def test_the_generated_checks_are_the_ones_a_plain_import_makes(tmp_path: Path) -> None:
    plain = _run(tmp_path / "plain", command=False)
    first = _run(tmp_path / "cli", command=True)
    second = _run(tmp_path / "cli", command=True)
    assert len(plain["answers"]) >= 25  # type: ignore[arg-type]
    for run in (first, second):
        assert run["answers"] == plain["answers"]
        assert run["annotations"] == plain["annotations"]
        assert run["exec_in_module"] is False and run["loader_patched"] is False
        assert "_ExecThroughCache" not in run["finders"]  # type: ignore[operator]
    assert second["cached"] == len(plain["answers"])  # type: ignore[arg-type]
