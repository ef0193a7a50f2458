"""A policy's fields by dotted name, read plainly from its ``model_dump`` (the reference the
tests hold :meth:`core.policy.Policy.by_name` to, and the values they change a field from)."""

from __future__ import annotations

from typing import Any


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A policy's ``model_dump`` by dotted field name (``per_tool`` overrides as one value)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key != "per_tool":
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
