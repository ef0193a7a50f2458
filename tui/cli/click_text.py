"""Click's messages where no catalogue can translate them: given back as they are, without
asking :mod:`gettext`.

Click passes each of its texts (an option's help, an error) through :func:`gettext.gettext`,
which looks for a catalogue file of the user's languages at every call: the first call imports
:mod:`locale` and its table of aliases, each later one joins and tests paths (~6 M instructions
in a one-shot command's start, for the options click makes). A catalogue of click's domain can
only be found under the default folder (``<prefix>/share/locale``) unless a program binds the
domain elsewhere; where that folder does not exist, no call can find one, and each gives its
message back unchanged. :func:`untranslated_click` then lets click's modules do that at once;
a program that binds the domain or changes the current one is asked about as before.
"""

from __future__ import annotations

import gettext
import os
import sys
from collections.abc import Callable

DOMAIN = "messages"
"""The domain :func:`gettext.gettext` reads: click binds none of its own."""


def untranslated_click() -> bool:
    """Give click's already imported modules a ``_`` that returns each message unchanged while
    no catalogue can be found (the default folder missing, the domain neither changed nor bound
    elsewhere), and asks :func:`gettext.gettext` otherwise. Whether it did (False: a catalogue
    folder exists, or this :mod:`gettext` keeps its state otherwise: nothing changed)."""
    folder = getattr(gettext, "_default_localedir", None)
    if not isinstance(folder, str) or os.path.isdir(folder) or not _state_known():
        return False
    ask = gettext.gettext
    quick = _untranslated(ask)
    changed = False
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] == "click" and getattr(module, "_", None) is ask:
            module._ = quick  # type: ignore[attr-defined]
            changed = True
    return changed


def _state_known() -> bool:
    """:mod:`gettext` keeps its current domain and its bindings where this module reads them."""
    return getattr(gettext, "_current_domain", None) == DOMAIN and isinstance(
        getattr(gettext, "_localedirs", None), dict
    )


def _untranslated(ask: Callable[[str], str]) -> Callable[[str], str]:
    def click_gettext(message: str) -> str:
        """``message`` unchanged while no catalogue can be found; else :func:`gettext.gettext`."""
        if _state_known() and DOMAIN not in gettext._localedirs:  # type: ignore[attr-defined]
            return message
        return ask(message)

    return click_gettext
