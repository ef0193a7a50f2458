"""Pydantic models, the core's one way: built from trusted values without validation, and
documented by their attribute docstrings read only when a description is asked for.

The replay builds tens of thousands of result models (events, message states, points, check log
entries) from values it has already typed itself; validating them again would dominate its time.
(Messages are not pydantic models at all: see :mod:`core.model.session`.)

Every field of a result model or a policy has a docstring under it: its description in the JSON
schema, in docs/REPLAY_API.md, in Parquet metadata and in the policy panel's help. Pydantic can
read them as it creates each class (``use_attribute_docstrings``), but that walks the stack and
tokenises each class's source: a tenth of ``ctxscope analyze``'s start-up for descriptions it
never shows. :func:`documented` reads them when they are first asked for instead.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo

from core.model.lazy_types import rebuild_defining_lazy_types

ModelT = TypeVar("ModelT", bound=BaseModel)


class Documented(BaseModel):
    """Result models: each field's docstring is its description in the JSON schema.

    (Here, not beside the replay's results, so that a module whose models are not the replay's
    — the breakdown, the cost, the sub-agents' figures — does not load the replay's models and
    the policy's to define its own: ``breakdown`` uses none of them.)

    No protected namespaces: pydantic would check each field's name against them as it
    creates each class (a test checks that no field hides a ``BaseModel`` member instead)."""

    model_config = ConfigDict(defer_build=True, protected_namespaces=())
    model_rebuild = classmethod(rebuild_defining_lazy_types)  # type: ignore[pydantic-field]


_new = object.__new__

# The slots every pydantic model has, set through their descriptors: what object.__setattr__
# does, without looking each name up along the model's classes.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}
"""Each model's field names: the fields set of every model :func:`build` makes."""


def build(cls: type[ModelT], fields: dict[str, Any]) -> ModelT:
    """A model from complete, already-typed ``fields`` (every field present; the dict is kept,
    not copied), without validation or default handling.

    The models of a class built this way share one fields set: pydantic only ever adds a field's
    name to it (on assignment; a copy gets a set of its own), and each is there already. Many
    thousands of models, one set: one object for the garbage collector to walk, not thousands.
    """
    names = _ALL_FIELDS.get(cls)
    if names is None:
        names = _ALL_FIELDS[cls] = set(cls.model_fields)
    obj = _new(cls)
    _set_dict(obj, fields)
    _set_fields_set(obj, names)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def build_filled(cls: type[ModelT], fields: dict[str, Any]) -> ModelT:
    """:func:`build` from trusted ``fields`` that may leave out fields with defaults: each
    left out takes its default (a factory's called), as validation would give it; the fields
    in their declared order."""
    values: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        values[name] = (
            fields[name] if name in fields else info.get_default(call_default_factory=True)
        )
    return build(cls, values)


def resolved_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """``model.model_fields``, each field's annotation its type: a field of a
    :func:`~core.model.lazy_types.lazy_field_types` type (left unresolved as the class was
    created) is resolved first, by building the model."""
    if not model.__pydantic_fields_complete__:
        model.model_rebuild()
    return model.model_fields


_DOCUMENTED: set[type[BaseModel]] = set()


def documented(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """``model.model_fields``, each field's description set from the docstring under it (in
    ``model`` or the class it inherits the field from) unless the field already has one. The
    model's schema is rebuilt if it was built already, so its JSON schema has them too. A field
    of a :func:`~core.model.lazy_types.lazy_field_types` type is resolved first (the model is
    built)."""
    if model not in _DOCUMENTED:
        resolved_fields(model)
        docs: dict[str, str] = {}
        for cls in reversed(model.__mro__):  # a subclass's docstring wins over its base's
            if issubclass(cls, BaseModel) and cls is not BaseModel:
                docs.update(_attribute_docstrings(cls))
        fields = model.model_fields
        changed = False
        for name, info in fields.items():
            if info.description is None and name in docs:
                info.description = docs[name]
                changed = True
        if changed and model.__pydantic_complete__:
            model.model_rebuild(force=True)
        _DOCUMENTED.add(model)
    return model.model_fields


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of the annotated attributes in ``cls``'s own body."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source (a class made at run time): no descriptions
        return {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs
