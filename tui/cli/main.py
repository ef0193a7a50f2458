"""The ``ctxscope`` command line.

Each subcommand lives in its own module under ``tui/cli/commands/`` and is imported only when it
runs, so ``ctxscope --help`` and ``ctxscope truncate`` start fast and never load Textual. Its own
imports run with the cyclic garbage collector off, and what they built is then frozen (left out of
every later collection): click's objects live as long as the process, and the collections their
allocation triggered (18 in a command's start) walked them for nothing, as did every later one.
"""

from __future__ import annotations

import gc

# name -> (module, attribute, one-line help shown by --help without importing the module)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "analyze": (
        "tui.cli.commands.analyze",
        "analyze",
        "Why did this session overflow? Replay it under a policy and diagnose.",
    ),
    "replay": (
        "tui.cli.commands.replay",
        "replay",
        "Replay a session under a policy and print the timeline.",
    ),
    "compare": (
        "tui.cli.commands.compare",
        "compare",
        "Replay a session under several policies, side by side.",
    ),
    "breakdown": (
        "tui.cli.commands.breakdown",
        "breakdown_command",
        "What fills the window at every call, and what each call cost.",
    ),
    "compactions": (
        "tui.cli.commands.compactions",
        "compactions_command",
        "Why each compaction ran, what its summary forgot, what it cost.",
    ),
    "fidelity": (
        "tui.cli.commands.fidelity",
        "fidelity",
        "Check that each agent's own preset compacts where the agent did.",
    ),
    "export": (
        "tui.cli.commands.export",
        "export_command",
        "Export many sessions as Parquet tables (sessions, calls, compactions).",
    ),
    "fleet": (
        "tui.cli.commands.fleet",
        "fleet_command",
        "Analyse many sessions (default: all on this machine), fullest first.",
    ),
    "policy": ("tui.cli.commands.policy", "policy", "Show or dump a policy preset as TOML."),
    "report": (
        "tui.cli.commands.html_report",
        "report",
        "Write one session as a self-contained HTML page.",
    ),
    "truncate": (
        "tui.cli.commands.truncate",
        "truncate",
        "Truncate stdin to stdout as T15 would, spilling the full output.",
    ),
    "convert": ("tui.cli.commands.convert", "convert", "Convert a session to ctxscope JSONL."),
    "serve": (
        "tui.cli.commands.serve",
        "serve",
        "Serve the terminal UI to a web browser (textual-serve).",
    ),
    "sessions": (
        "tui.cli.commands.sessions",
        "sessions",
        "List the agent sessions found on this machine.",
    ),
    "mock-llm": (
        "tui.cli.commands.mock_llm",
        "mock_llm",
        "Run a local OpenAI-compatible mock LLM server.",
    ),
}


ONE_SHOT = frozenset(COMMANDS) - {"mock-llm"}
"""Commands that compute, print and end: their process ends without tearing its heap down."""


_COLLECTING = gc.isenabled()
gc.disable()  # (below: click's thousands of objects, alive as long as the process)
try:
    import importlib
    import os
    import sys
    from typing import Any, NoReturn

    if sys.argv[1:2] and sys.argv[1] in ONE_SHOT:
        from tui.cli import lazy_modules

        lazy_modules.defer()  # (before anything imports them: the cache's imports do)
        # (the code click generates as it loads, its regular expressions and named tuples, is
        # read from the cache folder too: :func:`_import_command`)
        from tui.cli import code_cache

        code_cache.install()
    import click

    from tui.cli.click_text import untranslated_click

    untranslated_click()  # (before the options below ask for their help texts)
finally:
    if _COLLECTING:
        gc.freeze()  # (they are never garbage: no later collection walks them either)
        gc.enable()


def _nearest_command(word: str) -> str | None:
    """The command ``word`` most likely misspells, when ``word`` is no existing path."""
    if os.path.lexists(word) or os.sep in word:
        return None
    import difflib  # only for a word that is no command

    matches = difflib.get_close_matches(word.lower(), [*COMMANDS, "open"], n=1, cutoff=0.75)
    return matches[0] if matches else None


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "open":
            return open_command
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _help = entry
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # Anything that is not a subcommand name is a session path for the TUI, unless no
        # such path exists and the word is a command misspelt ("analyse" for "analyze").
        if args and args[0] not in COMMANDS and args[0] != "open" and not args[0].startswith("-"):
            nearest = _nearest_command(args[0])
            if nearest is not None:
                ctx.fail(f"No such command '{args[0]}'. Did you mean '{nearest}'?")
            return "open", open_command, args
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.command(name="open")
@click.argument("path", required=False, type=click.Path())
@click.option(
    "--window",
    type=int,
    default=None,
    help="Context window to assume when the session does not record one.",
)
@click.option(
    "--policy", "policy_name", default=None, help="Policy preset name or TOML file to start with."
)
@click.option(
    "--read-only",
    is_flag=True,
    help="Write no file (saving a policy is refused); ctxscope serve runs each browser's so.",
)
def open_command(
    path: str | None, window: int | None, policy_name: str | None, read_only: bool
) -> None:
    """Open the terminal UI on PATH (or on the session picker)."""
    from tui.app import run_app  # Textual is imported only when the UI runs

    run_app(path=path, window=window, policy_name=policy_name, read_only=read_only)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(package_name="ctxscope")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """ctxscope: a debugger for the context window of coding agents.

    \b
    ctxscope               open the session picker
    ctxscope PATH          open a session (Claude Code, Codex, pi, opencode, ctxscope JSONL)
    ctxscope COMMAND ...   run a headless command (below)
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_command)


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point.

    A one-shot command (``analyze``, ``replay``, ``convert`` …) flushes its output and ends the
    process at once: freeing a big session object by object at exit takes longer than loading
    it did (3.7 s after a 100 MB analyze), and nothing is left to clean up (files are written
    and closed, nothing is registered with ``atexit``). The UI and the mock server end as usual.
    """
    args = argv if argv is not None else sys.argv[1:]
    if not args or args[0] not in ONE_SHOT:
        return cli.main(args=args, prog_name="ctxscope")
    _import_command(args[0])
    try:
        cli.main(args=args, prog_name="ctxscope")
    except SystemExit as done:
        _exit_now(done.code)
    _exit_now(0)


