"""Rewrite the golden ``--json`` outputs that ``tests/functional/test_golden.py`` compares against.

Run from the repository root: ``python -m tests.functional.golden.regenerate``. Regenerating is allowed only
with a reason in the commit message: the golden files are how a refactor proves that it changed
no behaviour.
"""

from __future__ import annotations

from tests.functional.test_golden import CASES, golden_path, run_case
from tests.support.paths import REPO


def main() -> None:
    for session, command in CASES:
        text = run_case(session, command)
        golden_path(session, command).write_text(text, encoding="utf-8")
        print(f"wrote {golden_path(session, command).relative_to(REPO)}")


if __name__ == "__main__":
    main()
