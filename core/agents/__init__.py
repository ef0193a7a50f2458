"""What each coding agent does to its context window, by version: the constants (``constants``) and
version handling (``versions``). The replay's agent presets and the fidelity rules read them from
here, so that one table says what ctxscope believes about each agent and where it learnt it.
"""
