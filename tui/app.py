"""The ctxscope terminal UI: the app, its global keys, and :func:`run_app` (``ctxscope [PATH]``).

The app starts on the session picker; opening a session pushes a
:class:`~tui.screens.session.SessionScreen` on top (Esc comes back). A session that cannot be
opened never raises: the session screen dismisses with the error text and the picker shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path, PurePath
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Input

from core.analysis_cache import READ_ONLY_ENV
from core.formats.file_kind import unreadable_reason
from core.policy import Policy, PolicyError, resolve_policy
from tui.commands_palette import CtxscopeCommands
from tui.css_memo import share_parsed_css
from tui.keymap import config_path, read_keymap
from tui.malloc_arenas import limit_malloc_arenas
from tui.messages import JumpToMessage
from tui.pydantic_plugins import no_pydantic_plugins
from tui.screen_state import INFERRED
from tui.screens.help import HelpScreen
from tui.screens.picker import DiscoverFn, PickerScreen
from tui.screens.session import SessionScreen
from tui.screens.session.heap import freeze_heap
from tui.worker_threads import use_context_threads

SWITCH_INTERVAL_S = 0.001
"""Thread switch interval while the app runs (Python's default is 5 ms)."""
DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"
TERMINAL_CHECK_S = 1.0
"""How often the app checks that its terminal is still there (a closed window, a killed tmux)."""
HANGUP_EXIT_CODE = 128 + signal.SIGHUP
"""The exit status after the terminal went away, as a shell reports a process ended by SIGHUP."""


def _stylesheets(*screens: type[Screen[Any]]) -> list[str | PurePath]:
    """The files of the screens' ``CSS_PATH``, in order."""
    paths: list[str | PurePath] = []
    for screen in screens:
        css = screen.CSS_PATH
        if isinstance(css, list):
            paths.extend(css)
        elif css is not None:
            paths.append(css)
    return paths


class CtxscopeApp(App[None]):
    """Session picker + session screen."""

    TITLE = "ctxscope"
    CSS_PATH: ClassVar[list[str | PurePath]] = [
        Path(__file__).with_name("theme.tcss"),
        *_stylesheets(PickerScreen, SessionScreen),
    ]
    """What the screens share, and the stylesheets of the two screens an open shows (each
    screen and widget carries its own styles). Read here with the app's own, in the order the
    screens brought them before: Textual parses every stylesheet again from scratch, and
    restyles every widget, each time a screen brings one it has not read (twice per open, 40 ms
    of the interface thread while the session is read)."""
    DEFAULT_MODE = "picker"
    COMMANDS = App.COMMANDS | {CtxscopeCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("t", "toggle_theme", "Theme", show=False, id="app.toggle-theme"),
    ]

    def __init__(
        self,
        path: str | None = None,
        *,
        window: int | None = None,
        policy: Policy | None = None,
        discover: DiscoverFn | None = None,
        live: bool = True,
        use_cache: bool = True,
        jobs: int | None = None,
        read_only: bool = False,
    ) -> None:
        """``use_cache``, ``jobs``: the picker's analysis of the sessions it lists reads and
        fills the analysis cache, in ``jobs`` processes (default one per core; 1: in a thread).
        ``read_only``: the UI writes no file the user names (saving a policy is refused)."""
        share_parsed_css()  # (before the app's stylesheet is made: each sheet parsed once)
        super().__init__()
        limit_malloc_arenas()  # (before the workers' threads start)
        no_pydantic_plugins()  # (else looked for inside the first replay: ~12 ms)
        freeze_heap()  # (start-up: what the imports made is never garbage)
        self.read_only = read_only
        self.start_path = path
        self.window = window
        self.policy = policy
        self.live = live
        self._switch_interval = sys.getswitchinterval()
        self._clashes_told: set[str] = set()
        self.theme = DARK_THEME
        # The picker is the base screen of the app's one mode, not its get_default_screen():
        # Textual loads a mode's screen's own stylesheet (CSS_PATH), not the default screen's.
        # (opened with a session, the picker under it is built once it is uncovered)
        deferred = path is not None and self._openable(path)
        self.add_mode(
            "picker",
            lambda: PickerScreen(discover, use_cache=use_cache, jobs=jobs, deferred=deferred),
        )

    TYPED_KEYS = frozenset({"quit", "help", "toggle_theme"})
    """App keys that are plain characters: while a text field has the focus they type into it,
    so the footer does not offer them (Esc leaves the field)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in self.TYPED_KEYS and isinstance(self.focused, Input))

    def on_load(self) -> None:
        # before any worker runs: a thread worker must not stay in its pool thread's context
        use_context_threads(asyncio.get_running_loop())

    def on_mount(self) -> None:
        self._apply_user_keymap()
        # A CPU-bound worker (loader, replay) holds the interpreter for up to the switch interval
        # at a time; a shorter one lets the UI thread draw a frame between its slices.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._watch_terminal()
        if self.start_path is not None:
            if self._openable(self.start_path):
                self.open_session(self.start_path)
            else:  # after the picker is up, so the error has somewhere to be shown
                self.call_after_refresh(self.open_session, self.start_path)

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)

    # -- the user's keymap -------------------------------------------------------------------------

    def _apply_user_keymap(self) -> None:
        """Apply ``[keymap]`` of the config file (:mod:`tui.keymap`); say what was wrong in it."""
        keymap = read_keymap(config_path())
        if keymap.keys:
            self.set_keymap(keymap.keys)
        for problem in keymap.problems:
            self.notify(problem, title="Keymap", severity="warning", timeout=10)

    def handle_bindings_clash(self, clashed_bindings: set[Binding], node: DOMNode) -> None:
        """A key of the user's keymap took one that another binding had: say so, once."""
        for binding in clashed_bindings:
            name = binding.id or binding.action
            if name in self._clashes_told:
                continue
            self._clashes_told.add(name)
            self.notify(
                f"{binding.key} now does another binding's action: {name} has no key here "
                "(change it in [keymap] too)",
                title="Keymap",
                severity="warning",
                timeout=10,
            )

    # -- the terminal going away -------------------------------------------------------------------

    def _watch_terminal(self) -> None:
        """Exit when the terminal goes away: on SIGHUP (the window or the tmux session closed)
        or SIGTERM, and when the terminal stops being one without a signal. Textual's input
        thread would otherwise read end-of-file over and over and keep a core busy."""
        loop = asyncio.get_running_loop()
        for number in (signal.SIGHUP, signal.SIGTERM):
            # (not on Windows, nor in a thread that is not the main one)
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self.terminal_gone)
        if self.is_headless:
            return
        fd = _terminal_fd()
        if fd is not None:
            self.set_interval(TERMINAL_CHECK_S, lambda: self._check_terminal(fd), name="terminal")

    def _check_terminal(self, fd: int) -> None:
        if not os.isatty(fd):  # a hung-up terminal is no longer a tty (reads give EOF)
            self.terminal_gone()

    def terminal_gone(self) -> None:
        """The terminal went away: stop every worker and exit (status 129)."""
        if self._exit:
            return
        self.workers.cancel_all()  # (the replay's thread also stops as its screen unmounts)
        self.exit(return_code=HANGUP_EXIT_CODE)

    @staticmethod
    def _openable(path: str) -> bool:
        expanded = Path(path).expanduser()
        return "#" in path or expanded.is_file()

    @property
    def picker(self) -> PickerScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, PickerScreen):
                return screen
        return None

    @property
    def session_screen(self) -> SessionScreen | None:
        for screen in reversed(self.screen_stack):
            if isinstance(screen, SessionScreen):
                return screen
        return None

    def open_session(self, path: str) -> None:
        """Open the session at ``path``; a path that cannot be opened is reported in the picker."""
        expanded = str(Path(path).expanduser())
        # A stat, never an open: a FIFO, a device or a loop of links is named here at once.
        reason = None if "#" in path else unreadable_reason(expanded, directories=True)
        if reason is not None:
            self.report_error(f"{path}: {reason}")
            return
        if Path(expanded).is_dir() and not any(Path(expanded).iterdir()):
            self.report_error(f"{path}: an empty folder, not a session")
            return

        def closed(error: str | None) -> None:
            if error:  # the session screen only closes: the picker's line and one notice
                self.report_error(error)

        self.push_screen(
            SessionScreen(expanded, window=self.window, policy=self.policy, live=self.live),
            closed,
        )

    def report_error(self, text: str, *, notify: bool = True) -> None:
        """Show ``text`` in the picker (and as a notification, unless ``notify`` is False: the
        screen that failed said it already)."""
        picker = self.picker
        if picker is not None and picker.is_mounted:
            picker.show_error(text)
        if notify:
            self.notify(text, title="Cannot open session", severity="error", timeout=8)

    def on_picker_screen_open_session(self, event: PickerScreen.OpenSession) -> None:
        self.open_session(event.path)

    def on_jump_to_message(self, event: JumpToMessage) -> None:
        """A view on another screen (compaction, overflow) asked to select a message."""
        screen = self.session_screen
        if screen is not None:
            screen.select_message(event.message_index)

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.theme == DARK_THEME else DARK_THEME

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


