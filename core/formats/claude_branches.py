"""Which lines of a Claude Code transcript are the conversation: the active branch.

Claude Code writes a tree (``uuid`` / ``parentUuid``): a rewind forks it, a compact boundary
starts a new root whose ``logicalParentUuid`` names the leaf before it. The active branch is the
chain from the last line back to its root; lines forked off it by a rewind are left out with a
diagnostic. Parallel tool results, the other block lines of an included API message and the
attachments a hook hangs off a line of the chain, which Claude Code also writes as side
branches, are kept. A compaction on a rewound branch is not one of the session's: the
conversation went on without it (``metadata["rewound_compactions"]`` and an info say so).
"""

from __future__ import annotations

from core.formats.base import SessionBuilder
from core.formats.claude_compactions import is_typed_compact
from core.formats.claude_records import (
    ASSISTANT,
    ATTACHMENT,
    BOUNDARY,
    SIDECHAIN,
    USER,
    Entry,
    texts_of,
)
from core.model.read_numbers import as_int


def active_entries(
    entries: list[Entry],
    parents: dict[str, str | None],
    builder: SessionBuilder,
    before_boundary: dict[str, str],
) -> list[Entry]:
    """The entries of the active branch (plus side lines that belong to it), in file order.

    ``before_boundary``: for each compact boundary, the uuid of the line written just before it.
    """
    main = [e for e in entries if not e.flags & SIDECHAIN]  # (not e.sidechain: no call a line)
    if not main:
        return entries
    return _Branches(entries, parents, builder, before_boundary).active(main[-1].uuid)


def _typed_compact(entry: Entry) -> bool:
    """The line the user typed to compact (``/compact …``), which the model is not sent."""
    if entry.kind != USER:
        return False
    texts = texts_of(entry)
    return bool(texts) and is_typed_compact(texts[0])


class _Branches:
    """The tree of one transcript: the chain of the last line and what forks off it."""

    def __init__(
        self,
        entries: list[Entry],
        parents: dict[str, str | None],
        builder: SessionBuilder,
        before_boundary: dict[str, str],
    ) -> None:
        self.entries = entries
        self.parents = parents
        self.builder = builder
        self.before_boundary = before_boundary
        self.chain: set[str] = set()
        self.fork_of: dict[str, str | None] = {}
        """For each line off the chain: the first line of its branch (None: a separate tree)."""

    def active(self, leaf: str) -> list[Entry]:
        """The chain from ``leaf`` back to its root, and the side lines that belong to it."""
        self._walk_chain(leaf)
        chain = self.chain
        if all(entry.uuid in chain or entry.sidechain for entry in self.entries):
            return list(self.entries)  # the usual file: no line off the chain
        included_keys = {e.key for e in self.entries if e.kind == ASSISTANT and e.uuid in chain}
        included_calls = {c.id for e in self.entries if e.uuid in chain for c in e.calls}
        kept: set[int] = set()
        forks: dict[str, list[Entry]] = {}
        for entry in self.entries:
            if entry.uuid in chain or entry.sidechain:
                kept.add(id(entry))
                continue
            root = self._fork_root(entry.uuid)
            if root is None:
                kept.add(id(entry))  # a separate tree (earlier root, broken link): file order
            elif entry.kind == ASSISTANT and entry.key in included_keys:
                kept.add(id(entry))  # another block line of an included API message
                included_calls.update(c.id for c in entry.calls)
            elif entry.results and all(r[0] in included_calls for r in entry.results):
                kept.add(id(entry))  # a parallel tool result
            else:
                forks.setdefault(root, []).append(entry)
        for branch in forks.values():
            if all(e.kind == ATTACHMENT for e in branch):
                # Context a hook attached beside the chain (a PreToolUse hook's output hangs off
                # the tool call, next to its result): the agent sent it with the conversation.
                kept.update(id(e) for e in branch)
            elif not all(_typed_compact(e) for e in branch):
                # (The /compact the user typed: its compaction follows, and the command is
                # recorded again after the summary. Not part of the conversation, not a rewind.)
                self._abandoned(branch)
        return [e for e in self.entries if id(e) in kept]

    def _walk_chain(self, leaf: str) -> None:
        parents, chain = self.parents, self.chain
        uuid: str | None = leaf
        previous: str | None = None
        resumed: set[str] = set()
        while uuid is not None and uuid in parents:
            if uuid in chain:
                # A boundary whose logical parent is written after it: the preserved segment of
                # a partial compaction (2.1.2xx), copied after the summary. The conversation
                # before the compaction ends at the line written just before the boundary.
                if previous is None or previous in resumed:
                    return
                if previous not in self.before_boundary:
                    self._cycle(previous, uuid)
                    return
                resumed.add(previous)
                uuid = self.before_boundary.get(previous)
                continue
            chain.add(uuid)
            previous, uuid = uuid, parents[uuid]
        if uuid is not None:
            self._missing_parent(uuid, previous)

    def _cycle(self, child: str, parent: str) -> None:
        """``child``'s parent is a line already on the chain below it: the links form a cycle
        (a damaged file), broken at ``child``, which becomes the root."""
        line = next((e.line for e in self.entries if e.uuid == child), None)
        self.builder.diagnostic(
            line,
            "parent-cycle",
            f"parentUuid {parent} of {child} leads back into the conversation (a cycle); "
            "cut here, the line starts the conversation",
        )

    def _missing_parent(self, uuid: str, child: str | None) -> None:
        boundary = next((e for e in self.entries if e.uuid == child and e.kind == BOUNDARY), None)
        if boundary is not None:
            self.builder.info(
                boundary.line,
                "history-not-in-file",
                f"the file begins after a compaction (line {boundary.line}): the conversation "
                "before it is not in the file",
            )
            return
        self.builder.info(
            None,
            "missing-parent",
            f"the conversation refers to a parent line that is not in the file ({uuid}); "
            "earlier lines are kept in file order",
        )

    def _fork_root(self, start: str) -> str | None:
        """The first line of the branch ``start`` is on (the line just below the chain)."""
        fork_of, chain = self.fork_of, self.chain
        path: list[str] = []
        seen: set[str] = set()
        node: str | None = start
        result: str | None = None
        while node is not None and node not in seen:
            seen.add(node)
            if node in chain:
                result = path[-1] if path else None
                break
            if node in fork_of:
                result = fork_of[node]
                break
            path.append(node)
            node = self.parents.get(node)
        for visited in path:
            fork_of[visited] = result
        return result

    def _abandoned(self, branch: list[Entry]) -> None:
        """A branch the conversation was rewound from: left out, with an info (and one more
        for each compaction on it, which the conversation went on without)."""
        first, last = branch[0].line, branch[-1].line
        self.builder.info(
            first,
            "abandoned-branch",
            f"rewound branch of {len(branch)} line(s) (lines {first}–{last}) "
            "is not on the active conversation; skipped",
        )
        for boundary in (e for e in branch if e.kind == BOUNDARY):
            metadata = boundary.usage or {}
            trigger = metadata.get("trigger")
            trigger = trigger if isinstance(trigger, str) else "unknown"
            before = as_int(metadata.get("preTokens"), None)
            self.builder.metadata.setdefault("rewound_compactions", []).append(
                {"line": boundary.line, "trigger": trigger, "tokens_before": before}
            )
            self.builder.info(
                boundary.line,
                "rewound-compaction",
                f"the {trigger} compaction at line {boundary.line} is on a rewound branch: the "
                "conversation went on from the line before it, without the compaction",
            )
