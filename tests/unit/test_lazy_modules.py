"""The standard modules a one-shot command's libraries import but seldom use run when first used
(:mod:`tui.cli.lazy_modules`), and are then the modules an import would have made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.claude_jsonl import write_claude_session
from tests.support.processes import run_python


def test_a_one_shot_command_starts_without_openssl(tmp_path: Path) -> None:
    """``analyze --json`` (its ``-X importtime`` lines, second run) imports neither :mod:`hmac`
    nor OpenSSL's :mod:`_hashlib` (pydantic's ``import secrets`` brought them)."""
    session = tmp_path / "session.jsonl"
    write_claude_session(session, 8)
    line = [sys.executable, "-X", "importtime", "-m", "tui", "analyze", "--json", str(session)]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _run in range(2):
        result = subprocess.run(line, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr[-2000:]
    modules = {
        row.rsplit("|", 1)[1].strip()
        for row in result.stderr.splitlines()
        if row.startswith("import time:")
    }
    assert "pydantic.types" in modules  # (the lines are there to read)
    assert not {"hmac", "_hashlib", "random"} & modules


USED = """
import sys, threading
from tui.cli import lazy_modules
lazy_modules.defer()
import secrets, tokenize
import pydantic
before = [lazy_modules.deferred(name) for name in ("secrets", "tokenize")]
same = pydantic.SecretStr("k") == pydantic.SecretStr("k")
other = pydantic.SecretStr("k") == pydantic.SecretStr("j")
from secrets import token_hex
import inspect
from core.policy import TruncationPolicy
source = inspect.getsource(TruncationPolicy).startswith("class TruncationPolicy")
after = [lazy_modules.deferred(name) for name in ("secrets", "tokenize")]
print(before, same, other, len(token_hex(4)), source, after, type(sys.modules["secrets"]).__name__)
"""


def test_a_deferred_module_runs_at_its_first_use() -> None:
    """An ``import`` leaves it deferred; pydantic's secret comparison, a ``from`` import and
    :func:`inspect.getsource` (tokenize) work as before, and the modules are then plain ones."""
    assert run_python(USED).strip() == "[True, True] True False 8 True [False, False] module"


THREADS = """
import threading
from tui.cli import lazy_modules
lazy_modules.defer(("secrets",))
import secrets
start = threading.Barrier(4)
got = []
def use():
    start.wait()
    got.append(secrets.compare_digest(b"a", b"a"))
threads = [threading.Thread(target=use) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(got, lazy_modules.deferred("secrets"))
"""


def test_threads_that_first_use_it_at_once_all_find_it_whole() -> None:
    assert run_python(THREADS).strip() == "[True, True, True, True] False"


def test_a_module_imported_already_or_not_found_is_left_alone() -> None:
    code = """
import sys, secrets
from tui.cli import lazy_modules
lazy_modules.defer(("secrets", "no_such_module_here"))
print(sys.modules["secrets"] is secrets, lazy_modules.deferred("secrets"),
      "no_such_module_here" in sys.modules)
"""
    assert run_python(code).strip() == "True False False"


def test_a_packages_module_is_deferred_without_importing_the_package() -> None:
    """``msgspec.inspect``: msgspec's own ``from . import inspect`` leaves it deferred; its first
    use (a type description, a JSON schema) runs it, and every name for it is the one module."""
    code = """
import sys
from tui.cli import lazy_modules
lazy_modules.defer()
loaded = "msgspec" in sys.modules
import msgspec
before = lazy_modules.deferred("msgspec.inspect")
class Point(msgspec.Struct):
    x: int
field = msgspec.inspect.type_info(Point).fields[0].name
schema = msgspec.json.schema(Point)["$ref"]
import msgspec.inspect as described
same = described is sys.modules["msgspec.inspect"] is msgspec.inspect
print(loaded, before, field, schema, same, lazy_modules.deferred("msgspec.inspect"))
"""
    assert run_python(code).strip() == "False True x #/$defs/Point True False"


WINDOWS_PATHS = """
import contextlib, io, sys
sys.argv = ["ctxscope", "analyze", "--json", {path!r}]
from tui.cli import lazy_modules, main
main._import_command("analyze")
with contextlib.redirect_stdout(io.StringIO()) as out:
    main.cli.main(args=sys.argv[1:], standalone_mode=False)
after_analyze = [lazy_modules.deferred(name) for name in ("ntpath", "base64")]
import pydantic
coded = pydantic.TypeAdapter(pydantic.Base64Bytes).validate_python(b"aGk=")
import pathlib, ntpath
windows = pathlib.PureWindowsPath("C:/Users/a\\\\b.jsonl")
print(after_analyze, out.getvalue().startswith("{{"), windows.drive, windows.name, coded,
      ntpath.join("C:\\\\x", "y"), lazy_modules.deferred("ntpath"), ntpath is pathlib.ntpath,
      lazy_modules.deferred("base64"))
"""


def test_windows_paths_run_only_when_first_used(tmp_path: Path) -> None:
    """:mod:`ntpath` (which :mod:`pathlib` imports for its Windows paths) and :mod:`base64`
    (pydantic's base64 types) are not run by ``analyze --json`` (its second run: the first
    reads the price table); a Windows path made after it,
    :mod:`ntpath` itself and a base64 field work as before, with one module under both names."""
    session = tmp_path / "session.jsonl"
    write_claude_session(session, 8)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    code = WINDOWS_PATHS.format(path=str(session))
    run_python(code, env=env)  # (the first run reads the price table, whose imports use base64)
    out = run_python(code, env=env)
    assert out.strip() == "[True, True] True C: b.jsonl b'hi' C:\\x\\y False True False"
