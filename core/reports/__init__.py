"""Documents written from an analysis: the ``ctxscope analyze`` report (``analyze``), one session
as an HTML page (``html``) and the agents' presets checked over many sessions (``fidelity``).
"""
