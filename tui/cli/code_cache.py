"""The code the libraries generate as a command starts, compiled once per machine.

A one-shot command imports pydantic and builds its models, and on the way the standard library
compiles source text it writes at run time: :mod:`dataclasses` the methods of each dataclass
(297 functions of 65 classes in ``analyze``, pydantic's own for the most part), :mod:`typing`
every annotation string (1,417 compilations of 310 distinct strings) and
:func:`collections.namedtuple` each tuple's constructor; and :mod:`re` parses each regular
expression a module compiles as it loads (in Python: 4 % of that process). In ``analyze --json`` of
a 2.4 MB session that is 15 % of the process's instructions, the same in every run. As the
interpreter keeps a module's code in its ``.pyc`` file, this module keeps those code objects in
the cache folder (``generated-code-<interpreter>.marshal`` beside the price memo) for the next
process; a source it does not hold is compiled as before and added.

A code object is what compiling its source gives (those modules compile with no compiler flag
inherited, as done here), so the cached one is the one compiling would give. The file holds two
dictionaries (the values, and the last write that used each) that the process takes as they
come: the start looks at no entry (a damaged one is found where it is used, and left out of the
next write). A file written by
another interpreter version, unreadable or damaged is ignored, and so is one that is not this
user's own or that others may write (it holds code this process runs); with
``CTXSCOPE_READ_ONLY=1`` (:func:`core.cache_folder.read_only`) the file is read, never written.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import dataclasses
import functools
import importlib
import marshal
import os
import stat
import sys
import typing
from importlib.machinery import PathFinder, SourceFileLoader
from types import CodeType, ModuleType
from typing import Any

from core.cache_folder import cache_dir, read_only

_re_compiler: Any = importlib.import_module("re._compiler")
_re_parser: Any = importlib.import_module("re._parser")
_sre: Any = importlib.import_module("_sre")

Key = tuple[Any, ...]
"""(mode, file name, source) of one compiled text; ("re", pattern, flags) of a regular
expression."""

MAX_ENTRIES = 4096
"""A file holding more is rewritten with the texts of the last run only (it never grows without
bound, whatever the libraries generate)."""

MAX_FILE_BYTES = 4 << 20
"""A larger file is not read (nor its objects made) but rewritten: the commands' own texts take
~0.4 MB, so such a file is one an older version let grow."""

KEEP_WRITES = 8
"""An entry no process has used in this many writes of the file is dropped at the next one. Some
generated texts are new in every process and never read again: :mod:`tokenize` builds its
regular expression from a set, whose order follows the process's string hashing, so each process
compiles a pattern of ~10 KB no other will ask for; kept for ever, they made the file grow by that
much a run (9.5 MB after ~900 runs, read back by every command)."""

_codes: dict[Key, Any] = {}
_used: set[Key] = set()
_written: dict[Key, Any] = {}
"""The last write of the file (its generation) in which each entry read from it was used."""
_state = {"installed": False, "added": 0, "read": 0, "generation": 0}


def cache_path() -> str:
    """The cache file of this interpreter (its version and implementation in the name)."""
    tag = sys.implementation.cache_tag or "python"
    return str(cache_dir() / f"generated-code-{tag}.marshal")


def _version() -> str:
    return f"{sys.implementation.name} {sys.version} {sys.platform}"


def install() -> None:
    """Read the cache file and let :mod:`dataclasses` and :mod:`typing` compile through it (the
    ``exec`` and ``compile`` names in their namespaces, shadowing the builtins there only)."""
    global _codes, _written
    if _state["installed"]:
        return
    _state["installed"] = True
    generation, codes, written = _load()
    _state["generation"] = generation
    _codes, _written = codes, written  # (the file's own: no entry is copied or looked at)
    _state["read"] = len(codes)
    dataclasses.exec = exec_cached  # type: ignore[attr-defined]
    typing.compile = compile_cached  # type: ignore[attr-defined]
    collections.eval = eval_cached  # type: ignore[attr-defined]
    _exec_through_cache_in(GENERATING_MODULES)
    if _REGEX_COMPILER_KNOWN:
        _original_regex[:] = [_re_compiler.compile]
        _re_compiler.compile = compile_regex_cached


GENERATING_MODULES = ("typing_inspection.typing_objects",)
"""Library modules that ``exec`` source texts they write as they load (typing-inspection's check
functions, 29 on Python 3.11, one text each; pydantic imports it): their ``exec`` is
:func:`exec_cached` while their code runs, as :mod:`dataclasses`'s is (their texts are compiled
with no flag inherited either: they have no ``from __future__`` import)."""


class _ExecThroughCache:
    """A finder (first on :data:`sys.meta_path`) that finds nothing itself: for a module of
    :data:`GENERATING_MODULES` it gives the spec the path finder gives, its loader made to run
    the module with :func:`exec_cached` as the module's ``exec``. It leaves the import system
    once each has been found."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.pending = set(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.pending:
            return None
        self.pending.discard(fullname)
        if not self.pending:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self)
        spec = PathFinder.find_spec(fullname, path, target)
        loader = getattr(spec, "loader", None)
        if spec is None or not isinstance(loader, SourceFileLoader):
            return spec  # (None: the finders after this one look as they would have)
        loader.exec_module = functools.partial(_exec_module_cached, loader)  # type: ignore[method-assign]
        return spec


