"""What a compaction forgot: the facts of the head it replaced that its summary does not keep.

For every compaction whose summary can be read — Claude Code's ``isCompactSummary`` message, pi's
and opencode's summaries, ctxscope's own replays (the mock summariser or a live LLM) — the facts
of the head (:func:`core.insights.conversation_facts.extract_facts`: files read and written, commands and the ones that
failed with their error line, the user's instructions, identifiers, decisions, open tasks) are
checked against the summary (:func:`core.insights.conversation_facts.keeps`, normalised matching, no LLM). The result
gives the recall per kind of fact and the dropped facts with the message each came from.

* :func:`forgotten_of` — one head and one summary;
* :func:`recorded_forgotten` — every compaction the recording holds (a Codex remote compaction's
  summary is encrypted: it is reported as unreadable, with that reason);
* :func:`replayed_forgotten` — every compaction a replay wrote itself;
* :func:`judge` — optionally, an LLM says which of the facts the matching missed the summary still
  keeps in other words (``--llm``);
* :func:`core.insights.side_by_side.compare_summaries` — a recorded summary and a replayed one of
  the same head, fact by fact (a module of its own: ``analyze`` and ``compactions --json`` do not
  define its model).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from core.insights.context_walk import CompactionStep, RecordedWalk
from core.insights.conversation_facts import (
    FACT_KINDS,
    Fact,
    FactKind,
    FactMemo,
    NormalisedText,
    extract_facts,
    keeps,
)
from core.model.fastmodel import build
from core.model.session import Message, Session, SourceFormat
from core.replay.results import Documented, ReplayResult

if TYPE_CHECKING:  # (the LLM's models: only a judge by a model, ``compactions --judge``, makes one)
    from core.llm.protocol import Summarizer

SummarySource = Literal["recorded", "replayed"]

ENCRYPTED = (
    "Codex compacted remotely: the summary is encrypted (only OpenAI's server can read it), so "
    "what it kept cannot be checked"
)
NO_SUMMARY = "the recording holds no summary text for this compaction"
_ENCRYPTED_PLACEHOLDER = "[compaction summary encrypted"
"""How the Codex loader writes a summary the provider encrypted."""


class FactRecord(Documented):
    """One fact of a compaction's head and whether the summary kept it."""

    kind: FactKind
    """``file_read``, ``file_written``, ``command``, ``failed_command``, ``instruction``,
    ``identifier``, ``decision`` or ``open_task``."""
    text: str
    """The fact as the conversation has it (a path, a command, a sentence …)."""
    message_index: int
    """The message it came from."""
    detail: str | None = None
    """The error line of a failed command; ``function``, ``test``, ``branch`` or ``url`` for an
    identifier."""
    kept: bool
    """The summary keeps it."""
    kept_by: Literal["match", "judge"] | None = None
    """How that was decided: normalised matching, or the LLM judge (``--llm``)."""


class KindRecall(Documented):
    """The facts of one kind and how many the summary kept."""

    kind: FactKind
    """The kind of fact."""
    facts: int
    """Facts of that kind in the head."""
    kept: int
    """How many the summary keeps."""
    recall: float
    """``kept / facts``."""


class Forgotten(Documented):
    """What one compaction's summary kept of the head it replaced (``forgotten`` per compaction
    in ``analyze --json``)."""

    readable: bool
    """The summary text can be read (False: a Codex remote compaction's encrypted summary, or no
    summary in the recording; ``reason`` says which)."""
    reason: str | None = None
    """Why it cannot be checked, when it cannot."""
    summary_source: SummarySource
    """``recorded`` (the agent's summary) or ``replayed`` (one ctxscope's replay wrote)."""
    head_messages: int
    """Messages the compaction replaced (a previous summary included)."""
    facts: int = 0
    """Facts found in them."""
    kept: int = 0
    """Facts the summary keeps."""
    recall: float | None = None
    """``kept / facts`` (None: no facts, or unreadable)."""
    by_kind: list[KindRecall] = Field(default_factory=list)
    """Recall per kind of fact (kinds with at least one fact)."""
    dropped: list[FactRecord] = Field(default_factory=list)
    """The facts the summary does not keep, in the order they appeared."""
    judged: bool = False
    """An LLM judge looked at the facts the matching did not find."""


