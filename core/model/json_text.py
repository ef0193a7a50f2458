"""A model as JSON text for ``--json`` outputs, whatever strings it holds.

A file name that is not UTF-8 reaches Python as a string with lone surrogates (``\\udcff`` for
the byte ``0xff``: :pep:`383`), which pydantic and orjson refuse to write (and which no strict
JSON reader accepts even escaped). Every ``--json`` output goes through :func:`model_json`: the
fast serialiser first, and for such a value the undecodable bytes are written as the text
``\\xff`` (:func:`printable`), as ``ls -b`` shows them: valid UTF-8 JSON that every reader
takes, the rest of the name as it is.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from core.model.plain_json import plain_data


def model_json(model: BaseModel, *, indent: int | None = 2) -> str:
    """``model.model_dump_json(indent=indent)``, or the same data with non-UTF-8 strings
    escaped when pydantic cannot write them (:func:`model_json_bytes`, decoded)."""
    return model_json_bytes(model, indent=indent).decode()


def printable(text: str) -> str:
    """``text`` with each undecodable byte (a lone surrogate) as the four characters ``\\xNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "backslashreplace")
    return text


def printable_data(data: Any) -> Any:
    """``data`` (lists, dicts, strings …) with :func:`printable` applied to every string."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable_data(k): printable_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [printable_data(v) for v in data]
    return data


def model_json_bytes(
    model: BaseModel, *, indent: int | None = 2, replace: dict[str, Any] | None = None
) -> bytes:
    """``model.model_dump_json(indent=indent)`` as UTF-8 bytes, or the same data with non-UTF-8
    strings escaped when pydantic cannot write them; ``replace``: fields written in place of
    the model's (``model.model_copy(update=replace)``'s bytes, without the copy).

    Written from the model's fields (:func:`core.model.plain_json.plain_data`) by the writer
    pydantic's serialiser uses, so with the same bytes, without building the class's schema
    (3–5 M instructions a class, once, to write a document once); by pydantic's serialiser when
    a field is of a kind that module does not know."""
    data = plain_data(model, replace)
    if data is None:
        if replace:
            model = model.model_copy(update=replace)
        try:
            written: bytes = model.__pydantic_serializer__.to_json(model, indent=indent)
            return written
        except (PydanticSerializationError, UnicodeEncodeError):
            data = model.model_dump(mode="python")
    else:
        try:
            return to_json(data, indent=indent, inf_nan_mode="null")
        except (PydanticSerializationError, UnicodeEncodeError):
            # (a string that is not UTF-8: the model's own dump, as before, written escaped)
            data = (model.model_copy(update=replace) if replace else model).model_dump(
                mode="python"
            )
    return escaped_json(data, indent=indent).encode()


def escaped_json(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as JSON with undecodable bytes as ``\\xNN`` text (:func:`printable_data`);
    values JSON has no type for are written as their ``str``."""
    return json.dumps(printable_data(data), ensure_ascii=False, indent=indent, default=_plain)


def _plain(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