def _exec_module_cached(loader: SourceFileLoader, module: ModuleType) -> None:
    """``loader``'s own ``exec_module`` with ``exec`` in the module's namespace while it runs
    (taken out after, and the loader is the plain one again)."""
    del loader.exec_module  # (the class's method from now on)
    namespace = module.__dict__
    namespace["exec"] = exec_cached
    try:
        loader.exec_module(module)
    finally:
        if namespace.get("exec") is exec_cached:
            del namespace["exec"]


def _exec_through_cache_in(names: tuple[str, ...]) -> None:
    """Put an :class:`_ExecThroughCache` first on :data:`sys.meta_path` for the modules of
    ``names`` not imported yet."""
    waiting = tuple(name for name in names if name not in sys.modules)
    if waiting:
        sys.meta_path.insert(0, _ExecThroughCache(waiting))


def _load() -> tuple[int, dict[Key, Any], dict[Key, Any]]:
    """The file's generation, its values and the generation that last used each (0 and none: no
    file, or one this process does not trust or read). An entry of the wrong shape is never
    asked for (a key is the text's own), a value that is not what its text needs is made again
    where it is used, and :func:`kept_entries` leaves both out of the next write."""
    try:
        fd = os.open(cache_path(), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return 0, {}, {}
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not _trusted(info) or info.st_size > MAX_FILE_BYTES:
                return 0, {}, {}
            data = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return 0, {}, {}
    if not (type(data) is tuple and len(data) == 4 and data[0] == _version()):
        return 0, {}, {}
    generation, codes, written = data[1], data[2], data[3]
    if type(generation) is not int or type(codes) is not dict or type(written) is not dict:
        return 0, {}, {}
    return generation, codes, written


def _well_formed(key: Any, written: Any) -> bool:
    """An entry has the shape this module writes: a (kind, name, text) key, and the generation
    that last used it a number."""
    return type(key) is tuple and len(key) == 3 and type(written) is int


def kept_entries() -> dict[Key, tuple[Any, int]]:
    """What the next write of the file holds, each entry with the generation that last used it:
    this process's entries, and those of the file that a process used in the last
    :data:`KEEP_WRITES` writes (this one's only, past :data:`MAX_ENTRIES`); an entry of the
    wrong shape is left out."""
    generation = _state["generation"] + 1
    oldest = generation - KEEP_WRITES
    kept = {}
    for key, value in _codes.items():
        written = generation if key in _used else _written.get(key, generation)
        if _well_formed(key, written) and written > oldest:
            kept[key] = (value, written)
    if len(kept) > MAX_ENTRIES:
        kept = {key: (_codes[key], generation) for key in _used}
    return kept


def _trusted(info: os.stat_result) -> bool:
    """The file is code this process will run: only a regular file of this user's that no one
    else may write (not a link: it is opened without following one)."""
    getuid = getattr(os, "getuid", None)
    mine = getuid is None or info.st_uid == getuid()
    return stat.S_ISREG(info.st_mode) and mine and not info.st_mode & 0o022


def _code(source: str, filename: str, mode: str) -> CodeType:
    key = (mode, filename, source)
    _used.add(key)
    code = _codes.get(key)
    if type(code) is not CodeType:  # (not cached, or a damaged entry: compiled again)
        code = _codes[key] = builtins.compile(source, filename, mode, 0, True)
        _state["added"] += 1
    return code


def config_var(name: str) -> str | None:
    """``sysconfig.get_config_var(name)``, a value fixed when this interpreter was built (the
    file is this interpreter's), read from the cache file when it holds it: asked of
    :mod:`sysconfig`, it imports the build's data (~1,000 variables) and works out all the
    others. Only a text or None is kept (the key ``("config", name, "")``, the value a 1-tuple);
    an entry of another shape is asked again."""
    key = ("config", name, "")
    _used.add(key)
    cached = _codes.get(key)
    if type(cached) is tuple and len(cached) == 1 and (cached[0] is None or type(cached[0]) is str):
        return cached[0]
    import sysconfig

    value = sysconfig.get_config_var(name)
    if value is not None and type(value) is not str:
        return None  # (not a text: not kept, and the caller asks sysconfig itself)
    _codes[key] = (value,)
    _state["added"] += 1
    return value


def compile_cached(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
    """``compile`` as :mod:`typing` calls it (a source, a file name and a mode), from the cache;
    any other call goes to the builtin as it came."""
    if args or kwargs or type(source) is not str or type(filename) is not str:
        return builtins.compile(source, filename, mode, *args, **kwargs)
    return _code(source, filename, mode)


def exec_cached(source: Any, globals: Any = None, locals: Any = None, /) -> None:  # noqa: A002
    """``exec`` as :mod:`dataclasses` calls it (a source text and its namespaces), the text's
    code from the cache; any other call goes to the builtin as it came."""
    if type(source) is not str or globals is None:
        caller = sys._getframe(1)
        scope = caller.f_globals if globals is None else globals
        builtins.exec(source, scope, caller.f_locals if locals is None else locals)
        return
    builtins.exec(_code(source, "<string>", "exec"), globals, locals)


def eval_cached(source: Any, globals: Any = None, locals: Any = None, /) -> Any:  # noqa: A002
    """``eval`` as :func:`collections.namedtuple` calls it (an expression and its namespace), the
    expression's code from the cache; any other call goes to the builtin as it came."""
    if type(source) is not str or globals is None:
        caller = sys._getframe(1)
        scope = caller.f_globals if globals is None else globals
        return builtins.eval(source, scope, caller.f_locals if locals is None else locals)
    return builtins.eval(_code(source, "<string>", "eval"), globals, locals)


_REGEX_COMPILER_KNOWN = (3, 11) <= sys.version_info[:2] <= (3, 13) and all(
    hasattr(m, name)
    for m, name in ((_re_compiler, "_code"), (_re_parser, "parse"), (_sre, "compile"))
)
""":func:`compile_regex_cached` does what ``re._compiler.compile`` does in these versions."""

_original_regex: list[Any] = []


def compile_regex_cached(pattern: Any, flags: Any = 0) -> Any:
    """``re._compiler.compile`` (a pattern not in :mod:`re`'s own cache of this process) with
    the parsed program from the cache: the parse and the code generation, written in Python, run
    once per machine; :func:`_sre.compile` makes the pattern object from them as before."""
    if type(pattern) not in (str, bytes) or flags & _re_compiler.SRE_FLAG_DEBUG:
        return _original_regex[0](pattern, flags)
    key = ("re", pattern, int(flags))
    _used.add(key)
    program = _codes.get(key)
    if program is not None:
        try:
            return _sre.compile(pattern, *program)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            pass  # a damaged entry: the program is made again below
    parsed = _re_parser.parse(pattern, flags)
    code = _re_compiler._code(parsed, flags)
    groupindex = parsed.state.groupdict
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    groups = parsed.state.groups - 1
    final_flags = flags | parsed.state.flags
    program = _codes[key] = (  # (plain ints: the opcodes are an int subclass)
        int(final_flags),
        [int(c) for c in code],
        groups,
        {str(k): int(v) for k, v in groupindex.items()},
        tuple(indexgroup),
    )
    _state["added"] += 1
    return _sre.compile(pattern, *program)


def save() -> None:
    """Write the cache file when this process compiled a text it did not hold (beside it and
    renamed into place: two processes at once never read half a file); a folder that cannot be
    written is left alone."""
    if not _state["added"] or read_only():
        return
    import tempfile  # (only a process that compiled something new writes)

    entries = kept_entries()
    generation = _state["generation"] + 1
    path = cache_path()
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".generated-code.", suffix=".tmp", dir=folder)
        try:
            codes = {key: value for key, (value, _) in entries.items()}
            written = {key: used for key, (_, used) in entries.items()}
            with os.fdopen(handle, "wb") as out:
                out.write(marshal.dumps((_version(), generation, codes, written)))
            os.replace(name, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
    except (OSError, ValueError):
        return
    _state["added"] = 0
    _state["generation"] = generation
    _written.update({key: generation for key in _used if key in _written})


def read_from_file() -> int:
    """How many compiled texts this process read from the cache file."""
    return _state["read"]
