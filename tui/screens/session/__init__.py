"""The session screen, in layers that each use only the ones listed before them.

- :mod:`.worker_messages`: what the workers post back, and how often they report progress;
- :mod:`.heap`: keeping a loaded session out of the garbage collector's way;
- :mod:`.view`: the screen's state and widgets, and selecting a message in all of them;
- :mod:`.replaying`: replaying under the active policy (and changing the policy or the window);
- :mod:`.insights`: the breakdown, the cost and the compaction reports of each replay, and the
  breakdown band (``b``);
- :mod:`.live_tail`: following a file that is still being written;
- :mod:`.loading`: reading the file, a big one in two steps (its first part shown at once);
- :mod:`.screen`: :class:`SessionScreen` itself: its keys, search, overflow and compaction views.
"""

from tui.screens.session.screen import SessionScreen

__all__ = ["SessionScreen"]
