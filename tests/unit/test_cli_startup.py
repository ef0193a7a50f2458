"""A one-shot command's start-up: each annotation string is compiled once per process.

Run in a child process: the set-up changes the process (``typing``'s namespace), as the console
script's does.
"""

import subprocess
import sys

SAME_CODE = """
import typing
from tui.cli.main import _import_command
_import_command("policy")
first, second = typing.ForwardRef("list[int] | None"), typing.ForwardRef("list[int] | None")
print(first.__forward_code__ is second.__forward_code__)
print(typing.ForwardRef("dict[str, int]")._evaluate(globals(), None, frozenset()))
try:
    typing.ForwardRef("list[")
except SyntaxError:
    print("SyntaxError")
print(compile("1 + 1", "<string>", "eval") is compile("1 + 1", "<string>", "eval"))
"""


def test_a_command_compiles_each_annotation_string_once() -> None:
    """After a one-shot command's import set-up, two forward references to the same string share
    one code object; a string still evaluates to its type, a bad one still raises SyntaxError,
    and the builtin ``compile`` outside :mod:`typing` is left as it is."""
    result = subprocess.run(
        [sys.executable, "-c", SAME_CODE], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:4] == ["True", "dict[str, int]", "SyntaxError", "False"]
