"""Puts this folder on ``sys.path`` for every test below it, so ``from builders import …`` works
from ``tests/tui`` too (pytest adds the folder of each conftest.py it loads)."""
