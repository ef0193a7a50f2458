"""Ready-made sessions for the tests, built with :class:`builders.SessionBuilder`.

Everything is deterministic (fixed ids, figures and timestamps), so what the tests see never
changes from run to run.
"""

from __future__ import annotations

from typing import Any

from core.model.session import Session, SourceFormat, to_record
from core.policy import Policy
from tests.support.builders import START, SessionBuilder, text_of_tokens


def late_overflow_session() -> Session:
    """Window 100k: a 60,000-token grep output arrives after a check at 42k and overflows."""
    return (
        SessionBuilder()
        .user("find the bug")
        .call("read", context=1_000)
        .result(text_of_tokens(40_000, "r"))
        .call("bash", context=41_100)
        .result("small")
        .call("grep", context=42_000)
        .result(text_of_tokens(60_000, "g"))
        .reply("too late", context=102_100)
        .session(window=100_000)
    )


def claude_like_session(
    turns: int = 6,
    *,
    calls_per_turn: int = 2,
    output_lines: int = 40,
    big_every: int = 3,
    big_lines: int = 3000,
    window: int | None = 200_000,
    prompt_start: int = 12_000,
    prompt_step: int = 9_000,
    with_compaction: bool = False,
    model: str = "claude-sonnet-4-5",
    session_id: str = "test-session",
) -> Session:
    """A Claude-like session: each turn a user prompt, then calls that read files with bash.

    Every ``big_every``-th tool output has ``big_lines`` lines (so truncation limits bite). The
    recorded prompt (a cache read but for 3 tokens) grows by ``prompt_step`` per call from
    ``prompt_start``; with the default window of 200,000 a session of 12+ calls overflows near
    its end. ``with_compaction``: a recorded auto compaction half-way.
    """
    builder = SessionBuilder(cached=True, model=model, start=START)
    prompt = prompt_start
    outputs = 0
    for turn in range(turns):
        if with_compaction and turn == turns // 2:
            builder.compaction(
                "Summary of the work so far.",
                text="This session is being continued from a previous conversation. Summary: "
                "the user asked to fix the parser; tests were run; two files were edited.",
                tokens_before=prompt,
                tokens_after=9_000,
            )
            prompt = 9_000
        builder.user(f"Turn {turn}: please look at module_{turn}.py and fix the failing test")
        for k in range(calls_per_turn):
            builder.call(
                "bash",
                {"command": f"cat module_{turn}.py"},
                text=f"I'll read module_{turn}.py (step {k}).",
                context=prompt,
                output=120,
            )
            outputs += 1
            lines = big_lines if outputs % big_every == 0 else output_lines
            builder.result(
                "\n".join(
                    f"{turn}:{k}:{n} def function_{n}(x): return x * {n}" for n in range(lines)
                )
            )
            prompt += prompt_step
        builder.reply(
            f"Fixed module_{turn}.py: the loop bound was off by one.", context=prompt, output=80
        )
        prompt += 400
    return builder.session(
        id=session_id,
        fmt=SourceFormat.CLAUDE_CODE,
        model=model,
        window=window,
        window_source="table" if window else None,
        project="/home/dev/project",
    )


def growing_session(
    turns: int = 12,
    *,
    window: int | None = 60_000,
    step: int = 5_000,
    output_lines: int = 500,
    huge_at: int | None = None,
    huge_lines: int = 4_000,
    session_id: str = "views-test",
) -> Session:
    """A session whose recorded context grows by ``step`` per call (and a quarter step per reply).

    Each turn is: a user request, an assistant call to ``read`` with its output, and a reply.
    With ``huge_at`` set, the tool output of that turn is ``huge_lines`` long lines from ``bash``
    (one giant output that dominates the growth).
    """
    builder = SessionBuilder()
    prompt = 4_000
    for turn in range(turns):
        builder.user(f"Turn {turn}: please fix the bug in src/module_{turn}.py")
        tool = "bash" if turn == huge_at else "read"
        builder.call(
            tool,
            {"path": f"src/module_{turn}.py"},
            text=f"Reading module_{turn}.",
            context=prompt,
            output=50,
        )
        if turn == huge_at:
            lines = [f"{n:05d} build log line with some words in it" for n in range(huge_lines)]
        else:
            lines = [f"def f_{turn}_{n}(x): return x + {n}" for n in range(output_lines)]
        builder.result("\n".join(lines))
        prompt += step
        builder.reply(f"Fixed module_{turn}.py.", context=prompt, output=40)
        prompt += step // 4
    return builder.session(id=session_id, window=window, window_source="user" if window else None)


def many_messages(count: int) -> Session:
    """``count`` small messages (user, a call, its result, over and over), built fast: a scale
    test's session of 100,000 messages."""
    model = "claude-sonnet-4-5"
    builder = SessionBuilder(cached=True, model=model)
    for i in range(count):
        kind = i % 3
        if kind == 0:
            builder.user(f"message {i} " + "word " * 20)
        elif kind == 1:
            builder.call(text=f"message {i} " + "word " * 20, context=1_003 + i * 3, output=0)
        else:
            builder.result(f"line {i}\n" * 5)
    return builder.session(
        id="big", fmt=SourceFormat.CLAUDE_CODE, model=model, window=400_000, window_source="table"
    )


def session_facts(session: Session) -> dict[str, Any]:
    """Everything a loaded session says, as comparable builtins (two reads of one file are the
    same reading when these are equal)."""
    return {
        "messages": [to_record(m) for m in session.messages],
        "diagnostics": [d.model_dump() for d in session.diagnostics],
        "compactions": [c.model_dump() for c in session.compactions],
        "metadata": session.metadata,
        "fields": session.model_dump(exclude={"messages", "diagnostics", "compactions"}),
    }


def replay_and_plain_truncation(
    outputs: list[str], policy: Policy
) -> tuple[list[bool], list[bool]]:
    """One bash call per output: which messages the replay's truncation marks truncated under
    ``policy``, and which a truncation of every output (:func:`sent_output`) truncates."""
    from core.model.tokens import get_counter
    from core.replay.truncation import Truncations, sent_output

    builder = SessionBuilder().user()
    for output in outputs:
        builder = builder.call("bash", context=1_000).result(output)
    session = builder.reply(context=2_000).session()
    counter = get_counter(policy.estimator)
    truncation = Truncations(session, lambda _: counter.messages_tokens(session.messages)).of(
        policy
    )
    expected = [
        m.tool_result is not None and sent_output(m, policy.truncation).truncated
        for m in session.messages
    ]
    return list(map(bool, truncation.truncated)), expected


def read_bash_turns(count: int, output_tokens: int) -> Session:
    """``count`` turns of one read and one bash output (``output_tokens`` each) and a reply,
    growing towards and past a 60k window (a replay compacts, with the offline mock
    summariser)."""
    script = SessionBuilder()
    context = 2_000
    for turn in range(count):
        script.user(f"turn {turn}")
        for tool in ("read", "bash"):
            script.call(tool, context=context)
            script.result(text_of_tokens(output_tokens, tool[0]))
            context += output_tokens
        script.reply("ok", context=context)
    return script.session(window=60_000)
