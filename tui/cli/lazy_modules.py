"""Standard modules the libraries import as they load but a one-shot command seldom uses, run
when first used.

* :mod:`secrets` — pydantic's types import it for ``SecretStr`` comparisons; with it come
  :mod:`hmac`, :mod:`hashlib` and OpenSSL's library, :mod:`random` and :mod:`base64`;
* :mod:`tokenize` — :mod:`inspect` and :mod:`linecache` read source with it; its import compiles
  a regular expression whose text changes with each process's string hashing;
* ``msgspec.inspect`` — msgspec's type descriptions (its JSON schemas use them), made of ~40
  structs, which msgspec imports as it loads;
* :mod:`ntpath` — Windows paths, which :mod:`pathlib` imports for its ``PureWindowsPath``; as it
  runs it tries five imports from ``nt``, each failing after a search of every import path.
* :mod:`sysconfig` — the interpreter's build variables; :mod:`zoneinfo` imports it for its
  search path, which a one-shot command gives it from the cache folder instead
  (:func:`tui.cli.main._zoneinfo_from_cache`);
* :mod:`base64` — pydantic's types import it for their base64 fields' encoders.

The import statement gives the module object at once; its code runs at the first use of one of
its attributes (``from secrets import token_hex`` is one), as it would have run at the import,
and the module is from then on the one the import would have made. (The standard library's
:class:`importlib.util.LazyLoader` does not do here: in Python 3.11 the next ``import secrets``
anywhere reads the module's ``__spec__``, which runs it.)
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any

DEFERRED = ("secrets", "tokenize", "msgspec.inspect", "ntpath", "sysconfig", "base64")
"""The modules :func:`defer` runs on first use: the libraries that import them use none of
their attributes as they load."""

QUIET = frozenset(
    {"__spec__", "__name__", "__loader__", "__package__", "__path__", "__file__", "__cached__"}
)
"""What the import system (and :func:`inspect.getmodule`) reads of every module: these run
nothing (they are set already, as an import sets them before the module's code runs)."""

_LOCK = threading.RLock()
_RUNNING: set[str] = set()


class _OnFirstUse(ModuleType):
    """A module whose code has not run yet: the first attribute read runs it."""

    def __getattribute__(self, name: str) -> Any:
        if name not in QUIET:
            _run(self)
        return ModuleType.__getattribute__(self, name)


def _run(module: ModuleType) -> None:
    """Run ``module``'s code once (another thread waits for it; the module's own imports, in
    this thread, see it as a module being imported)."""
    with _LOCK:
        spec = ModuleType.__getattribute__(module, "__spec__")
        if type(module) is not _OnFirstUse or spec.name in _RUNNING:
            return
        _RUNNING.add(spec.name)
        try:
            spec.loader.exec_module(module)
        finally:
            _RUNNING.discard(spec.name)
            object.__setattr__(module, "__class__", ModuleType)  # (a plain module from now on)


def defer(names: tuple[str, ...] = DEFERRED) -> None:
    """Put each module of ``names`` not imported yet in :data:`sys.modules` with its code not
    run (one imported already, or not found, is left as it is)."""
    for name in names:
        if name in sys.modules:
            continue
        spec = _spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _OnFirstUse
        sys.modules[name] = module


def _spec(name: str) -> ModuleSpec | None:
    """Where ``name`` is, found without importing it or its package (a package that is imported
    already is left alone: it may have imported the module)."""
    package, _, _ = name.rpartition(".")
    if not package:
        return importlib.util.find_spec(name)
    if package in sys.modules:
        return None
    outer = importlib.util.find_spec(package)
    if outer is None or not outer.submodule_search_locations:
        return None
    return PathFinder.find_spec(name, list(outer.submodule_search_locations))


def deferred(name: str) -> bool:
    """Whether the module ``name`` is in :data:`sys.modules` with its code not run yet."""
    return type(sys.modules.get(name)) is _OnFirstUse
