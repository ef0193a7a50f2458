"""The measured process of ``bench/analyze_phases.py``: ``ctxscope COMMAND --json FILE`` run as
the console script runs it, with the process's CPU time taken as each step ends.

Run: ``python bench/_phase_clock.py COMMAND --json FILE`` (the command's own arguments). The
command's functions are wrapped where its module calls them (:data:`HOOKS`), so the process does
what the command does, in its order, and nothing else: no step is run by a copy of the command's
code. Just before the command's exit (``tui.cli.main._exit_now``) one JSON line on standard error
gives each step's CPU seconds (user + system); they add up to the process's CPU from its start to
that line, and what follows (the flush, the code cache's write, the exit) is the measuring
process's to work out from the whole process's CPU time (``wait4``): the ``exit`` step.

Under callgrind, ``--dump-before=time_process_time`` makes one profile part per step (the clock
is the only caller of ``time.process_time`` in the command), in the order of :func:`steps`.

This script imports nothing the command does not (``sys``, ``os`` and ``time`` are loaded with
the interpreter), so the ``start`` step is the interpreter's own start.
"""

from __future__ import annotations

import os
import sys
import time

HOOKS: dict[str, tuple[str, tuple[tuple[str, str | None, str | None], ...]]] = {
    "analyze": (
        "tui.cli.commands.analyze",
        (
            ("load_or_fail", "args", "load"),
            ("priced", None, "cost"),
            ("replayed", None, "replay"),
            ("diagnosed", None, "report"),
            ("write_json", None, "json"),
        ),
    ),
    "breakdown": (
        "tui.cli.commands.breakdown",
        (
            ("load_or_fail", "args", "load"),
            ("breakdown_rows", None, "breakdown"),
            ("session_cost_rows", None, "cost"),
            ("keep_until_exit", "json", None),
        ),
    ),
}
"""For each command: its module, and the functions of it whose call or return ends a step, in
the command's order: (the name the module calls, the step ending as it is called, the step
ending as it returns)."""

FIRST_STEPS = ("start", "imports")
"""The steps before the command's own: the interpreter's start (up to this script's first line)
and the imports (``tui.cli.main`` and ``_import_command``: the command's module)."""

LAST_STEP = "exit"
"""What follows the last mark: the rest of the command, its output's flush, the exit."""


def steps(command: str) -> tuple[str, ...]:
    """The steps of ``command`` in the order they end."""
    ends = [name for _attribute, *names in HOOKS[command][1] for name in names if name]
    return (*FIRST_STEPS, *ends, LAST_STEP)


class Clock:
    """The process's CPU seconds (user + system) in consecutive steps: each :meth:`lap` ends one
    (a step ended twice adds up)."""

    def __init__(self, start: float | None = None) -> None:
        """``start``: the CPU time the first step starts at (default: now; 0: the process's
        start)."""
        self.figures: dict[str, float] = {}
        self._last = time.process_time() if start is None else start

    def lap(self, name: str) -> None:
        now = time.process_time()
        self.figures[name] = self.figures.get(name, 0.0) + now - self._last
        self._last = now

    def json_line(self) -> bytes:
        """The figures as one line of JSON (no json module: the command imports none)."""
        items = ", ".join(f'"{name}": {value!r}' for name, value in self.figures.items())
        return ("{" + items + "}\n").encode()


def timed(function: object, clock: Clock, before: str | None, after: str | None) -> object:
    """``function``, with the step ``before`` ended as it is called and ``after`` as it returns."""

    def run(*args: object, **kwargs: object) -> object:
        if before:
            clock.lap(before)
        value = function(*args, **kwargs)  # type: ignore[operator]
        if after:
            clock.lap(after)
        return value

    return run


def hook(clock: Clock, command: str) -> None:
    """Wrap ``tui.cli.main``'s command import and exit, and then the command's own steps."""
    from tui.cli import main as cli

    import_command, exit_now = cli._import_command, cli._exit_now
    module_name, hooks = HOOKS[command]

    def imported(name: str) -> None:
        import_command(name)
        module = sys.modules[module_name]
        for attribute, before, after in hooks:
            setattr(module, attribute, timed(getattr(module, attribute), clock, before, after))
        clock.lap("imports")

    def exiting(code: object) -> None:
        os.write(2, clock.json_line())
        exit_now(code)

    cli._import_command = imported
    cli._exit_now = exiting  # type: ignore[assignment]


def main() -> None:
    clock = Clock(start=0.0)
    clock.lap("start")
    sys.argv = ["ctxscope", *sys.argv[1:]]
    if sys.argv[1:2] and sys.argv[1] in HOOKS:
        from tui.cli import main as cli

        hook(clock, sys.argv[1])
        cli.main()
    raise SystemExit(f"usage: _phase_clock.py {{{'|'.join(HOOKS)}}} --json FILE")


if __name__ == "__main__":
    main()
