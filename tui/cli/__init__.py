"""The ``ctxscope`` command line: ``main`` (the console script: the commands, each imported when
it runs), ``commands/`` (one module per command, with their shared options and plumbing) and
``render`` (rich tables and panels of the results). Nothing here imports Textual: only the bare
``ctxscope [PATH]`` reaches the app, and it imports it when it runs.
"""
