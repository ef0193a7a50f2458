"""Click's messages without a catalogue folder (tui.cli.click_text): given back unchanged, as
:func:`gettext.gettext` gives them, without :mod:`locale` imported; with a catalogue (a folder
that exists, a domain bound elsewhere) click's texts are translated as before.

Each case runs in a child process: the set-up changes click's modules as the console script's
start does."""

from __future__ import annotations

import gettext
import json
import os
import struct
from pathlib import Path

import pytest

from tests.support.processes import run_python

HELP = "Show this message and exit."
TRANSLATED = "Diese Hilfe zeigen und beenden."

MESSAGES = [HELP, "Show the version and exit.", "Missing argument", "Error", "Usage:", "x"]

START = """
import gettext, json, sys
{before}
import tui.cli.main
import click
modules = [m for n, m in sys.modules.items() if n.partition(".")[0] == "click" and hasattr(m, "_")]
{after}
print(json.dumps({{
    "quick": sorted(m.__name__ for m in modules if m._ is not gettext.gettext),
    "locale": "locale" in sys.modules,
    "texts": [[m._(text) for m in modules] for text in {messages!r}],
    "asked": [gettext.gettext(text) for text in {messages!r}],
    "help": tui.cli.main.cli.get_help_option(click.Context(tui.cli.main.cli)).help,
}}))
"""


def _run(before: str = "", after: str = "", **env: str) -> dict[str, object]:
    code = START.format(before=before, after=after, messages=MESSAGES)
    environment = {**os.environ, **env}
    result: dict[str, object] = json.loads(run_python(code, env=environment))
    return result


def _catalogue(folder: Path, language: str = "de") -> Path:
    """A GNU catalogue of the ``messages`` domain translating click's help option's text."""
    pairs = sorted(
        [(b"", b"Content-Type: text/plain; charset=UTF-8\n"), (HELP.encode(), TRANSLATED.encode())]
    )
    count = len(pairs)
    originals_at = 7 * 4
    translations_at = originals_at + count * 8
    data_at = translations_at + count * 8
    table_o, table_t, data = b"", b"", b""
    for original, _ in pairs:
        table_o += struct.pack("<2I", len(original), data_at + len(data))
        data += original + b"\0"
    for _, translation in pairs:
        table_t += struct.pack("<2I", len(translation), data_at + len(data))
        data += translation + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, count, originals_at, translations_at, 0, 0)
    where = folder / language / "LC_MESSAGES"
    where.mkdir(parents=True)
    (where / "messages.mo").write_bytes(header + table_o + table_t + data)
    return folder


def test_without_a_catalogue_folder_clicks_texts_are_given_back_without_asking() -> None:
    """The default catalogue folder does not exist (this interpreter's): every click module's
    ``_`` is the quick one, gives each text back as gettext does, and locale is not imported."""
    if Path(getattr(gettext, "_default_localedir", "")).is_dir():
        pytest.skip("this interpreter has a catalogue folder: click asks gettext")
    done = _run(LANGUAGE="de", LANG="de_DE.UTF-8")
    quick = done["quick"]
    assert isinstance(quick, list) and "click.core" in quick and "click.types" in quick
    assert done["locale"] is False
    texts = done["texts"]
    assert isinstance(texts, list)
    assert texts == [[text] * len(texts[0]) for text in MESSAGES]
    assert done["asked"] == MESSAGES
    assert done["help"] == HELP


def test_with_a_catalogue_folder_click_asks_gettext(tmp_path: Path) -> None:
    """Where the default folder exists (here one with a German catalogue), click's modules keep
    :func:`gettext.gettext` and its help option is translated."""
    folder = _catalogue(tmp_path / "locale")
    done = _run(before=f"gettext._default_localedir = {str(folder)!r}", LANGUAGE="de")
    assert done["quick"] == []
    assert done["help"] == TRANSLATED


def test_a_domain_bound_elsewhere_is_asked_about(tmp_path: Path) -> None:
    """A program that binds click's domain to a folder after the start: the quick ``_`` asks
    gettext, which translates."""
    folder = _catalogue(tmp_path / "locale")
    done = _run(after=f"gettext.bindtextdomain('messages', {str(folder)!r})", LANGUAGE="de")
    texts = done["texts"]
    assert isinstance(texts, list)
    assert set(texts[0]) == {TRANSLATED}
    assert done["help"] == TRANSLATED
    assert done["asked"] == [TRANSLATED, *MESSAGES[1:]]
