"""The data model: context figures per provider convention, turns and model calls."""

from core.model.session import Message, Role, Session, SourceFormat, Usage, UsageConvention


def test_claude_context_is_the_prompt_before_the_reply() -> None:
    usage = Usage(
        input=10, cache_read=1000, cache_write=200, output=50, convention=UsageConvention.ANTHROPIC
    )
    assert usage.prompt_tokens == 1210
    assert usage.context_tokens == 1210
    assert usage.context_after_reply == 1260


def test_codex_pi_opencode_compare_the_total_after_the_reply() -> None:
    for convention in (UsageConvention.OPENAI, UsageConvention.PI, UsageConvention.OPENCODE):
        usage = Usage(input=5, cache_read=95, output=20, total=120, convention=convention)
        assert usage.prompt_tokens == 100
        assert usage.context_tokens == 120
    # without a recorded total the parts are summed
    assert (
        Usage(
            input=1, cache_read=174218, cache_write=519, output=266, convention=UsageConvention.PI
        ).context_tokens
        == 175004
    )


def test_turns_start_only_at_real_user_messages() -> None:
    messages = [
        Message(index=0, id="0", role=Role.USER, text="fix the bug"),
        Message(index=1, id="1", role=Role.ASSISTANT, text="ok"),
        Message(index=2, id="2", role=Role.USER, text="summary", summary=True),
        Message(index=3, id="3", role=Role.USER, text="go on", synthetic=True),
        Message(index=4, id="4", role=Role.USER, text="<env>", meta=True),
        Message(index=5, id="5", role=Role.USER, text="thanks"),
        Message(index=6, id="6", role=Role.ASSISTANT, text="sum", summary=True),
    ]
    session = Session(id="s", format=SourceFormat.CTXSCOPE, messages=messages)
    assert session.turn_starts() == [0, 5]
    assert [m.index for m in session.model_calls()] == [1]
