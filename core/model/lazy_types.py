"""Model classes that a module's models name as field types, defined in modules of their own
and imported only when needed (:func:`lazy_field_types`)."""

from __future__ import annotations

import importlib
import sys

_LAZY_FIELD_TYPES: list[tuple[str, str, str]] = []
"""``(holder, name, module)`` of each :func:`lazy_field_types` name not defined yet."""


def lazy_field_types(holder: str, **modules: str) -> None:
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
    one when a value needs it."""
    _LAZY_FIELD_TYPES.extend((holder, name, module) for name, module in modules.items())


def define_lazy_field_types() -> None:
    """Import every :func:`lazy_field_types` class and define it in the module that names it,
    so that pydantic resolves the annotations (there, or nested in another model's schema)."""
    while _LAZY_FIELD_TYPES:
        holder, name, module = _LAZY_FIELD_TYPES.pop()
        setattr(sys.modules[holder], name, getattr(importlib.import_module(module), name))
