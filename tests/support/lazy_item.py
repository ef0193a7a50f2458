"""A model defined in a module of its own, for the tests of
:func:`core.model.fastmodel.lazy_field_types` (tests/unit/test_lazy_field_types.py)."""

from core.model.fastmodel import Documented


class LazyItem(Documented):
    """One item, named by a lazily typed field."""

    name: str
    """The item's name."""
    weight: float = 0.0
    """How heavy it is."""