def _import_command(name: str) -> None:
    """Import a one-shot command's module (pydantic, the models, the loaders and the replay:
    most of a small session's run) with the cyclic garbage collector off, then freeze what it
    built: those objects live as long as the process, and no collection the load and the
    replay trigger walks them again. Pydantic's plugins (none of ctxscope's business) are not
    looked for (:func:`tui.pydantic_plugins.no_pydantic_plugins`), and the code the libraries generate as they start
    is read from the cache folder (:mod:`tui.cli.code_cache`); pydantic knows the builtin
    default factories without reading their signatures (:func:`_plain_default_factories`), and
    :mod:`typing` checks an annotation's text without comparing it with its special forms
    (:mod:`tui.cli.typing_check`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        from tui.cli import code_cache, typing_check
        from tui.pydantic_plugins import no_pydantic_plugins

        typing_check.install()
        no_pydantic_plugins()
        code_cache.install()  # (its ~600 code objects: no collection walks them either)
        _zoneinfo_from_cache()
        _plain_default_factories()
        importlib.import_module(COMMANDS[name][0])
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def _zoneinfo_from_cache() -> None:
    """Import :mod:`zoneinfo` (pydantic imports it for its time-zone type) with its search path
    given as ``PYTHONTZPATH`` for the import only: the interpreter's own ``TZPATH``, read from
    the cache folder (:func:`tui.cli.code_cache.config_var`), so that :mod:`zoneinfo` does not
    ask :mod:`sysconfig`, which imports the build's data and works out all its variables for
    that one (4.1 M of ~516 M instructions in a small session's ``analyze --json``). The path
    is parsed by the same function either way, so ``zoneinfo.TZPATH`` is what it would have
    been; a ``PYTHONTZPATH`` the environment sets is left to do as it does."""
    if "zoneinfo" in sys.modules or "PYTHONTZPATH" in os.environ:
        return
    from tui.cli import code_cache

    tzpath = code_cache.config_var("TZPATH")
    if tzpath is None:
        return  # (no build path: zoneinfo asks sysconfig as usual)
    os.environ["PYTHONTZPATH"] = tzpath
    try:
        import zoneinfo  # noqa: F401  (its search path is set as it is imported)
    finally:
        os.environ.pop("PYTHONTZPATH", None)


PLAIN_FACTORIES = frozenset({list, dict, set, tuple, frozenset})
"""Default factories that take no argument: a field's ``default_factory=list`` and the like."""


def _plain_default_factories() -> None:
    """Tell pydantic, without asking :func:`inspect.signature`, that ``list``, ``dict`` and the
    other builtin containers take no validated-data argument when they are a field's default
    factory. For a builtin type the signature is parsed from its text signature with
    :mod:`tokenize`, whose regular expression is compiled anew in each process (its text varies
    with the string hashing): 4.5 % of a 2.4 MB session's ``analyze --json`` for 50 fields that
    default to an empty list or dict. The answer is pydantic's own (``False``: ``list(iterable=(),
    /)`` has no required argument, ``dict`` no signature); any other factory is asked as before."""
    try:
        from pydantic._internal import _fields, _generate_schema
    except ImportError:  # (a pydantic whose private modules are laid out otherwise: ask it)
        return
    name = "takes_validated_data_argument"
    original = getattr(_fields, name, None)
    if original is None or getattr(original, "plain_factories_known", False):
        return  # (another pydantic, or done already)

    def takes_validated_data_argument(factory: Any) -> bool:
        if factory in PLAIN_FACTORIES:
            return False
        return bool(original(factory))

    takes_validated_data_argument.plain_factories_known = True  # type: ignore[attr-defined]
    for module in (_fields, _generate_schema):
        if getattr(module, name, None) is original:
            setattr(module, name, takes_validated_data_argument)


def _exit_now(code: Any) -> NoReturn:
    """Flush standard output and error, then end the process without running the teardown."""
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    status = 0 if code is None else int(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: its reader is gone
            status = status or 1
    if "tui.cli.code_cache" in sys.modules:  # (the output is out first: its reader goes on)
        sys.modules["tui.cli.code_cache"].save()
    os._exit(status)


if __name__ == "__main__":  # (``python -m tui.cli.main ...``, as the console script runs it)
    main()
