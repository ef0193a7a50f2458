"""The columns of many usages' figures (``usage_columns``, ``context_column`` and the usable forms
of ``core.algorithms.overflow``) say of each usage what its properties and ``usable_usage`` say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.algorithms.overflow import usable_columns, usable_context, usable_usage
from core.model import session
from core.model.session import Message, Role, Usage, UsageColumns, UsageConvention

replace, usage_columns, context_column, prompt_column = (
    session.replace,
    session.usage_columns,
    session.context_column,
    session.prompt_column,
)

_COUNTS = st.integers(min_value=0, max_value=2**40) | st.just(0)
_USAGES = st.builds(
    Usage,
    input=_COUNTS,
    output=_COUNTS,
    cache_read=_COUNTS,
    cache_write=_COUNTS,
    reasoning=_COUNTS,
    total=st.none() | _COUNTS,
    convention=st.sampled_from(UsageConvention),
)
_SEQUENCES = st.lists(st.none() | _USAGES, max_size=30)
_ONE_CONVENTION = st.sampled_from(UsageConvention).flatmap(
    lambda convention: st.lists(
        st.none() | _USAGES.map(lambda usage: replace(usage, convention=convention)), max_size=30
    )
)


def _by_properties(usages: list[Usage | None]) -> UsageColumns:
    return UsageColumns(
        [None if u is None else u.context_tokens for u in usages],
        [None if u is None else u.prompt_tokens for u in usages],
        [None if u is None else u.context_after_reply for u in usages],
        [None if u is None else u.convention for u in usages],
    )


def _usable_by_message(usages: list[Usage | None]) -> UsageColumns:
    kept = [
        usable_usage(Message(index=i, id=str(i), role=Role.ASSISTANT, usage=usage))
        for i, usage in enumerate(usages)
    ]
    return _by_properties(kept)


@given(_SEQUENCES | _ONE_CONVENTION)
def test_the_columns_are_the_properties_of_each_usage(usages: list[Usage | None]) -> None:
    assert usage_columns(usages) == _by_properties(usages)
    assert context_column(usages) == _by_properties(usages).context


@given(_SEQUENCES | _ONE_CONVENTION)
def test_the_usable_columns_are_what_usable_usage_keeps(usages: list[Usage | None]) -> None:
    assert usable_columns(usages) == _usable_by_message(usages)
    assert usable_context(usages) == _usable_by_message(usages).context


def test_every_convention_alone_and_mixed() -> None:
    """Each convention's figures (a total given or not, an all-zero usage), alone in a session
    and beside the others: the column of a session of one side of the reply is taken whole."""
    usages: list[Usage | None] = []
    for convention in UsageConvention:
        one = [
            Usage(input=10, output=3, cache_read=100, cache_write=7, convention=convention),
            Usage(input=10, output=3, cache_read=100, total=500, convention=convention),
            Usage(convention=convention),
            None,
        ]
        assert usage_columns(one) == _by_properties(one)
        assert usable_columns(one) == _usable_by_message(one)
        assert usable_context(one) == _usable_by_message(one).context
        usages += one
    assert usage_columns(usages) == _by_properties(usages)
    assert usable_columns(usages) == _usable_by_message(usages)
    assert usable_context(usages) == _usable_by_message(usages).context


def test_the_columns_are_new_lists() -> None:
    """The context column is not the prompt's list itself (a reader may change one)."""
    usages: list[Usage | None] = [Usage(input=1), Usage(input=2)]
    columns = usage_columns(usages)
    assert columns.context == columns.prompt
    assert columns.context is not columns.prompt


def test_the_placing_reads_the_message_flags_the_properties_say() -> None:
    """``Calls`` reads each message's ``message_flag`` (the builder's column, or worked out):
    the main conversation, ``Message.is_model_call`` and ``is_turn_start``, for every role and
    flag."""
    from core.model.session import FLAG_CALL, FLAG_MAIN, FLAG_TURN, message_flag

    for role in Role:
        for flags in range(16):
            message = Message(
                index=0,
                id="m",
                role=role,
                summary=bool(flags & 1),
                synthetic=bool(flags & 2),
                meta=bool(flags & 4),
                sidechain=bool(flags & 8),
            )
            flag = message_flag(message)
            assert bool(flag & FLAG_MAIN) is not message.sidechain
            assert bool(flag & FLAG_CALL) is (message.is_model_call and not message.sidechain)
            assert bool(flag & FLAG_TURN) is (message.is_turn_start and not message.sidechain)


@given(st.lists(_USAGES, max_size=30))
def test_the_prompt_column_is_each_usage_s_prompt_tokens(usages: list[Usage]) -> None:
    inputs = [u.input for u in usages]
    reads = [u.cache_read for u in usages]
    writes = [u.cache_write for u in usages]
    assert list(prompt_column(inputs, reads, writes)) == [u.prompt_tokens for u in usages]
