"""Model classes that a module's models name as field types, defined in modules of their own
and imported only when needed (:func:`lazy_field_types`)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

_PENDING: dict[str, dict[str, str]] = {}
"""Per holder module, ``{name: module}`` of each :func:`lazy_field_types` class not defined
there yet."""


def lazy_field_types(holder: str, **modules: str) -> Callable[[str], Any]:
    """Model classes that fields of module ``holder``'s models name, each defined in its own
    module (``name=module``) and imported only when needed: a command that never builds one
    (``analyze`` builds no call's :class:`~core.insights.call_cost.CallCost`, no sub-agent's
    figures unless the session has some) does not create its class (~0.2 M instructions a
    field).

    ``holder``'s models name them in string annotations its module does not define at first:
    pydantic leaves those fields unresolved as it creates the classes. It needs their types
    only to validate, serialise or describe a model, and calls the model's ``model_rebuild``
    first (:meth:`core.model.fastmodel.Documented.model_rebuild`,
    :meth:`core.model.session.Session.model_rebuild`), which defines them in ``holder`` with
    :func:`define_lazy_field_types`; the JSON writer (:mod:`core.model.plain_json`) resolves
    one when a value needs it.

    Returns ``holder``'s module ``__getattr__`` (:func:`moved_names`): the classes are still
    importable from ``holder``, which defined them before."""
    _PENDING.setdefault(holder, {}).update(modules)
    return moved_names(holder, **modules)


def moved_names(module: str, **homes: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: each name of ``homes`` (``name=home module``),
    which ``module`` defined before, is still importable from it, taken from its home when
    first asked for (its class created then, not as ``module`` is imported)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__


def rebuild_defining_lazy_types(
    cls: type[BaseModel],
    *,
    force: bool = False,
    raise_errors: bool = True,
    _parent_namespace_depth: int = 2,
    _types_namespace: Any = None,
) -> bool | None:
    """``model_rebuild`` of a pydantic model whose fields (or whose subclasses' fields) name
    :func:`lazy_field_types` classes (``model_rebuild = classmethod(...)`` in its class body):
    pydantic's, once every such class is defined. Pydantic calls it before the model's first
    validation, schema or serialisation. (A function, not a mixin: a further base would make
    the creation of every model class slower.)"""
    define_lazy_field_types()
    rebuild: Any = BaseModel.model_rebuild.__func__  # type: ignore[attr-defined]
    result: bool | None = rebuild(
        cls,
        force=force,
        raise_errors=raise_errors,
        _parent_namespace_depth=_parent_namespace_depth + 1,
        _types_namespace=_types_namespace,
    )
    return result


def define_lazy_field_types(holder: str | None = None) -> None:
    """Import the :func:`lazy_field_types` classes (of every holder, or of ``holder`` only) and
    define each in the module that names it, so that pydantic resolves the annotations (there,
    or nested in another model's schema) and that module's code can use them."""
    for named_by in list(_PENDING) if holder is None else [holder]:
        for name, module in _PENDING.pop(named_by, {}).items():
            setattr(sys.modules[named_by], name, getattr(importlib.import_module(module), name))
