"""A one-shot command's start-up: the code the libraries generate (dataclass methods, annotation
strings) is compiled once per machine and read back from the cache folder (tui.cli.code_cache).

Each case runs in a child process: the set-up changes the process (the ``exec`` of
:mod:`dataclasses`, the ``compile`` of :mod:`typing`) as the console script's does.
"""

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import run_python

START = """
import dataclasses, typing
from tui.cli import code_cache
from tui.cli.main import _import_command
_import_command("policy")
first, second = typing.ForwardRef("list[int] | None"), typing.ForwardRef("list[int] | None")
same = first.__forward_code__ is second.__forward_code__
value = typing.ForwardRef("dict[str, int]")._evaluate(globals(), None, frozenset())
try:
    typing.ForwardRef("list[")
    bad = "accepted"
except SyntaxError:
    bad = "SyntaxError"

@dataclasses.dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int = 2

made = Point(1) == Point(1, 2) and Point(1) < Point(2) and repr(Point(3)) == "Point(x=3, y=2)"
builtin = compile("1 + 1", "<string>", "eval") is compile("1 + 1", "<string>", "eval")
code_cache.save()
Pair = __import__("collections").namedtuple("Pair", "a b", defaults=[5])
made = made and Pair(1) == (1, 5) and repr(Pair(2, 3)) == "Pair(a=2, b=3)"
import re
word = re.compile(r"(?P<head>[a-z]+)-([0-9]+)", re.I)
found = word.search("x ABC-12 y")
made = made and found is not None and found.group("head", 2) == ("ABC", "12")
made = made and re.compile(rb"a+b").fullmatch(b"aab") is not None and word.groupindex["head"] == 1
print(same, value, bad, made, builtin, code_cache.read_from_file() > 0)
"""


