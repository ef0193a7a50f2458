"""Which lines of a Claude Code transcript are the conversation: the active branch.

Claude Code writes a tree (``uuid`` / ``parentUuid``): a rewind forks it, a compact boundary
starts a new root whose ``logicalParentUuid`` names the leaf before it. The active branch is the
chain from the last line back to its root; lines forked off it by a rewind are left out with a
diagnostic. Parallel tool results and the other block lines of an included API message, which
Claude Code also writes as side branches, are kept.
"""

from __future__ import annotations

from core.formats.base import SessionBuilder
from core.formats.claude_records import ASSISTANT, Entry


def active_entries(
    entries: list[Entry], parents: dict[str, str | None], builder: SessionBuilder
) -> list[Entry]:
    """The entries of the active branch (plus side lines that belong to it), in file order."""
    main = [e for e in entries if not e.sidechain]
    if not main:
        return entries
    # The chain from the last line back to a root.
    chain: set[str] = set()
    uuid: str | None = main[-1].uuid
    while uuid is not None and uuid not in chain and uuid in parents:
        chain.add(uuid)
        uuid = parents[uuid]
    if uuid is not None and uuid not in parents:
        builder.info(
            None,
            "missing-parent",
            f"the conversation refers to a parent line that is not in the file ({uuid}); "
            "earlier lines are kept in file order",
        )

    # For each line off the chain: the chain node it forks from (None: a separate tree).
    fork_of: dict[str, str | None] = {}

    def fork_root(start: str) -> str | None:
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
            node = parents.get(node)
        for visited in path:
            fork_of[visited] = result
        return result

    included_keys = {e.key for e in entries if e.kind == ASSISTANT and e.uuid in chain}
    included_calls = {c.id for e in entries if e.uuid in chain for c in e.calls}
    kept: list[Entry] = []
    abandoned: dict[str, list[int]] = {}
    for entry in entries:
        if entry.uuid in chain or entry.sidechain:
            kept.append(entry)
            continue
        root = fork_root(entry.uuid)
        if root is None:
            kept.append(entry)  # a separate tree (earlier root, broken link): file order
            continue
        if entry.kind == ASSISTANT and entry.key in included_keys:
            kept.append(entry)  # another block line of an included API message
            included_calls.update(c.id for c in entry.calls)
            continue
        if entry.results and all(r[0] in included_calls for r in entry.results):
            kept.append(entry)  # a parallel tool result
            continue
        abandoned.setdefault(root, []).append(entry.line)
    for lines in abandoned.values():
        builder.info(
            lines[0],
            "abandoned-branch",
            f"rewound branch of {len(lines)} line(s) (lines {lines[0]}–{lines[-1]}) "
            "is not on the active conversation; skipped",
        )
    return kept
