"""Model fields whose types are defined in modules imported only when needed
(:func:`core.model.fastmodel.lazy_field_types`): the holder's class is created without them, and
validation, the JSON writer, the schema and the field reference all see the real type."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from core.model.fastmodel import Documented, build_filled, documented
from core.model.lazy_types import define_lazy_field_types, lazy_field_types
from core.model.plain_json import plain_data

if TYPE_CHECKING:
    from tests.support.lazy_item import LazyItem

ITEM_MODULE = "tests.support.lazy_item"
sys.modules.pop(ITEM_MODULE, None)
lazy_field_types(__name__, LazyItem=ITEM_MODULE)


class Holder(Documented):
    """Items, maybe none, and maybe a chosen one."""

    items: list[LazyItem] = Field(default_factory=list)
    """The items."""
    chosen: LazyItem | None = None
    """The one chosen."""
    count: int = 0
    """How many."""


class Written(Documented):
    """A holder as the JSON writer meets it, with its items' class not made yet."""

    items: list[LazyItem] = Field(default_factory=list)
    chosen: LazyItem | None = None


HOLDER_CREATED_WITHOUT_ITEMS = ITEM_MODULE not in sys.modules


def test_the_holder_is_created_without_its_items_class() -> None:
    assert HOLDER_CREATED_WITHOUT_ITEMS
    assert list(Holder.model_fields) == ["items", "chosen", "count"]


def test_empty_fields_are_written_without_the_class() -> None:
    """None and an empty list are written as they are: the class is not needed for them."""
    data = plain_data(build_filled(Written, {"count": 3}))
    assert data == {"items": [], "chosen": None}


@given(
    st.lists(st.tuples(st.text(), st.floats(allow_nan=False, allow_infinity=False)), max_size=3),
    st.booleans(),
    st.integers(),
)
def test_the_json_writer_matches_pydantic(
    items: list[tuple[str, float]], chosen: bool, count: int
) -> None:
    define_lazy_field_types()
    from tests.support.lazy_item import LazyItem

    made = [LazyItem(name=name, weight=weight) for name, weight in items]
    fields = {"items": made, "chosen": made[0] if chosen and made else None, "count": count}
    holder = build_filled(Holder, fields)
    assert plain_data(holder) == holder.model_dump(mode="json")
    assert Holder.model_validate(holder.model_dump()) == holder


def test_validation_schema_and_reference_see_the_real_type() -> None:
    holder = Holder.model_validate({"items": [{"name": "a"}], "chosen": {"name": "b"}})
    from tests.support.lazy_item import LazyItem

    assert holder.items == [LazyItem(name="a")]
    assert type(holder.chosen) is LazyItem
    fields = documented(Holder)
    assert fields["items"].annotation == list[LazyItem]
    assert fields["chosen"].annotation == LazyItem | None
    assert fields["items"].description == "The items."
    schema = Holder.model_json_schema()
    assert schema["properties"]["items"]["items"] == {"$ref": "#/$defs/LazyItem"}
    assert schema["$defs"]["LazyItem"] == LazyItem.model_json_schema()


MOVED = {
    "core.model.session": ["WindowChange"],
    "core.insights.cost": ["CallCost"],
    "core.replay.results": ["CallPoint", "MessageState"],
    "core.insights.estimate_calibration": ["EstimateCalibration", "MeasuredPoint", "ModelTotal"],
}


def test_a_moved_class_is_still_importable_from_its_old_module_and_nothing_else_is() -> None:
    for module_name, names in MOVED.items():
        module = importlib.import_module(module_name)
        for name in names:
            moved = getattr(module, name)
            assert moved.__name__ == name and moved.__module__ != module_name
        with pytest.raises(AttributeError, match=f"module '{module_name}' has no attribute 'Nope'"):
            module.Nope  # noqa: B018
