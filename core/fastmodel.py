"""Pydantic models built from trusted values without validation: one way for the whole core.

Loaders and the replay build hundreds of thousands of models from values they have already typed
themselves; validating them again, or letting ``model_construct`` inspect every default factory on
every call, would dominate their time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

ModelT = TypeVar("ModelT", bound=BaseModel)

_defaults_cache: dict[type[BaseModel], tuple[dict[str, Any], dict[str, Callable[[], Any]]]] = {}
_new = object.__new__
_set = object.__setattr__


def _defaults(cls: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Callable[[], Any]]] | None:
    cached = _defaults_cache.get(cls)
    if cached is None:
        if cls.__pydantic_post_init__ or cls.__pydantic_root_model__:
            return None
        plain: dict[str, Any] = {}
        factories: dict[str, Callable[[], Any]] = {}
        for name, field in cls.model_fields.items():
            if field.default_factory is not None:
                factories[name] = field.default_factory  # type: ignore[assignment]
            elif field.default is not PydanticUndefined:
                plain[name] = field.default
        cached = (plain, factories)
        _defaults_cache[cls] = cached
    return cached


def construct_from(cls: type[ModelT], values: dict[str, Any]) -> ModelT:
    """:func:`construct` taking the values as a dict (which it does not keep or change)."""
    cached = _defaults(cls)
    if cached is None:
        return cls.model_construct(**values)
    plain, factories = cached
    data = {**plain, **values}
    if factories:
        for name, factory in factories.items():
            if name not in values:
                data[name] = factory()
    model: ModelT = _new(cls)
    _set(model, "__dict__", data)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def construct(cls: type[ModelT], **values: Any) -> ModelT:
    """Build a pydantic model from trusted, already-typed values, without validation.

    The same as ``cls.model_construct(**values)``, several times faster: pydantic's version
    inspects each default factory's signature on every call, which dominates a loader's time on
    large files. Fields left out get their default (factories are called per instance).
    """
    return construct_from(cls, values)


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


def copy_with(model: ModelT, update: dict[str, Any]) -> ModelT:
    """``model.model_copy(update=update)`` for a plain model (no extra fields, no private
    attributes; others go through ``model_copy`` itself): a shallow copy of ``__dict__`` with
    ``update`` applied and its keys added to the fields set, as ``model_copy`` does, without
    ``model_copy``'s ``copy.copy`` of each attribute."""
    if (
        getattr(model, "__pydantic_extra__", None) is not None
        or getattr(model, "__pydantic_private__", None) is not None
    ):
        return model.model_copy(update=update)
    copied = _new(type(model))
    _set_dict(copied, {**model.__dict__, **update})
    _set_fields_set(copied, model.__pydantic_fields_set__ | update.keys())
    _set_extra(copied, None)
    _set_private(copied, None)
    return copied
