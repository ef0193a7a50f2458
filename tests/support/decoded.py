"""A spy on :attr:`core.model.session.ToolResult.output`: the tests that hold a reader to measuring
an output held as UTF-8 (:class:`~core.model.session.Utf8Text`) without decoding it."""

from __future__ import annotations

import pytest

from core.model.session import ToolResult


def spy_on_decoding(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the outputs held as UTF-8 that :attr:`ToolResult.output` decodes from now
    on, as a list that grows while the test runs (``monkeypatch`` undoes the spy)."""
    decoded: list[int] = []
    original = ToolResult.output

    def spy(self: ToolResult) -> str:
        value = original.fget(self)  # type: ignore[attr-defined]
        if not isinstance(self.output_held, str):
            decoded.append(len(value))
        return value  # type: ignore[no-any-return]

    monkeypatch.setattr(ToolResult, "output", property(spy))
    return decoded