def forgotten_of(
    head: Sequence[Message],
    summary: str,
    *,
    source: SummarySource = "recorded",
    memo: FactMemo | None = None,
    records: bool = True,
) -> tuple[Forgotten, list[FactRecord]]:
    """What ``summary`` keeps of the facts of ``head``: the report, and every fact with its
    verdict (the report lists only the dropped ones). ``memo``: see
    :class:`core.insights.conversation_facts.FactMemo`. ``records=False`` builds no record for
    a kept fact and returns no list (the same report, for a caller that prints only it)."""
    text = NormalisedText(summary)
    facts = extract_facts(head, memo)
    if not records:
        return _lean_report(facts, [keeps(text, fact) for fact in facts], len(head), source), []
    every = [_record(fact, keeps(text, fact)) for fact in facts]
    return _report(every, len(head), source), every


def unreadable(head_messages: int, reason: str, source: SummarySource = "recorded") -> Forgotten:
    """The report of a compaction whose summary cannot be read."""
    return _forgotten([], head_messages, source, [], judged=False, readable=False, reason=reason)


def _record(fact: Fact, kept: bool) -> FactRecord:
    """The record of one fact (typed values, a record per fact of every head: no validation;
    every field, in the class's order)."""
    return build(
        FactRecord,
        {
            "kind": fact.kind,
            "text": fact.text,
            "message_index": fact.message_index,
            "detail": fact.detail,
            "kept": kept,
            "kept_by": "match" if kept else None,
        },
    )


def _report(
    records: Sequence[FactRecord], head_messages: int, source: SummarySource, judged: bool = False
) -> Forgotten:
    dropped = [r for r in records if not r.kept]
    return _forgotten([(r.kind, r.kept) for r in records], head_messages, source, dropped, judged)


def _lean_report(
    facts: Sequence[Fact], kept: Sequence[bool], head_messages: int, source: SummarySource
) -> Forgotten:
    """:func:`_report` of ``facts`` with their verdicts, a record made for the dropped only."""
    dropped = [_record(f, False) for f, k in zip(facts, kept, strict=True) if not k]
    verdicts = [(fact.kind, is_kept) for fact, is_kept in zip(facts, kept, strict=True)]
    return _forgotten(verdicts, head_messages, source, dropped, judged=False)


def _forgotten(
    verdicts: Sequence[tuple[str, bool]],
    head_messages: int,
    source: SummarySource,
    dropped: list[FactRecord],
    judged: bool,
    *,
    readable: bool = True,
    reason: str | None = None,
) -> Forgotten:
    """The report of facts given as (kind, kept), with their dropped records and the recall per
    kind (``readable=False``, with its ``reason``: a summary that cannot be read, no facts), built
    from typed values without validation (one for every compaction of a session, and a
    :class:`KindRecall` for each of its kinds)."""
    of_kind: dict[str, list[int]] = {}  # kind -> [facts, kept]
    for kind, is_kept in verdicts:
        tally = of_kind.setdefault(kind, [0, 0])
        tally[0] += 1
        tally[1] += is_kept
    by_kind = [
        build(KindRecall, {"kind": kind, "facts": n, "kept": k, "recall": k / n})
        for kind in FACT_KINDS
        if kind in of_kind
        for n, k in (of_kind[kind],)
    ]
    kept_total = sum(k for _n, k in of_kind.values())
    return build(
        Forgotten,
        {
            "readable": readable,
            "reason": reason,
            "summary_source": source,
            "head_messages": head_messages,
            "facts": len(verdicts),
            "kept": kept_total,
            "recall": kept_total / len(verdicts) if verdicts else None,
            "by_kind": by_kind,
            "dropped": dropped,
            "judged": judged,
        },
    )


# -- the recording's compactions and the replay's ------------------------------------------------


def recorded_summary(session: Session, step: CompactionStep) -> str | None:
    """The summary text a recorded compaction wrote, when it is in clear."""
    event = session.compactions[step.compaction.index]
    owned = [session.messages[j] for j in step.compaction.owned]
    texts = [event.summary or "", *(m.text for m in owned)]
    if any(t.startswith(_ENCRYPTED_PLACEHOLDER) for t in texts):
        return None
    if event.summary and event.summary.strip():
        return event.summary
    # Meta copies (Codex's replacement history keeps earlier messages) are not the summary.
    text = "\n\n".join(m.text for m in owned if m.summary and not m.meta and m.text.strip())
    return text or None


