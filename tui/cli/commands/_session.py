"""The session and policy a headless command works on: load or fail, the one replayer per
session, progress on standard error.

Kept apart from :mod:`tui.cli.render` (rich's tables and panels) so that a command printing JSON
imports neither rich nor Textual: the progress bar imports rich only when standard error is a
terminal, and a command imports :mod:`tui.cli.render` only when it prints a table.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from core.model.session import Session
from core.model.terminal_text import safe
from core.policy import Policy
from core.replay.policies import INFERRED

if TYPE_CHECKING:  # (the replay engine: only for a command that replays, on first use)
    from core.replay import Replayer, ReplayResult


def fail(command: str, message: str) -> NoReturn:
    """Exit with status 2 after one line on standard error saying why."""
    first_line = " ".join(safe(str(message).replace("\n", " ")).split())
    click.echo(f"ctxscope {command}: {first_line}", err=True)
    sys.exit(2)


# --- progress -------------------------------------------------------------------------------------


@contextmanager
def progress_reporter(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A ``(done, total)`` callback drawing a bar on standard error, or None when stderr is not a
    terminal (then nothing is drawn at all)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=max(total, 1))

        yield update


def load_progress(update: Callable[[int, int], None] | None) -> Any:
    """Adapt a ``(done, total)`` callback to the loaders' ``(bytes, total, messages)`` one."""
    if update is None:
        return None

    def on_load(read: int, total: int, _messages: int) -> None:
        update(read, total)

    return on_load


# --- loading and replaying -----------------------------------------------------------------------


def resolve_policy_or_fail(command: str, spec: str) -> Policy:
    """A preset or TOML policy; on a bad one, one line naming the file and the field, exit 2."""
    from core.policy import PolicyError, resolve_policy

    try:
        return resolve_policy(spec)
    except PolicyError as exc:
        fail(command, str(exc))


def load_or_fail(
    command: str,
    path: str,
    *,
    window: int | None,
    policy_spec: str | None,
) -> tuple[Session, Policy]:
    """Load the session and its policy (the recording agent's preset when none is named).

    The recording agent's preset follows the version the session records; ``inferred`` is that
    preset with the threshold the session's own compactions show. Exits with status 2 and one
    line on standard error for an unusable file or a bad policy.
    """
    from core.formats import LoadError, load_session
    from core.replay import native_policy

    named = policy_spec if policy_spec not in (None, INFERRED) else None
    policy = resolve_policy_or_fail(command, named) if named else None
    try:
        with progress_reporter("loading") as update:
            session = load_session(path, window=window, progress=load_progress(update))
    except LoadError as exc:
        fail(command, str(exc))
    except OSError as exc:  # a folder without permission, a device …
        fail(command, f"{path}: cannot read ({exc.strerror or exc})")
    if policy_spec is None:
        return session, native_policy(session)
    if policy is None or policy.name == native_policy(session).name:
        return session, load_policy_for(session, policy_spec)
    return session, policy


def load_policy_for(session: Session, spec: str) -> Policy:
    """The policy ``spec`` names, for ``session``: the recording agent's preset as the session's
    version behaves, ``inferred`` from the session's own compactions, or any preset or file."""
    from core.replay import native_policy

    native = native_policy(session)
    if spec == INFERRED:
        return replayer_of(session).inferred_policy()
    if spec == native.name:
        return native
    return resolve_policy_or_fail("policy", spec)


_REPLAYERS: dict[int, Replayer] = {}
"""The one replayer of each session a command loaded (its counts and caches are shared by the
inferred policy, the replay and the report)."""


def replayer_of(session: Session) -> Replayer:
    """The replayer of ``session`` (made on first use)."""
    from core.replay import Replayer

    replayer = _REPLAYERS.get(id(session))
    if replayer is None or replayer.session is not session:
        replayer = _REPLAYERS[id(session)] = Replayer(session)
    return replayer


def replay_with_progress(session: Session, policy: Policy) -> ReplayResult:
    """Replay ``session`` under ``policy``, with a progress bar on standard error (a terminal)."""
    with progress_reporter("replaying") as update:
        return replayer_of(session).run(policy, progress=update)


def write_stdout_bytes(data: bytes) -> None:
    """UTF-8 JSON straight to standard output (no text copy of a 100 MB session's document)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (a test's StringIO)
        sys.stdout.write(data.decode())
    else:
        sys.stdout.flush()
        buffer.write(data)
