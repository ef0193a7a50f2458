"""The context-management rules a replay applies, one module each: ``truncate`` a tool output
(with its ``spill`` file), ``prune`` old tool outputs, ``split`` head from tail, ``compact`` the head
into a summary, and ``overflow`` (how full the window is, and when a policy compacts).
"""
