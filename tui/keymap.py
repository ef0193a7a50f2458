"""The user's keymap: ``[keymap]`` in ``$XDG_CONFIG_HOME/ctxscope/config.toml`` (by default
``~/.config/ctxscope/config.toml``) maps a binding id to the key or keys that replace its own.

```toml
[keymap]
"session.overflow" = "v"             # one key
"messages.down" = "down,ctrl+n"       # several, comma-separated
"app.quit" = ["q", "ctrl+q"]          # or a list
```

Every binding of the app, its screens and its widgets has an id (``Binding(id=...)``); the app
hands the keymap to Textual (:meth:`textual.app.App.set_keymap`), so the footer shows the keys in
force, and the help screen shows them too (:func:`keys_in_force`). A file that cannot be read or
an entry that is wrong is a problem to tell the user about, never a crash.
"""

from __future__ import annotations

import importlib
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import format_key

CONFIG_DIR = "ctxscope"
CONFIG_FILE = "config.toml"


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where ctxscope's config file is: ``$XDG_CONFIG_HOME/ctxscope/config.toml``, or under
    ``~/.config`` when the variable is unset or empty."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / CONFIG_DIR / CONFIG_FILE


@dataclass
class UserKeymap:
    """The keymap read from the config file, and what was wrong with it."""

    keys: dict[str, str] = field(default_factory=dict)
    """Binding id → key string (comma-separated keys), as :meth:`App.set_keymap` takes it."""
    problems: list[str] = field(default_factory=list)
    """One line per thing that was wrong (the rest of the file still applies)."""


def read_keymap(path: Path, known_ids: frozenset[str] | None = None) -> UserKeymap:
    """Read the ``[keymap]`` table of the config file at ``path`` (no file: an empty keymap).

    ``known_ids``: the binding ids there are (:func:`binding_ids` when None); an entry for
    another id is a problem, not applied."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return UserKeymap()
    except (OSError, UnicodeDecodeError) as exc:
        return UserKeymap(problems=[f"{path}: cannot read it ({exc})"])
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return UserKeymap(problems=[f"{path}: not valid TOML ({exc})"])
    table = document.get("keymap", {})
    if not isinstance(table, dict):
        return UserKeymap(problems=[f"{path}: [keymap] must be a table of binding id = key"])
    if not table:
        return UserKeymap()
    known = binding_ids() if known_ids is None else known_ids
    keymap = UserKeymap()
    for binding_id, value in table.items():
        keys = _key_string(value)
        if binding_id not in known:
            keymap.problems.append(f"{path}: no binding has the id {binding_id!r}")
        elif keys is None:
            keymap.problems.append(
                f'{path}: {binding_id} = {value!r}: give a key ("v", "ctrl+n"), several '
                "separated by commas, or a list of them"
            )
        else:
            keymap.keys[binding_id] = keys
    return keymap


def _key_string(value: object) -> str | None:
    """``"a,b"`` or ``["a", "b"]`` as Textual's ``"a,b"``; None when it is not keys."""
    items: list[object]
    if isinstance(value, str):
        items = list(value.split(","))
    elif isinstance(value, list):
        items = list(value)
    else:
        return None
    keys = [item.strip() for item in items if isinstance(item, str)]
    if len(keys) != len(items) or not keys or any(not key or " " in key for key in keys):
        return None
    return ",".join(keys)


# -- the bindings there are ----------------------------------------------------------------------


def project_bindings() -> Iterator[tuple[type[DOMNode], Binding]]:
    """Every binding the app, its screens and its widgets declare (the classes of :mod:`tui`)."""
    # the app imports every screen and widget, but the compaction screen (imported on first use)
    for module in ("tui.app", "tui.screens.compaction"):
        importlib.import_module(module)

    seen: set[type[DOMNode]] = set()
    pending: list[type[DOMNode]] = [DOMNode]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                pending.append(sub)
    for cls in sorted(seen, key=lambda c: (c.__module__, c.__qualname__)):
        if not cls.__module__.startswith("tui."):
            continue
        for binding in cls.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding):
                yield cls, binding
            else:  # a (key, action[, description]) tuple: a binding without an id
                yield cls, Binding(*binding)


def binding_ids() -> frozenset[str]:
    """The ids of every binding of :func:`project_bindings`."""
    return frozenset(b.id for _cls, b in project_bindings() if b.id)


def keymap_of(app: App[Any]) -> Mapping[str, str]:
    """The keymap in force in ``app`` (what :meth:`App.set_keymap` was given, its keys in
    Textual's long form: ``question_mark``)."""
    keymap: Mapping[str, str] = getattr(app, "_keymap", {})
    return keymap


def keys_in_force(binding_id: str, keymap: Mapping[str, str]) -> str | None:
    """How the keys of ``binding_id`` read when the keymap changes them (``"v"``, ``"^n j"``);
    None when the keymap leaves them as they are."""
    keys = keymap.get(binding_id)
    return format_keys(keys) if keys else None


def format_keys(keys: str) -> str:
    """Comma-separated keys as the footer shows them, space-separated (``"down,ctrl+n"`` →
    ``"↓ ^n"``)."""
    return " ".join(_key_display(key) for key in keys.split(","))


def _key_display(key: str) -> str:
    """A key as the footer shows it (``ctrl+n`` → ``^n``, ``question_mark`` → ``?``)."""
    *modifiers, name = key.split("+")
    shown = format_key(name)
    if modifiers == ["ctrl"]:
        return f"^{shown}"
    return "+".join([*modifiers, shown])
