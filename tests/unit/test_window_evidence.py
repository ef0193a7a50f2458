"""The window of a session comes from evidence, with its provenance: the file, the table of
(provider, model), or the recording itself when the table's figure cannot be right."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.window_evidence import gather, gather_each, resolve_window, smallest_window
from core.model.session import Diagnostic, Session, Severity, SourceFormat, Usage
from tests.support.builders import SessionBuilder


def _claude(*contexts: int, model: str = "claude-opus-5") -> Session:
    builder = SessionBuilder(model=model).user("go")
    for context in contexts:
        builder.call(context=context).result("ok")
    return builder.reply(context=contexts[-1] + 100).session(
        window=None, fmt=SourceFormat.CLAUDE_CODE, model=model
    )


def test_the_table_window_when_the_recording_fits_it() -> None:
    session = _claude(50_000, 120_000)
    resolve_window(session)
    assert (session.context_window, session.window_source) == (200_000, "table")
    assert session.window_evidence and "claude-opus-5" in session.window_evidence


def test_a_prompt_above_the_table_window_means_the_larger_variant() -> None:
    session = _claude(150_000, 203_312)
    resolve_window(session)
    assert (session.context_window, session.window_source) == (1_000_000, "inferred")
    assert session.window_evidence is not None
    assert "203,412" in session.window_evidence and "200,000" in session.window_evidence


def test_a_recorded_compactions_own_count_is_never_window_evidence() -> None:
    """A replay is scored on the recorded compactions, so the window it uses may not be read
    from them: a compaction that measured 213,002 leaves the table's 200,000."""
    builder = SessionBuilder(model="claude-opus-5").user("go").call(context=190_000).result("x")
    builder.compaction(tokens_before=213_002)
    session = builder.reply(context=30_000).session(
        window=None, fmt=SourceFormat.CLAUDE_CODE, model="claude-opus-5"
    )
    resolve_window(session)
    assert (session.context_window, session.window_source) == (200_000, "table")
    assert "213,002" not in (session.window_evidence or "")


def test_a_manual_or_overflow_compaction_above_it_is_not() -> None:
    builder = SessionBuilder(model="claude-opus-5").user("go").call(context=190_000).result("x")
    builder.compaction(tokens_before=213_002, trigger="overflow")
    session = builder.reply(context=30_000).session(
        window=None, fmt=SourceFormat.CLAUDE_CODE, model="claude-opus-5"
    )
    resolve_window(session)
    assert (session.context_window, session.window_source) == (200_000, "table")


def test_an_overflow_error_that_states_the_limit_wins_over_the_table() -> None:
    builder = SessionBuilder(model="claude-opus-5").user("go").call(context=150_000).result("x")
    builder.reply(context=None, error="prompt is too long: 210097 tokens > 180000 maximum")
    session = builder.session(window=None, fmt=SourceFormat.CLAUDE_CODE, model="claude-opus-5")
    resolve_window(session)
    assert (session.context_window, session.window_source) == (180_000, "recorded")
    assert session.window_evidence is not None and "overflow error" in session.window_evidence


def test_an_unknown_model_is_inferred_from_its_usage_with_a_warning() -> None:
    session = _claude(90_000, 140_110, model="mystery-pickle")
    session.format = SourceFormat.OPENCODE
    resolve_window(session)
    assert (session.context_window, session.window_source) == (200_000, "inferred")
    assert any(d.code == "window-inferred" for d in session.diagnostics)
    assert session.window_evidence is not None and "not in the table" in session.window_evidence


def test_the_window_inferred_note_is_the_validated_diagnostic() -> None:
    """The note is built without validation (no schema is built for it): it equals, field for
    field and in the fields it says were set, the ``Diagnostic`` validation gives."""
    session = _claude(90_000, 140_110, model="mystery-pickle")
    resolve_window(session)
    (note,) = [d for d in session.diagnostics if d.code == "window-inferred"]
    validated = Diagnostic.model_validate(note.model_dump())
    assert note == validated
    assert note.model_fields_set == validated.model_fields_set
    assert note.severity is Severity.WARNING and note.line is None


def test_an_unknown_model_without_usage_stays_unknown() -> None:
    session = (
        SessionBuilder(model="mystery").user("hi").reply().session(window=None, model="mystery")
    )
    resolve_window(session)
    assert (session.context_window, session.window_source) == (None, "unknown")
    assert session.window_evidence is not None and "no call recorded" in session.window_evidence


def test_the_user_and_the_file_win() -> None:
    session = _claude(150_000, 203_312)
    resolve_window(session, 500_000)
    assert (session.context_window, session.window_source) == (500_000, "user")
    recorded = _claude(100_000)
    recorded.context_window, recorded.window_source = 258_400, "recorded"
    resolve_window(recorded)
    assert (recorded.context_window, recorded.window_source) == (258_400, "recorded")


def test_the_provider_decides_between_rows() -> None:
    pi = _claude(100_000, model="gpt-5.5")
    pi.format, pi.provider = SourceFormat.PI, "openai-codex"
    resolve_window(pi)
    assert pi.context_window == 272_000
    opencode = _claude(100_000, model="gpt-5.5")
    opencode.format, opencode.provider = SourceFormat.OPENCODE, "openai"
    resolve_window(opencode)
    assert opencode.context_window == 1_050_000
    assert opencode.metadata["input_limit"] == 922_000


