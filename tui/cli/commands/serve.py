"""``ctxscope serve [PATH]``: the terminal UI in a browser, with textual-serve.

Each browser tab that opens the page gets its own ctxscope process (``python -m tui``) on PATH,
or on the session picker without one, drawn in the page by textual-serve's terminal. The page is
textual-serve's own less its link to Google Fonts (``tui/serve_templates/``): the browser asks
nothing of anyone but this server.

Whoever drives the page can read every session the UI can open, so the server binds to loopback
(127.0.0.1) unless ``--host`` names another address *and* ``--public`` says that is meant; then a
warning says what it exposes. ``--port 0`` picks a free port. The address to open is printed as
``ctxscope serve: http://HOST:PORT/?token=TOKEN``: the token is made at start, and the page, its
websocket and downloads are refused without it; the websocket also refuses another site's
``Origin`` (:mod:`tui.cli.commands.serve_guard`). At most ``--max-sessions`` tabs (default 2) run at
once, each in a terminal of bounded size, and a tab's process ends when the tab closes.

A browser's ctxscope writes no file (``open --read-only``: saving a policy is refused with a
notification, the caches are read and not written) unless ``serve`` is given ``--allow-writes``.
"""

from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

import click

from core.llm.mock_server import is_loopback_host
from tui.cli.commands._options import policy_option, window_option
from tui.cli.commands._session import fail

DEFAULT_MAX_SESSIONS = 2
"""How many browser tabs may run a ctxscope at once unless ``--max-sessions`` says otherwise."""

DEFAULT_PORT = 8000
"""The port served when ``--port`` is not given (textual-serve's own default)."""
TEMPLATES = Path(__file__).resolve().parents[2] / "serve_templates"
"""Our copy of textual-serve's page."""
_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def exposure(host: str) -> str | None:
    """None when serving on ``host`` exposes nothing beyond this machine; else what it exposes,
    in a sentence (the command refuses it without ``--public``, and warns with it)."""
    if is_loopback_host(host):
        return None
    return (
        f"serving on {host or 'every address'} makes every session this ctxscope can open "
        "readable by anyone who can reach the port, with no password"
    )


@click.command(name="serve")
@click.argument("path", required=False, type=click.Path(dir_okay=True))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback also needs --public.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--public",
    is_flag=True,
    help="Allow a --host other than loopback (the sessions become readable from the network).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1, 64),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="How many browser tabs may run a ctxscope at once (each is a process).",
)
@click.option(
    "--allow-writes",
    is_flag=True,
    help="Let the browser's ctxscope write files (saving a policy); refused by default.",
)
@window_option
@policy_option
def serve(
    path: str | None,
    host: str,
    port: int,
    public: bool,
    max_sessions: int,
    allow_writes: bool,
    window: int | None,
    policy_spec: str | None,
) -> None:
    """Serve the terminal UI (on PATH, or on the session picker) to a web browser."""
    danger = exposure(host)
    if danger is not None and not public:
        fail("serve", f"{danger}; pass --public to do it anyway")
    if danger is not None:
        click.echo(f"ctxscope serve: warning: {danger}.", err=True)
    if path is not None and not Path(path.partition("#")[0]).exists():
        fail("serve", f"{path}: no such file or directory")
    if port == 0:
        port = _free_port(host)
    from tui.cli.commands.serve_guard import GuardedServer, new_token  # aiohttp: only when serving

    token = new_token()
    server = GuardedServer(
        app_command(path, window=window, policy_spec=policy_spec, read_only=not allow_writes),
        token=token,
        max_sessions=max_sessions,
        host=host,
        port=port,
        title=f"ctxscope {Path(path).name}" if path else "ctxscope",
        templates_path=TEMPLATES,
    )
    click.echo(f"ctxscope serve: http://{_url_host(host)}:{port}/?token={token}")
    click.echo("ctxscope serve: Ctrl+C stops the server and every session.")
    sys.stdout.flush()
    server.serve()


def app_command(
    path: str | None, *, window: int | None, policy_spec: str | None, read_only: bool = True
) -> str:
    """The shell command textual-serve runs for each browser: this Python, ``-m tui open``
    (``--read-only`` unless writes are allowed)."""
    words = [sys.executable, "-m", "tui", "open"]
    if read_only:
        words.append("--read-only")
    if window is not None:
        words += ["--window", str(window)]
    if policy_spec is not None:
        words += ["--policy", policy_spec]
    if path is not None:
        words.append(str(Path(path.partition("#")[0]).resolve()) + _fragment(path))
    return shlex.join(words)


def _fragment(path: str) -> str:
    _base, mark, session_id = path.partition("#")
    return mark + session_id


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host.strip("[]"), 0))
        port: int = probe.getsockname()[1]
        return port


def _url_host(host: str) -> str:
    """The host part of the address to print (a wildcard names this machine)."""
    if host in _WILDCARDS:
        return socket.getfqdn()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
