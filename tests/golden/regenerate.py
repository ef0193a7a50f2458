"""Rewrite the golden ``--json`` outputs that ``tests/test_golden.py`` compares against.

Run from the repository root: ``python tests/golden/regenerate.py``. Regenerating is allowed only
with a reason in the commit message: the golden files are how a refactor proves that it changed
no behaviour.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from test_golden import CASES, golden_path, run_case  # noqa: E402


def main() -> None:
    for session, command in CASES:
        text = run_case(session, command)
        golden_path(session, command).write_text(text, encoding="utf-8")
        print(f"wrote {golden_path(session, command).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
