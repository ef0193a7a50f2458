""":func:`typing._type_check` of an annotation's text, without the checks that cannot fail on one.

As a one-shot command starts, the libraries' typed dictionaries and generic aliases hand
:mod:`typing` ~1,100 annotations to check, most of them text (pydantic-core's schema
dictionaries are written under ``from __future__ import annotations``: 627 texts in 84 classes).
For a text, ``_type_check`` makes its :class:`typing.ForwardRef`, then compares that reference
with eight special forms (``Any``, ``NoReturn``, ``Generic`` …: eight calls of
``ForwardRef.__eq__``, each answering ``NotImplemented``) and asks whether it is a generic alias,
a special form or a tuple. A reference is none of them, so the answer is always the reference
itself; :func:`install` gives it at once for a ``str`` and asks the original for anything else.
"""

from __future__ import annotations

import sys
import typing
from typing import Any, ForwardRef

CHECKED_VERSIONS = frozenset({(3, 11)})
"""The Pythons whose ``_type_check`` was read to answer a text so (their reference is made by
``_type_convert`` as here, and nothing after it can turn it into anything else)."""


def install() -> None:
    """Make ``typing._type_check`` answer a text's reference directly (once; another Python's
    is left as it is)."""
    original = getattr(typing, "_type_check", None)
    if (
        original is None
        or getattr(original, "text_fast_path", False)
        or sys.version_info[:2] not in CHECKED_VERSIONS
    ):
        return

    def _type_check(
        arg: Any,
        msg: Any,
        is_argument: bool = True,
        module: Any = None,
        *,
        allow_special_forms: bool = False,
    ) -> Any:
        if type(arg) is str:
            return ForwardRef(arg, module=module, is_class=allow_special_forms)
        return original(arg, msg, is_argument, module, allow_special_forms=allow_special_forms)

    _type_check.text_fast_path = True  # type: ignore[attr-defined]
    _type_check.__wrapped__ = original  # type: ignore[attr-defined]
    typing._type_check = _type_check  # type: ignore[attr-defined]


def uninstall() -> None:
    """Give :mod:`typing` its own ``_type_check`` back (what :func:`install` wrapped)."""
    check = getattr(typing, "_type_check", None)
    if getattr(check, "text_fast_path", False):
        typing._type_check = check.__wrapped__  # type: ignore[attr-defined,union-attr]
