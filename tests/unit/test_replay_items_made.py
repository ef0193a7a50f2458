"""The context items a setting walks (``Truncations.items``), made in C by one map over the
messages: the same items, message by message, as one ``Item`` per walked message (None for the
others), with the setting's truncated copies in their place; and an item is a plain identity-
compared value the cyclic collector does not track. The tool outputs a count of the messages
lists on the way equal those a pass of their own lists."""

from __future__ import annotations

import gc
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.model.session import Session
from core.model.tokens import get_counter, output_sizes
from core.policy import get_preset
from core.replay.engine import MessageTokens
from core.replay.state import Item
from core.replay.truncation import Truncations
from tests.support.builders import SessionBuilder


def _session(seed: int) -> Session:
    """A random session: turns, tool calls with outputs of any size (some over the preset's
    truncation limits), side-chain messages among them."""
    rng = random.Random(seed)
    script = SessionBuilder()
    context = 1_000
    for _turn in range(rng.randrange(1, 6)):
        script.user("turn " + "\xe9" * rng.randrange(0, 30))
        for _ in range(rng.randrange(0, 4)):
            side = rng.random() < 0.2
            script.call(rng.choice(["read", "bash"]), context=context, sidechain=side)
            lines = rng.choice([1, 20, 3_000])
            script.result("\n".join(["line \u2192"] * lines), sidechain=side)
            context += 500
        script.reply("ok", context=context)
    return script.session(window=50_000)


def _reference(
    session: Session, tokens: list[int], walked: list[bool], copies: dict[int, object]
) -> list[tuple[object, int, int] | None]:
    """One item per walked message, the truncated copy where there is one (as fields)."""
    made: list[tuple[object, int, int] | None] = []
    for j, message in enumerate(session.messages):
        if not walked[j]:
            made.append(None)
        else:
            made.append((copies.get(j, message), j, tokens[j]))
    return made


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    mask=st.lists(st.booleans(), min_size=1, max_size=64),
    preset=st.sampled_from(["seed", "claude-code", "codex"]),
    asked=st.lists(st.tuples(st.integers(-80, 80), st.integers(-80, 80)), max_size=4),
)
def test_items_equal_one_item_per_walked_message(
    seed: int, mask: list[bool], preset: str, asked: list[tuple[int, int]]
) -> None:
    """Asked for in any order (an item, a stretch, backwards, then all of them), the items are
    those of one item per walked message, made each time they are asked for (none is kept:
    an item per message of a 100 MB session was 9 MB at a one-shot command's peak); a
    truncated output's copy is made once, when first asked for."""
    session = _session(seed)
    n = len(session.messages)
    walked = [mask[j % len(mask)] for j in range(n)]
    policy = get_preset(preset)
    policy.estimator = "chars/4"
    tokens = MessageTokens(session)
    truncations = Truncations(session, tokens)
    truncation = truncations.of(policy)
    items = truncations.items(truncation, policy.estimator, walked)
    plain = tokens(policy.estimator)
    expected = _reference(
        session,
        [truncation.tokens[j] if j in truncation.messages else plain[j] for j in range(n)],
        walked,
        dict(truncation.messages),
    )
    assert len(items) == n

    def fields(item: Item | None) -> tuple[object, int, int] | None:
        return None if item is None else (item.message, item.index, item.tokens)

    for a, b in asked:  # (before the whole: each makes part of them)
        assert [fields(x) for x in items[a:b]] == expected[a:b]
        assert [fields(x) for x in items[b:a:-1]] == expected[b:a:-1]
        if -n <= a < n:
            assert fields(items[a]) == expected[a]
            again, first = items[a % n], items[a]
            if first is not None:  # (made again; a truncated output's copy is made once)
                assert again is not None and again is not first
                assert again.message is first.message
        else:
            with pytest.raises(IndexError):
                items[a]
    assert [fields(x) for x in items[0:n:2]] == expected[0:n:2]
    assert [fields(x) for x in items[:]] == [fields(x) for x in items]
    for item, want in zip(items, expected, strict=True):
        if want is None:
            assert item is None
        else:
            assert item is not None
            assert (item.message, item.index, item.tokens) == want
            assert item.message is want[0]  # the session's own message (or the copy), not a copy


def test_an_item_is_compared_by_identity_and_left_to_reference_counting() -> None:
    message = SessionBuilder().user("hello").session().messages[0]
    one, two = Item(message, 0, 3), Item(message, 0, 3)
    assert one != two and one == one  # identity, as an object without __eq__
    assert len({one, two}) == 2
    assert (one.message, one.index, one.tokens) == (message, 0, 3)
    # (one per message of a 100 MB session: none of them is tracked by the cyclic collector)
    assert not gc.is_tracked(one)


def _reference_outputs(
    session: Session,
) -> dict[tuple[str | None, bool], tuple[list[int], list[int]]]:
    """Each non-empty tool output's index and characters, by tool and truncated-by-tool."""
    groups: dict[tuple[str | None, bool], tuple[list[int], list[int]]] = {}
    for i, message in enumerate(session.messages):
        result = message.tool_result
        if result is not None and result.output:
            group = groups.setdefault((result.tool_name, result.truncated_by_tool), ([], []))
            group[0].append(i)
            group[1].append(len(result.output))
    return groups


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 100_000),
    estimator=st.sampled_from(["chars/4", "bytes/4", "ceil(chars/4)", "tiktoken:cl100k_base"]),
)
def test_outputs_listed_by_the_count_equal_those_listed_alone(seed: int, estimator: str) -> None:
    """The tool outputs a count lists on the way (what the truncations compare with their
    limits) are those a pass of their own lists, whatever the estimator; the count is the same
    with or without listing them."""
    session = _session(seed)
    want = _reference_outputs(session)
    tokens = MessageTokens(session)
    counted = tokens(estimator)
    assert counted == get_counter(estimator).messages_tokens(session.messages)
    listed = tokens.outputs
    assert listed is not None
    assert {g: (list(i), list(c)) for g, (i, c) in listed.items()} == want
    alone = output_sizes(session.messages)
    assert {g: (list(i), list(c)) for g, (i, c) in alone.items()} == want
    # the truncations take the listed ones from the count, or list them alone
    assert Truncations(session, tokens)._output_sizes() is listed
    plain = Truncations(session, lambda e: get_counter(e).messages_tokens(session.messages))
    assert plain._output_sizes() == alone
