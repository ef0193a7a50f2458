"""A one-shot command imports :mod:`zoneinfo` (pydantic's time-zone type) with its search path
read from the cache folder (``tui.cli.main._zoneinfo_from_cache``), not worked out by
:mod:`sysconfig`: the path is the one :mod:`zoneinfo` finds on its own."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

from tests.support.processes import run_python

START = """
import os, sys
sys.argv = ["ctxscope", "analyze"]
from tui.cli import code_cache, lazy_modules, main
main._import_command("analyze")
import zoneinfo
code_cache.save()
print(repr(zoneinfo.TZPATH), os.environ.get("PYTHONTZPATH"), lazy_modules.deferred("sysconfig"),
      any(name.startswith("_sysconfigdata") for name in sys.modules))
"""

PLAIN = "import zoneinfo; print(repr(zoneinfo.TZPATH))"


def _run(code: str, cache: Path, **env: str) -> str:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    for name in ("CTXSCOPE_READ_ONLY", "PYTHONTZPATH"):
        environment.pop(name, None)
    environment.update(env)
    return run_python(code, env=environment).strip()


def test_the_search_path_is_the_one_zoneinfo_finds_itself(tmp_path: Path) -> None:
    """The first process asks :mod:`sysconfig` (and keeps the answer); the next reads it and
    never runs :mod:`sysconfig` nor imports the build's data. Both leave ``PYTHONTZPATH`` unset
    and give the path a plain ``import zoneinfo`` gives."""
    plain = _run(PLAIN, tmp_path)
    assert plain.startswith("(")
    first = _run(START, tmp_path).rsplit(" ", 3)
    assert first[0] == plain and first[1] == "None"
    assert _run(START, tmp_path).rsplit(" ", 3) == [plain, "None", "True", "False"]


def test_a_path_the_environment_sets_is_left_to_zoneinfo(tmp_path: Path) -> None:
    """``PYTHONTZPATH`` set by the user wins, as it does in any process, and stays set."""
    _run(START, tmp_path)  # (the cache holds the build's path)
    out = _run(START, tmp_path, PYTHONTZPATH="/opt/zones:/srv/zones")
    assert out.split(" ")[:3] == ["('/opt/zones',", "'/srv/zones')", "/opt/zones:/srv/zones"]


def test_a_damaged_entry_is_asked_of_sysconfig_again(tmp_path: Path) -> None:
    """An entry of the wrong shape (not a 1-tuple of a text or None) is not used: the path is
    asked of :mod:`sysconfig` and is the one a plain import gives."""
    plain = _run(PLAIN, tmp_path)
    _run(START, tmp_path)
    [path] = (tmp_path / "ctxscope").glob("generated-code-*.marshal")
    version, generation, codes, written = marshal.loads(path.read_bytes())
    key = ("config", "TZPATH", "")
    assert key in codes
    for damaged in (12345, ("/a", "/b"), (7,)):
        codes[key] = damaged
        path.write_bytes(marshal.dumps((version, generation, codes, written)))
        out = _run(START, tmp_path).rsplit(" ", 3)
        assert out[0] == plain and out[1] == "None" and out[2] == "False"
