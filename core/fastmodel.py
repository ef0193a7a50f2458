"""Pydantic result models built from trusted values without validation: one way for the core.

The replay builds tens of thousands of result models (events, message states, points, check log
entries) from values it has already typed itself; validating them again would dominate its time.
(Messages are not pydantic models at all: see :mod:`core.models`.)
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)

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