def test_a_subscription_session_past_the_table_window_gets_the_larger_one() -> None:
    session = _claude(260_000, 290_000, model="gpt-5.5")
    session.format, session.provider = SourceFormat.PI, "openai-codex"
    resolve_window(session)  # calls went through above 272,000: the window cannot be 272,000
    assert session.window_source == "inferred" and session.context_window is not None
    assert session.context_window >= 290_100


def test_smallest_window() -> None:
    assert smallest_window(140_110) == 200_000
    assert smallest_window(200_000) == 200_000
    assert smallest_window(5_000_000) == 5_000_000


def _refused(*, later: int | None) -> Session:
    builder = SessionBuilder(model="claude-opus-5").user("go").call(context=150_000).result("x")
    builder.reply(context=None, error="Your input exceeds the context window of this model")
    if later is not None:
        builder.user("again").reply(context=later)
    return builder.session(window=None, fmt=SourceFormat.OPENCODE, model="claude-opus-5")


def test_a_refusal_below_the_table_window_lowers_it() -> None:
    session = _refused(later=None)
    session.provider = "anthropic"  # opencode's table gives claude-opus-5 1,000,000
    resolve_window(session)
    assert (session.context_window, session.window_source) == (150_010, "inferred")
    assert session.window_evidence is not None and "refused" in session.window_evidence


def test_a_refusal_a_later_larger_call_contradicts_bounds_nothing() -> None:
    session = _refused(later=400_000)
    session.provider = "anthropic"
    resolve_window(session)
    assert (session.context_window, session.window_source) == (1_000_000, "table")
    assert session.window_evidence is not None and "does not bound" in session.window_evidence


def _pi_overflowed(model: str = "gpt-5.6-sol") -> Session:
    """A pi session on a ChatGPT plan whose 371,312-token call went through and whose next
    request the provider refused: "input exceeds the context window"."""
    builder = SessionBuilder(model=model).user("go").call(context=300_000).result("x")
    builder.call(context=371_312, output=254).result("y")
    builder.reply(context=None, error="Your input exceeds the context window of this model.")
    return builder.session(window=None, fmt=SourceFormat.PI, model=model, provider="openai-codex")


def test_an_overflow_error_bounds_the_window_from_above() -> None:
    session = _pi_overflowed()
    resolve_window(session)
    assert session.context_window is not None
    assert 371_312 <= session.context_window <= 371_566
    assert session.context_window != 400_000
    text = session.window_evidence or ""
    assert "at least 371,312" in text and "at most 371,566" in text, text


def test_an_overflow_error_bounds_an_unknown_model_too() -> None:
    session = _pi_overflowed(model="mystery-9")
    resolve_window(session)
    assert session.context_window == 371_566
    assert "at most 371,566" in (session.window_evidence or "")


def test_a_provider_that_caps_prompts_lower_sets_the_window() -> None:
    """opencode on GitHub Copilot: Claude's prompts are capped at the provider's input limit
    (models.dev), not Anthropic's 200,000."""
    builder = SessionBuilder(model="claude-sonnet-4.5").user("go").call(context=100_000)
    session = (
        builder.result("x")
        .reply(context=112_579)
        .session(
            window=None,
            fmt=SourceFormat.OPENCODE,
            model="claude-sonnet-4.5",
            provider="github-copilot",
        )
    )
    resolve_window(session)
    assert (session.context_window, session.window_source) == (128_000, "table")
    text = session.window_evidence or ""
    assert "models.dev" in text and "128,000" in text and "200,000" in text


_ERRORS = (
    None,
    "",
    "prompt is too long: 210097 tokens > 200000 maximum",
    "This model's maximum context length is 128000 tokens",
    "context_length_exceeded",
    "rate limit reached",
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=-5, max_value=300_000),
            st.integers(min_value=0, max_value=300_000),
            st.booleans(),  # usage recorded
            st.booleans(),  # a sub-agent's call
            st.sampled_from((None, "length", "end_turn")),
            st.sampled_from(_ERRORS),
            st.booleans(),  # a source line
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_gather_is_the_evidence_read_call_by_call(
    calls: list[tuple[int, int, bool, bool, str | None, str | None, bool]], errors: bool
) -> None:
    """The largest prompt over a column (no call records an error) is the evidence
    :func:`gather_each` reads call by call, its place included; with errors, the same."""
    builder = SessionBuilder(model="claude-opus-5").user("go")
    for uncached, read, recorded, side, stop, error, line in calls:
        usage = Usage(input=uncached, cache_read=read, output=7)
        builder.reply(
            usage=usage if recorded else None,
            sidechain=side,
            stop_reason=stop,
            error=error if errors else None,
        )
        if line:
            builder.messages[-1].source_line = 10 * len(builder.messages)
    session = builder.session(window=None, fmt=SourceFormat.CLAUDE_CODE, model="claude-opus-5")
    assert gather(session) == gather_each(session)
