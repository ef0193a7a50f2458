"""``ctxscope replay``: replay a session under a policy and print the timeline, call by call.

Holds the agent's actions fixed and re-runs truncation, pruning and compaction as the policy
would, with summaries from the mock LLM (offline, deterministic) or a live OpenAI-compatible
endpoint (``--llm URL``). ``--json`` prints the whole :class:`core.replay.ReplayResult`
(schema v1). Exit status 0; 2 for unusable input; 3 when a live LLM wrote no summary at all
(every request failed: one line on standard error says why). While a live LLM works, each
summary request and its outcome is a line on standard error.
"""

from __future__ import annotations

import sys

import click

from core.insights.named_figures import compaction_figures, peak, recording_checks
from core.model.json_text import model_json
from core.policy import LLMConfig
from tui.cli.commands._llm_watch import LLMWatch
from tui.cli.commands._options import replay_options
from tui.cli.commands._session import fail, load_or_fail, replay_with_progress, replayer_of


@click.command(name="replay")
@replay_options
@click.option(
    "--llm",
    default="mock",
    show_default=True,
    metavar="mock|URL",
    help="Who writes the summaries: the offline mock, or an OpenAI-compatible endpoint URL "
    "(API key from $OPENAI_API_KEY).",
)
@click.option("--model", default=None, help="Model name to ask the endpoint for (with --llm URL).")
@click.option(
    "--llm-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Deadline of one summary request, retries included; a request also ends where the "
    "run's --llm-max-failing runs out (default: the policy's llm.timeout_s, 60).",
)
@click.option(
    "--llm-max-failures",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Stop calling the LLM after N summary requests in a row failed (default: the "
    "policy's llm.max_consecutive_failures, 3).",
)
@click.option(
    "--llm-first-byte-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="A streamed answer must begin within this (default: the policy's "
    "llm.first_byte_timeout_s, 10).",
)
@click.option(
    "--llm-stall-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="An answer that began may go this long without a new line (streamed) or new bytes "
    "(not streamed) (default: the policy's llm.stall_timeout_s, 10).",
)
@click.option(
    "--llm-max-failing",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="The run's budget for failing requests: no request is given more than what is left of "
    "it, and once the requests that failed in a row took it together the run stops calling the "
    "LLM; a dead endpoint, streamed or not, ends the run within it (default: the policy's "
    "llm.max_failing_s, 30).",
)
@click.option(
    "--llm-max-bytes",
    type=click.IntRange(min=1024),
    default=None,
    metavar="BYTES",
    help="Most bytes an answer may take (default: the policy's llm.max_answer_bytes, 16 MiB).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole replay as JSON (schema v1).")
@click.option("--all-events", is_flag=True, help="List every event, not only the first 40.")
@click.option(
    "--all-calls",
    is_flag=True,
    help="Print every call in the timeline (a long session prints those where something happened).",
)
def replay(
    path: str,
    policy_spec: str | None,
    window: int | None,
    llm: str,
    model: str | None,
    llm_timeout: float | None,
    llm_max_failures: int | None,
    llm_first_byte_timeout: float | None,
    llm_stall_timeout: float | None,
    llm_max_failing: float | None,
    llm_max_bytes: int | None,
    as_json: bool,
    all_events: bool,
    all_calls: bool,
) -> None:
    """Replay the session at PATH under a policy and print where it would compact or overflow.

    Exit status 3 when a live LLM was asked for summaries and every request failed (one line on
    standard error says why).
    """
    session, policy = load_or_fail("replay", path, window=window, policy_spec=policy_spec)
    limits = {
        "timeout_s": llm_timeout,
        "max_consecutive_failures": llm_max_failures,
        "first_byte_timeout_s": llm_first_byte_timeout,
        "stall_timeout_s": llm_stall_timeout,
        "max_failing_s": llm_max_failing,
        "max_answer_bytes": llm_max_bytes,
    }
    policy = policy.model_copy(update={"llm": _llm_config(policy.llm, llm, model, limits)})
    watch = LLMWatch("replay", policy)
    with watch:
        result = replay_with_progress(session, policy)
    if as_json:
        sys.stdout.write(model_json(result) + "\n")
        watch.exit_if_nothing_written()
        return
    # rich's rendering only for the tables: --json starts without it
    from tui.cli.render import (
        events_table,
        fidelity_table,
        notes_block,
        session_header,
        sparkline_panel,
        stdout_console,
        summary_table,
        timeline_table,
    )

    console = stdout_console()
    console.print(session_header(session, result))
    console.print()
    console.print(sparkline_panel(result, console.width))
    console.print(summary_table(result.summary, top=peak(session, result)))
    console.print(timeline_table(result, all_calls=all_calls))
    console.print(
        events_table(
            result.events,
            limit=None if all_events else 40,
            figures=compaction_figures(session, result),
        )
    )
    if result.fidelity:
        figures = compaction_figures(session, result)
        checks = recording_checks(replayer_of(session))
        console.print(fidelity_table(result.fidelity, figures, checks))
    if result.notes:
        console.print(notes_block(result.notes))
    watch.exit_if_nothing_written()


def _llm_config(
    base: LLMConfig, llm: str, model: str | None, limits: dict[str, float | int | None]
) -> LLMConfig:
    """The policy's LLM settings with ``--llm``/``--model`` and the limits given on the line."""
    update: dict[str, object] = {name: value for name, value in limits.items() if value is not None}
    if llm != "mock":
        if not llm.startswith(("http://", "https://")):
            fail("replay", f"--llm must be 'mock' or an http(s) URL, not {llm!r}")
        if not model:
            fail("replay", "--llm URL needs --model NAME (the model the endpoint serves)")
        update.update(provider="openai", base_url=llm, model=model)
    elif model:
        fail("replay", "--model applies to a live endpoint; pass --llm URL as well")
    if not update:
        return base  # (the policy's own, validated with it: no schema to build for a copy)
    return LLMConfig.model_validate({**base.model_dump(), **update})
