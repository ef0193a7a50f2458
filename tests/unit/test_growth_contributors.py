"""The biggest messages of a growth and its tool outputs (:func:`what_filled`): ranked as
``heapq.nlargest`` ranks them (largest first, the earlier of equals first), and built from
typed values without validation (the causes of a session's compactions make thousands)."""

from __future__ import annotations

from heapq import nlargest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.insights.diagnosis import Contributor, ToolShare, what_filled
from tests.support.builders import SessionBuilder


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "read", "grep"]), st.integers(0, 4)), max_size=20),
    st.integers(min_value=-1, max_value=8),
)
def test_the_contributors_are_ranked_as_nlargest_ranks_them(
    kinds: list[tuple[str, int]], top: int
) -> None:
    builder = SessionBuilder()
    tokens: list[int] = []
    for kind, size in kinds:
        if kind == "user":
            builder.user(f"u{len(tokens)}")
            tokens.append(size)
        else:
            builder.call(kind).result("out")
            tokens.extend([size, size + 1])
    session = builder.session()
    growth, contributors, shares = what_filled(session, tokens, 0, len(tokens), top)
    ranked = nlargest(max(top, 0), range(len(tokens)), key=tokens.__getitem__)
    assert [c.message_index for c in contributors] == ranked
    for c in contributors:
        assert c == Contributor.model_validate(c.model_dump())
    for s in shares:
        assert s == ToolShare.model_validate(s.model_dump())
    assert growth == sum(tokens)


def test_the_contributors_and_shares_are_built_without_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(self: Any, **data: Any) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(Contributor, "__init__", refused)
    monkeypatch.setattr(ToolShare, "__init__", refused)
    session = SessionBuilder().user("go").call("read").result("x").session()
    growth, contributors, shares = what_filled(session, [3, 1, 7], 0, 3, 2)
    assert growth == 11
    assert [(c.message_index, c.role, c.tool_name, c.tokens) for c in contributors] == [
        (2, "tool", "read", 7),
        (0, "user", None, 3),
    ]
    assert [(s.tool_name, s.outputs, s.tokens, s.share) for s in shares] == [("read", 1, 7, 7 / 11)]