def _terminal_fd() -> int | None:
    """The file descriptor of the terminal the app draws on (None: not a terminal)."""
    for stream in (sys.__stdout__, sys.__stdin__):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream is not None and os.isatty(stream.fileno()):
                return stream.fileno()
    return None


def run_app(
    path: str | None = None,
    window: int | None = None,
    policy_name: str | None = None,
    *,
    read_only: bool = False,
) -> None:
    """Run the TUI (``ctxscope [PATH] [--window N] [--policy P] [--read-only]``).

    A bad ``--policy`` or ``--window`` is a one-line error on stderr and exit status 2; a bad
    PATH opens the picker with the error shown there. ``read_only``: no file is written (saving
    a policy is refused; the caches are read, not written: ``CTXSCOPE_READ_ONLY=1``, which the
    picker's worker processes inherit).
    """
    policy: Policy | None = None
    if policy_name == INFERRED:  # worked out from the session once it is replayed
        policy = Policy(name=INFERRED)
    elif policy_name is not None:
        try:
            policy = resolve_policy(policy_name)
        except PolicyError as exc:
            print(f"ctxscope: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    if window is not None and window <= 0:
        print(
            f"ctxscope: --window must be a positive number of tokens, not {window}", file=sys.stderr
        )
        raise SystemExit(2)
    if read_only:  # the caches too, in this process and in the picker's workers
        os.environ[READ_ONLY_ENV] = "1"
    app = CtxscopeApp(path, window=window, policy=policy, read_only=read_only)
    app.run()
    if app.return_code:
        raise SystemExit(app.return_code)
