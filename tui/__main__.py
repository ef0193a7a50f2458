"""``python -m tui``: the ``ctxscope`` command, for when the console script is not at hand
(``ctxscope serve`` starts each browser's ctxscope this way)."""

from tui.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
