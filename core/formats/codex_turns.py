"""Why a Codex compaction ran, read from where it sits in the turn loop (Codex writes no trigger).

Read from openai/codex ``codex-rs/core/src/session/turn.rs`` (``run_turn``):

* **auto, mid-turn**: the check after a model response that asked for tools, once their outputs
  are recorded. In the rollout: a ``compacted`` inside a turn (no ``task_complete`` since its
  ``task_started``) after the turn's model output, usually right after a tool output.
* **auto, pre-turn**: the check at a turn's start, before its user input is recorded:
  ``task_started`` → ``compacted`` → (context re-injection, ``turn_context``) → the turn's own
  ``user_message`` or first model output.
* **manual**: ``/compact`` runs as a task of its own that only compacts: ``task_started`` …
  ``compacted`` … ``task_complete`` with no user message and no model output (the ``/compact``
  itself is not written; no sample has one, so this shape comes from the task structure).
* anything else: **unknown**, saying why.
"""

from __future__ import annotations

from core.model.session import CompactionEvent, CompactionTrigger

MID_TURN = "mid-turn"
PRE_TURN = "pre-turn"


class _Open:
    """A compaction whose label waits for what follows it (pre-turn or a /compact task)."""

    __slots__ = ("event", "line", "turn_line", "user_line")

    def __init__(self, event: CompactionEvent, line: int, turn_line: int, user_line: int | None):
        self.event = event
        self.line = line
        self.turn_line = turn_line
        self.user_line = user_line


class TurnTracker:
    """Follows the turns of a rollout (fed by the loader, one call per record that matters) and
    labels each compaction with its trigger, phase and evidence."""

    def __init__(self) -> None:
        self.turn_line: int | None = None
        """Line of the open turn's ``task_started`` (None outside a turn)."""
        self.user_line: int | None = None
        """The open turn's first real user input."""
        self.last_model: tuple[str, int] | None = None
        """The open turn's latest model output (item type, line)."""
        self.last_item: tuple[str, int] | None = None
        """The open turn's latest response item of any kind (type, line)."""
        self.open: list[_Open] = []

    # -- records --------------------------------------------------------------------------

    def task_started(self, line: int) -> None:
        """A turn (or a task such as /compact) starts."""
        if self.open:  # (the reason written only for a compaction waiting for it)
            self._close_open(f"the next task started at line {line}")
        self.turn_line = line
        self.user_line = None
        self.last_model = None
        self.last_item = None

    def task_ended(self, line: int, how: str) -> None:
        """``task_complete`` / ``turn_aborted``."""
        if self.open:
            self._close_open(f"the task ended ({how}) at line {line}")
        self.turn_line = None

    def user_input(self, line: int) -> None:
        """Real user input: an ``event_msg/user_message`` or a non-contextual user message."""
        if self.user_line is None:
            self.user_line = line
        if self.open:
            self._settle(f"its own user message at line {line}")

    def model_output(self, kind: str, line: int) -> None:
        """A model-generated item (assistant text, reasoning, a tool call …)."""
        self.last_model = self.last_item = (kind, line)
        if self.open:
            self._settle(f"its first model output ({kind}) at line {line}")

    def item(self, kind: str, line: int) -> None:
        """Any other history item (tool outputs, context messages)."""
        self.last_item = (kind, line)

    def compacted(self, event: CompactionEvent, line: int) -> None:
        """Label ``event`` (recorded at ``line``), now or once what follows says."""
        if self.turn_line is None:
            _label(
                event,
                "unknown",
                None,
                f"outside any turn (no task_started open before line {line}); "
                "the record order does not say why it ran",
            )
            return
        if self.last_model is not None:
            after = self.last_item or self.last_model
            _label(
                event,
                "auto",
                MID_TURN,
                f"inside the turn started at line {self.turn_line}, after a {after[0]} "
                f"at line {after[1]}, before the turn ended",
            )
            return
        self.open.append(_Open(event, line, self.turn_line, self.user_line))

    def finish(self, last_line: int) -> None:
        """The file ended: a compaction still waiting is labelled from what is known."""
        for waiting in self.open:
            _label(
                waiting.event,
                "unknown",
                None,
                f"the turn started at line {waiting.turn_line} compacted at line "
                f"{waiting.line} and the file ends at line {last_line} before anything "
                "else happens in it",
            )
        self.open = []

    # -- labels ---------------------------------------------------------------------------

    def _settle(self, what: str) -> None:
        """User input or model output after a compaction at the turn's start: pre-turn."""
        for waiting in self.open:
            before = (
                f"after the turn's user message at line {waiting.user_line} and "
                if waiting.user_line is not None
                else ""
            )
            _label(
                waiting.event,
                "auto",
                PRE_TURN,
                f"task_started at line {waiting.turn_line}, compacted at line {waiting.line} "
                f"{before}before {what} (only context records between)",
            )
        self.open = []

    def _close_open(self, why: str) -> None:
        """The task ends with nothing but its compaction: a /compact task."""
        for waiting in self.open:
            if waiting.user_line is not None:
                _label(
                    waiting.event,
                    "unknown",
                    None,
                    f"compacted at line {waiting.line} after the user message at line "
                    f"{waiting.user_line} with no model output before {why}",
                )
                continue
            _label(
                waiting.event,
                "manual",
                None,
                f"a task of its own (task_started at line {waiting.turn_line}) that only "
                f"compacted at line {waiting.line}: no user message and no model output "
                f"before {why}",
            )
        self.open = []


def _label(
    event: CompactionEvent, trigger: CompactionTrigger, phase: str | None, evidence: str
) -> None:
    event.trigger = trigger
    event.phase = phase
    event.trigger_evidence = evidence
