"""``typing._type_check`` with a text's fast path answers what the standard library's does."""

from __future__ import annotations

import sys
import typing
from collections.abc import Iterator
from typing import Any, ForwardRef

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.cli import typing_check

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] not in typing_check.CHECKED_VERSIONS, reason="not installed here"
)


@pytest.fixture(scope="module", autouse=True)
def _installed() -> Iterator[None]:
    """Installed for this module's tests only: the worker's other tests see typing's own."""
    typing_check.install()
    yield
    typing_check.uninstall()


def _original() -> Any:
    """The standard library's ``_type_check``, which the installed one wraps."""
    return typing._type_check.__wrapped__  # type: ignore[attr-defined]


def _outcome(check: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    try:
        got = check(*args, **kwargs)
    except Exception as error:  # (the same error for the same argument)
        return ("error", type(error), str(error))
    if isinstance(got, ForwardRef):
        return (
            "ref",
            got.__forward_arg__,
            got.__forward_module__,
            got.__forward_is_class__,
            got.__forward_is_argument__,
            got.__forward_evaluated__,
        )
    return ("value", got)


TEXTS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "int",
            "list[int] | None",
            "Any",
            "ClassVar[int]",
            "Final",
            "Generic",
            "Required[Literal['int']]",
            "def",
            "1 +",
            "",
            "(int, str)",
        ]
    ),
)


def test_installed_once() -> None:
    fast = typing._type_check  # type: ignore[attr-defined]
    assert getattr(fast, "text_fast_path", False)
    typing_check.install()
    assert typing._type_check is fast  # type: ignore[attr-defined]
    assert _original() is not fast


@given(
    text=TEXTS,
    is_argument=st.booleans(),
    module=st.sampled_from([None, "pydantic_core.core_schema", "core.policy"]),
    special=st.booleans(),
)
def test_a_text_is_checked_as_the_standard_library_does(
    text: str, is_argument: bool, module: str | None, special: bool
) -> None:
    original = _original()
    args = (text, "a message.", is_argument, module)
    assert _outcome(typing._type_check, *args, allow_special_forms=special) == _outcome(  # type: ignore[attr-defined]
        original, *args, allow_special_forms=special
    )


@pytest.mark.parametrize(
    "arg",
    [int, None, typing.Any, typing.ClassVar, typing.ClassVar[int], typing.Generic, (int,), 3],
    ids=repr,
)
@pytest.mark.parametrize("special", [False, True])
def test_anything_else_is_asked_of_the_original(arg: Any, special: bool) -> None:
    original = _original()
    assert _outcome(typing._type_check, arg, "m.", allow_special_forms=special) == _outcome(  # type: ignore[attr-defined]
        original, arg, "m.", allow_special_forms=special
    )


def _schema_class() -> Any:
    from typing import Literal, NotRequired, Required

    from typing_extensions import TypedDict

    class Schema(TypedDict, total=False):  # (its annotations are texts: see the module's top)
        type: Required[Literal["int"]]
        gt: int | None
        ref: NotRequired[str]

    return Schema


def test_a_typed_dictionary_made_with_either_is_the_same() -> None:
    """What pydantic-core's schema dictionaries are: their annotations, required and optional
    keys as the standard library's check makes them."""
    fast = typing._type_check  # type: ignore[attr-defined]
    typing._type_check = _original()  # type: ignore[attr-defined]
    try:
        slow = _schema_class()
    finally:
        typing._type_check = fast  # type: ignore[attr-defined]
    quick = _schema_class()
    assert quick.__annotations__ == slow.__annotations__
    assert all(isinstance(v, ForwardRef) for v in quick.__annotations__.values())
    assert (quick.__required_keys__, quick.__optional_keys__) == (
        slow.__required_keys__,
        slow.__optional_keys__,
    )


def test_uninstalled_typing_has_its_own_check_back() -> None:
    fast = typing._type_check  # type: ignore[attr-defined]
    typing_check.uninstall()
    try:
        assert typing._type_check is fast.__wrapped__  # type: ignore[attr-defined]
        assert not getattr(typing._type_check, "text_fast_path", False)  # type: ignore[attr-defined]
        typing_check.uninstall()  # (a second time: nothing to give back)
        assert typing._type_check is fast.__wrapped__  # type: ignore[attr-defined]
    finally:
        typing_check.install()
    assert getattr(typing._type_check, "text_fast_path", False)  # type: ignore[attr-defined]
