"""A model's JSON bytes written from its fields, without pydantic's serialiser.

pydantic writes a model through the schema it builds for its class on first use: 3–5 M
instructions a class, 36 M for ``analyze``'s report (seven schemas) in a command whose whole
fixed cost is about 700 M, to write a document once. A report's models hold values the core
typed itself (built with :func:`core.model.fastmodel.build`), so each class's fields are turned
into plain lists and dicts here, by an encoder made once from the field annotations pydantic
already resolved, and written by ``pydantic_core.to_json``: the same writer, so the same bytes
(a float field's integer written as a float, infinities and NaN as ``null``, as the model's
serialiser does).

Only the annotations the reports use are known (``int``, ``float``, ``str``, ``bool``, a
string or int enum, ``Literal``, ``X | None``, ``list[X]``, ``dict[str, X]``, a model; bounds;
a plain field serialiser): a class with any other, or with aliases, excluded or computed fields,
is written by pydantic (:func:`core.model.json_text.model_json_bytes` falls back to it), as is a
model holding a string that is not UTF-8.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable
from enum import IntEnum, StrEnum
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic._internal._decorators import inspect_field_serializer

from core.model.lazy_types import define_lazy_field_types

Encoder = Callable[[Any], Any]
"""A field value to the plain data ``to_json`` writes as pydantic's serialiser would."""

_PLAIN_TYPES = (int, str, bool, type(None))

_BOUNDS = (Ge, Gt, Le, Lt)
"""A field's constraints that only validation reads."""


class Unsupported(TypeError):
    """An annotation (or a field's settings) this module does not write: pydantic does."""


_MODEL_ENCODERS: dict[type[BaseModel], Callable[[BaseModel], dict[str, Any]]] = {}