def recorded_heads(session: Session) -> dict[int, CompactionStep]:
    """Each recorded compaction that took effect, by its index in ``Session.compactions``."""
    return {step.compaction.index: step for step in RecordedWalk(session).compaction_steps()}


def recorded_forgotten(
    session: Session,
    heads: dict[int, CompactionStep] | None = None,
    memo: FactMemo | None = None,
    *,
    records: bool = True,
) -> dict[int, tuple[Forgotten, list[FactRecord]]]:
    """:func:`forgotten_of` for every recorded compaction that took effect, by its index
    (``memo``: one :class:`core.insights.conversation_facts.FactMemo` for the session;
    ``records``: as for :func:`forgotten_of`)."""
    heads = recorded_heads(session) if heads is None else heads
    memo = FactMemo() if memo is None else memo
    out: dict[int, tuple[Forgotten, list[FactRecord]]] = {}
    for index, step in heads.items():
        summary = recorded_summary(session, step)
        if summary is None:  # (its head is not gathered: a Codex head is all that came before)
            reason = ENCRYPTED if session.format is SourceFormat.CODEX else NO_SUMMARY
            out[index] = (unreadable(len(step.head), reason), [])
        else:
            head = [session.messages[j] for j in step.head]
            out[index] = forgotten_of(head, summary, memo=memo, records=records)
    return out


def replayed_forgotten(
    session: Session,
    result: ReplayResult,
    memo: FactMemo | None = None,
    *,
    records: bool = True,
) -> dict[int, tuple[Forgotten, list[FactRecord]]]:
    """:func:`forgotten_of` for every compaction the replay wrote itself (by event id): its
    head indices and its summary (``memo``, ``records``: as for :func:`recorded_forgotten`)."""
    memo = FactMemo() if memo is None else memo
    out: dict[int, tuple[Forgotten, list[FactRecord]]] = {}
    for k, event in enumerate(result.events):
        if event.kind != "compact" or event.recorded_index is not None or not event.summary:
            continue
        head = [session.messages[j] for j in event.head_indices if j >= 0]
        out[k] = forgotten_of(head, event.summary, source="replayed", memo=memo, records=records)
    return out


# -- the optional LLM judge ----------------------------------------------------------------------

JUDGE_PROMPT = (
    "You check a conversation summary. Below are the summary and a numbered list of facts from "
    "the conversation it replaced. A fact is kept when the summary states it or something that "
    'implies it, in any wording. Answer with JSON only: {"kept": [the numbers of the kept '
    "facts]}."
)
_JSON = re.compile(r"\{.*\}", re.DOTALL)


async def judge(
    report: Forgotten,
    records: list[FactRecord],
    summary: str,
    summarizer: Summarizer,
    *,
    batch: int = 60,
) -> Forgotten:
    """Ask ``summarizer`` which of the facts the matching did not find the summary keeps after
    all; those are marked ``kept_by = "judge"``. Returns the updated report (``records`` are
    updated in place). An answer that is not the JSON asked for changes nothing."""
    from core.llm.protocol import ChatMessage

    missing = [r for r in records if not r.kept]
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        listing = "\n".join(f"{n}. [{r.kind}] {r.text}" for n, r in enumerate(chunk, 1))
        content = f"SUMMARY:\n{summary}\n\nFACTS:\n{listing}"
        answer = await summarizer.summarize(
            [ChatMessage(role="user", content=content)], JUDGE_PROMPT, 400
        )
        for n in _kept_numbers(answer.text, len(chunk)):
            chunk[n - 1].kept = True
            chunk[n - 1].kept_by = "judge"
    return _report(records, report.head_messages, report.summary_source, judged=True)


def _kept_numbers(answer: str, count: int) -> list[int]:
    match = _JSON.search(answer)
    if match is None:
        return []
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return []
    numbers = data.get("kept") if isinstance(data, dict) else None
    if not isinstance(numbers, list):
        return []
    return sorted({n for n in numbers if isinstance(n, int) and 1 <= n <= count})