def _start(cache: Path, **env: str) -> list[str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    environment.pop("CTXSCOPE_READ_ONLY", None)
    environment.update(env)
    result = subprocess.run(
        [sys.executable, "-c", START], capture_output=True, text=True, check=True, env=environment
    )
    return result.stdout.split()


def _cache_files(cache: Path) -> list[Path]:
    return sorted((cache / "ctxscope").glob("generated-code-*.marshal"))


def test_the_second_process_reads_the_code_the_first_compiled(tmp_path: Path) -> None:
    """The first process compiles (nothing cached: no hit) and writes the file; the second
    finds its texts there. Both get the same results: equal annotation strings share one code
    object, a string evaluates to its type, a bad one raises SyntaxError, a dataclass made
    after the set-up compares, orders and prints as one, so do a named tuple and a regular
    expression (its groups, its flags, a bytes pattern), and the builtin ``compile`` outside
    :mod:`typing` is left as it is."""
    assert _start(tmp_path) == [
        "True",
        "dict[str,",
        "int]",
        "SyntaxError",
        "True",
        "False",
        "False",
    ]
    assert len(_cache_files(tmp_path)) == 1
    assert _start(tmp_path) == ["True", "dict[str,", "int]", "SyntaxError", "True", "False", "True"]


def test_a_damaged_cache_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    _start(tmp_path)
    [path] = _cache_files(tmp_path)
    path.write_bytes(b"\x00not marshal data")
    assert _start(tmp_path)[-1] == "False"  # nothing read from it
    assert _start(tmp_path)[-1] == "True"  # rewritten by the run before


def test_a_cache_file_with_damaged_entries_gives_the_same_results(tmp_path: Path) -> None:
    """A file of the right version whose entries are damaged (a value of another shape, a code
    object replaced by a number, a regular expression's program by nonsense) costs the process
    its cache, not its start: it compiles those texts again and gives the same results."""
    expected = _start(tmp_path)[:-1]
    [path] = _cache_files(tmp_path)
    version, generation, codes, written = marshal.loads(path.read_bytes())
    damaged: dict[tuple[object, ...], object] = {}
    used: dict[tuple[object, ...], object] = {}
    for number, (key, value) in enumerate(codes.items()):
        if key[0] == "re":
            damaged[key] = (value[0], [99999, 1, 2], "x", None, ())
        elif number % 2:
            damaged[key] = 12345
        else:
            damaged[key] = "not a code object"
        used[key] = written[key] if number % 3 else "not a generation"
    damaged[("junk",)] = None
    used[("junk",)] = generation
    assert any(key[0] == "re" for key in damaged) and any(key[0] == "exec" for key in damaged)
    path.write_bytes(marshal.dumps((version, generation, damaged, used)))
    assert _start(tmp_path)[:-1] == expected
    assert _start(tmp_path) == [*expected, "True"]  # rewritten whole by the run before
    _version, _generation, codes, written = marshal.loads(path.read_bytes())
    assert ("junk",) not in codes and all(type(value) is int for value in written.values())


def test_a_cache_file_of_the_older_layout_is_ignored_and_rewritten(tmp_path: Path) -> None:
    """A file of the layout before this one (its entries as (value, generation) pairs in one
    dictionary) is not read, and the next write replaces it."""
    _start(tmp_path)
    [path] = _cache_files(tmp_path)
    version, generation, codes, written = marshal.loads(path.read_bytes())
    older = {key: (value, written[key]) for key, value in codes.items()}
    path.write_bytes(marshal.dumps((version, generation, older)))
    assert _start(tmp_path)[-1] == "False"
    assert _start(tmp_path)[-1] == "True"


def test_read_only_writes_no_cache_file(tmp_path: Path) -> None:
    assert _start(tmp_path, CTXSCOPE_READ_ONLY="1")[-1] == "False"
    assert _cache_files(tmp_path) == []


def test_a_cache_file_others_may_write_is_not_read(tmp_path: Path) -> None:
    """The file holds code the process runs: one that another user could have written is
    ignored (and replaced by one of this user's, written as usual)."""
    _start(tmp_path)
    [path] = _cache_files(tmp_path)
    path.chmod(0o666)
    assert _start(tmp_path)[-1] == "False"
    assert path.stat().st_mode & 0o777 == 0o600
    assert _start(tmp_path)[-1] == "True"


ONE_OFF = """
import re, sys
from tui.cli import code_cache
from tui.cli.main import _import_command
_import_command("policy")
re.compile("one-off-" + sys.argv[1])  # new in this process only, as tokenize's pattern is
code_cache.save()
print(code_cache.read_from_file())
"""


def test_texts_no_process_asks_for_again_leave_the_file(tmp_path: Path) -> None:
    """A text compiled once and never again (tokenize's pattern differs in every process) stays
    for :data:`KEEP_WRITES` writes of the file, then goes: the file does not grow a run at a
    time. What every process uses stays."""
    from tui.cli import code_cache

    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    environment.pop("CTXSCOPE_READ_ONLY", None)
    runs = code_cache.KEEP_WRITES + 4
    read = []
    for run in range(runs):
        result = subprocess.run(
            [sys.executable, "-c", ONE_OFF, str(run)],
            capture_output=True,
            text=True,
            check=True,
            env=environment,
        )
        read.append(int(result.stdout))
    [path] = _cache_files(tmp_path)
    _version, generation, codes, written = marshal.loads(path.read_bytes())
    assert codes.keys() == written.keys()
    one_offs = sorted(
        int(key[1].split("-")[-1])
        for key in codes
        if key[0] == "re" and str(key[1]).startswith("one-off-")
    )
    assert generation == runs
    assert one_offs == list(range(runs - code_cache.KEEP_WRITES, runs))
    shared = [key for key in codes if key[0] == "exec"]
    assert shared and all(written[key] == runs for key in shared)
    assert read[0] == 0 and min(read[1:]) > 0
    assert max(read[code_cache.KEEP_WRITES + 1 :]) == max(read[1 : code_cache.KEEP_WRITES + 1])


def test_a_cache_file_too_big_to_be_ours_is_not_read(tmp_path: Path) -> None:
    from tui.cli import code_cache

    _start(tmp_path)
    [path] = _cache_files(tmp_path)
    path.write_bytes(path.read_bytes() + b"\0" * code_cache.MAX_FILE_BYTES)
    assert _start(tmp_path)[-1] == "False"  # not read
    assert path.stat().st_size < code_cache.MAX_FILE_BYTES  # rewritten
    assert _start(tmp_path)[-1] == "True"


FACTORIES = """
import tokenize
from tui.cli.main import _import_command
_import_command("policy")
from pydantic import BaseModel, Field
from pydantic._internal import _fields, _generate_schema

class Defaults(BaseModel):
    items: list[int] = Field(default_factory=list)
    table: dict[str, int] = Field(default_factory=dict)
    seen: set[str] = Field(default_factory=set)
    copied: list[int] = Field(default_factory=lambda data: list(data["items"]))

made = Defaults(items=[1, 2])
takes = _fields.takes_validated_data_argument
print(
    made.table == {} and made.seen == set() and made.copied == [1, 2],
    [takes(factory) for factory in (list, dict, set, tuple, frozenset)],
    takes(lambda data: data),
    _generate_schema.takes_validated_data_argument is takes,
    tokenize._compile.cache_info().misses,
)
"""


def test_builtin_default_factories_are_known_without_their_signatures(tmp_path: Path) -> None:
    """A one-shot command's pydantic tells that ``list``, ``dict`` and the other builtin
    containers take no validated-data argument as pydantic itself does (False), and a factory
    that takes one still does (True), without :func:`inspect.signature`: which tokenised each
    builtin's text signature, compiling :mod:`tokenize`'s pattern in every process."""
    out = run_python(FACTORIES, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert out.split(" ", 1)[0] == "True"
    assert out.strip().endswith("[False, False, False, False, False] True True 0"), out


MAIN_IMPORT = """
import gc
was = gc.isenabled()
frozen = gc.get_freeze_count()
import tui.cli.main
print(was, gc.isenabled(), gc.get_freeze_count() > frozen, "click" in __import__("sys").modules)
"""


def test_the_console_scripts_import_leaves_the_collector_as_it_was() -> None:
    """Importing the console script's module (click and all) runs with the garbage collector
    off and freezes what it built, then leaves the collector on as it found it."""
    result = subprocess.run(
        [sys.executable, "-c", MAIN_IMPORT], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "True", "True", "True"]


def test_a_pydantic_laid_out_otherwise_is_asked_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where pydantic's private module that answers for default factories cannot be imported
    (another pydantic release), nothing is replaced and the command starts as before."""
    import pydantic._internal as internal
    from pydantic._internal import _generate_schema

    from tui.cli import main

    name = "takes_validated_data_argument"
    before = getattr(_generate_schema, name)
    monkeypatch.delattr(internal, "_fields")
    monkeypatch.setitem(sys.modules, "pydantic._internal._fields", None)
    main._plain_default_factories()  # (raised ImportError before the guard)
    assert getattr(_generate_schema, name) is before


def test_python_m_runs_the_command_line(tmp_path: Path) -> None:
    """``python -m tui.cli.main ARGS`` runs the command as the console script does (the module
    had no ``__main__`` guard: it defined the commands and ended, printing nothing)."""
    args = [sys.executable, "-m", "tui.cli.main", "policy", "dump", "pi"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    assert done.stdout.startswith('name = "pi"\n')
    assert "[compaction]" in done.stdout
