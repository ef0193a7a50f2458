"""The session screen: one screen that owns four controllers.

- :mod:`.worker_messages`: what the workers post back, what the controllers tell the screen, and
  how often the workers report progress;
- :mod:`.heap`: keeping a loaded session out of the garbage collector's way;
- :mod:`.view`: the screen's state and widgets, and selecting a message in all of them;
- :mod:`.controller`: what the controllers share (each is a hidden widget given the view);
- :mod:`.loading`: reading the file, a big one in two steps (its first part shown at once);
- :mod:`.live_tail`: following a file that is still being written;
- :mod:`.replaying`: replaying under the active policy;
- :mod:`.insights`: the breakdown, the cost and the compaction reports of each replay;
- :mod:`.screen`: :class:`SessionScreen` itself: its keys, search, overflow and compaction views,
  the policy panel, the breakdown band, and passing what one controller says to the others.
"""

from tui.screens.session.screen import SessionScreen

__all__ = ["SessionScreen"]
