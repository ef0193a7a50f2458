"""What the session screen's controllers share: each is a hidden widget mounted in the screen.

A controller owns one concern of the screen (loading the file, the live tail, the replay, the
insights). The screen calls it; its workers (``@work``, one group each) post what they bring to
the screen as messages (:mod:`.worker_messages`), and the screen hands each to the controller
that ran the worker, on the UI thread, in the order posted. The controller shows it through the
:class:`~tui.screens.session.view.SessionView` it is given, and says what the other controllers
should hear with messages to the screen, which passes them on. It is a widget only so that it can
run workers: it never draws, and its workers are cancelled when the screen goes away. (Its
workers post to the screen, not to it, because a load starts while the screen composes, before
any controller is mounted.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

if TYPE_CHECKING:
    from tui.screens.session.view import SessionView


class Controller(Widget):
    """A non-visual part of the session screen, given the view it shows things in."""

    DEFAULT_CSS = """
    Controller {
        display: none;
    }
    """

    def __init__(self, view: SessionView) -> None:
        super().__init__()
        self.view = view
        self.display = False