def plain_data(model: BaseModel, replace: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """``model`` as the plain data pydantic's serialiser would write (with the fields of
    ``replace`` in place of the model's, as ``model.model_copy(update=replace)`` holds them), or
    None when a field of its class, or of a model under it, is not one this module knows."""
    try:
        data = model_encoder(type(model))(model)
        if replace:
            cls = type(model)
            data.update({name: _encoder_of_field(cls, name)(v) for name, v in replace.items()})
    except Unsupported:
        return None
    return data


def model_encoder(cls: type[BaseModel]) -> Callable[[BaseModel], dict[str, Any]]:
    """The encoder of ``cls``'s models: the fields its dict holds, in the dict's order, each
    made plain (:class:`Unsupported` when one is not known). A class with a
    ``fill_lazy_fields`` method (fields built on first use: a replay's result holds its points
    as columns until asked) has it called first, as its ``model_dump_json`` would, wherever the
    model stands in a document."""
    encode = _MODEL_ENCODERS.get(cls)
    if encode is None:
        encode = _make_model_encoder(cls)
        fill = getattr(cls, "fill_lazy_fields", None)
        if fill is not None:
            encode = _filled_first(fill, encode)
        _MODEL_ENCODERS[cls] = encode
    return encode


def _filled_first(
    fill: Callable[[Any], None], encode: Callable[[BaseModel], dict[str, Any]]
) -> Callable[[BaseModel], dict[str, Any]]:
    def encode_filled(model: BaseModel) -> dict[str, Any]:
        fill(model)
        return encode(model)

    return encode_filled


def _make_model_encoder(cls: type[BaseModel]) -> Callable[[BaseModel], dict[str, Any]]:
    if cls.model_computed_fields or cls.__pydantic_decorators__.model_serializers:
        raise Unsupported(f"{cls.__name__}: a computed field or a model serialiser")
    if any(key.startswith("ser_") or key == "use_enum_values" for key in cls.model_config):
        raise Unsupported(f"{cls.__name__}: serialisation settings of its own")
    fields = {name: _encoder_of_field(cls, name) for name in cls.model_fields}
    # The model's own dict in its own order, as pydantic writes it (a model built from a dict
    # keeps that dict's order; a key that is not a field is left out).
    if all(encode is _same for encode in fields.values()):

        def encode_plain(model: BaseModel) -> dict[str, Any]:
            return {name: value for name, value in model.__dict__.items() if name in fields}

        return encode_plain

    def encode_model(model: BaseModel) -> dict[str, Any]:
        return {
            name: fields[name](value) for name, value in model.__dict__.items() if name in fields
        }

    return encode_model


def _encoder_of_field(cls: type[BaseModel], name: str) -> Encoder:
    info = cls.model_fields[name]
    if info.exclude or info.serialization_alias is not None or info.alias is not None:
        raise Unsupported(f"{cls.__name__}.{name}: an alias or an excluded field")
    for decorator in cls.__pydantic_decorators__.field_serializers.values():
        if name in decorator.info.fields:
            return _field_serializer(cls, name, decorator.func, decorator.info)
    if not all(type(rule) in _BOUNDS for rule in info.metadata):
        raise Unsupported(f"{cls.__name__}.{name}: annotations other than bounds")
    if isinstance(info.annotation, typing.ForwardRef):
        return _resolved_when_needed(cls, name)
    return _encoder(info.annotation)


_EMPTY = (type(None), list, dict)


def _resolved_when_needed(cls: type[BaseModel], name: str) -> Encoder:
    """The encoder of a field whose type pydantic left unresolved (a
    :func:`~core.model.fastmodel.lazy_field_types` class): None, an empty list or dict is
    written as it is, as any encoder would write it; the first other value resolves the type."""
    resolved: list[Encoder] = []

    def encode(value: Any) -> Any:
        if not resolved:
            if type(value) in _EMPTY and not value:
                return value
            resolved.append(_encoder(_field_type(cls, name)))
        return resolved[0](value)

    return encode


def _field_type(cls: type[BaseModel], name: str) -> Any:
    """The type of field ``name`` of ``cls``, evaluated from its string annotation in the
    module of the class that declares it."""
    for owner in cls.__mro__:
        annotation = vars(owner).get("__annotations__", {}).get(name)
        if annotation is not None:
            define_lazy_field_types(owner.__module__)  # (its own: not every holder's)
            while isinstance(annotation, str):  # (quoted under postponed evaluation: twice)
                annotation = eval(annotation, vars(sys.modules[owner.__module__]))
            return annotation
    raise Unsupported(f"{cls.__name__}.{name}: no annotation")


def _field_serializer(cls: type[BaseModel], name: str, func: Any, info: Any) -> Encoder:
    """A plain serialiser without an info argument, whose result is taken as plain data (as
    the reports' are: a column written as a list)."""
    if info.mode != "plain" or inspect_field_serializer(func, "plain") != (True, False):
        raise Unsupported(f"{cls.__name__}.{name}: a field serialiser of another kind")
    # (called with the model as ``self`` in pydantic; the one used here reads only its value)
    return lambda value: func(None, value)


def _same(value: Any) -> Any:
    return value


def _float(value: Any) -> Any:
    return float(value) if type(value) is int else value


def _encoder(annotation: Any) -> Encoder:
    """The encoder of one annotation (:func:`_same` where the value is written as it is)."""
    if annotation in _PLAIN_TYPES:
        return _same
    if annotation is float:
        return _float
    if isinstance(annotation, type) and issubclass(annotation, (StrEnum, IntEnum)):
        return _same  # (written as its value by both)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_encoder(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal and all(type(a) in (str, int, bool) for a in args):
        return _same
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        encode = _encoder(args[0] if args[1] is type(None) else args[1])
        if encode is _same:
            return _same
        return lambda value: None if value is None else encode(value)
    if origin is list and len(args) == 1:
        item = _encoder(args[0])
        if item is _same:
            return _same
        return lambda values: [item(value) for value in values]
    if origin is dict and len(args) == 2 and args[0] is str:
        value = _encoder(args[1])
        if value is _same:
            return _same
        return lambda values: {key: value(v) for key, v in values.items()}
    raise Unsupported(f"annotation {annotation!r}")
