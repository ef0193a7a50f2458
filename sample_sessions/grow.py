"""Append to the live sample session over time, like Claude Code writing a transcript.

    python sample_sessions/grow.py sample_sessions/live/growing.jsonl --interval 0.5

The file must be the live sample (``live/growing.jsonl``) or a copy of it, possibly already
grown: grow.py continues the same deterministic sequence of Claude Code lines from wherever the
file stops, even in the middle of a line. Every few lines it writes a line in two halves with a
pause between them, so a reader sees a partial last line now and then (as with a real agent).

Safety: grow.py writes to the one path it is given and nothing else. It refuses a directory, a
symlink, or a file whose content is not a prefix of the live sequence (it never rewrites or
appends to an unrelated session). ``--init`` creates the path only if it does not exist yet;
``--reset`` truncates it back to the committed head, again only when it is a live-sample file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def sequence() -> tuple[bytes, bytes]:
    """(committed head, full sequence) of the live session, as bytes."""
    import generate

    lines = generate.live_lines()
    head = generate.live_head_count()
    full = ("\n".join(lines) + "\n").encode()
    return ("\n".join(lines[:head]) + "\n").encode(), full


def fail(message: str) -> int:
    print(f"grow.py: {message}", file=sys.stderr)
    return 2


def check_target(path: Path, *, must_exist: bool) -> str | None:
    """Why ``path`` may not be written, or None."""
    if path.is_symlink():
        return f"{path} is a symbolic link; give the real file"
    if path.exists() and not path.is_file():
        return f"{path} is not a regular file"
    if must_exist and not path.exists():
        return f"{path} does not exist (use --init to create it)"
    return None


def open_append(path: Path) -> int:
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="the live session file to grow")
    parser.add_argument(
        "--interval", type=float, default=0.5, help="seconds between appended lines (default 0.5)"
    )
    parser.add_argument(
        "--count",
        type=int,
        default=None,
        help="append at most this many lines, then stop (default: all)",
    )
    parser.add_argument(
        "--split-every",
        type=int,
        default=4,
        help="write every Nth line in two halves (0: never; default 4)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--init",
        action="store_true",
        help="create the file with the committed head (it must not exist)",
    )
    group.add_argument(
        "--reset", action="store_true", help="truncate the file back to the committed head"
    )
    args = parser.parse_args(argv)
    path: Path = args.path
    if args.interval < 0 or (args.count is not None and args.count < 0) or args.split_every < 0:
        return fail("--interval, --count and --split-every must not be negative")

    head, full = sequence()
    if args.init:
        reason = check_target(path, must_exist=False)
        if reason:
            return fail(reason)
        try:
            with open(path, "xb") as fh:  # exclusive: never overwrite
                fh.write(head)
        except FileExistsError:
            return fail(f"{path} already exists; --init only creates new files")
        except OSError as exc:
            return fail(f"cannot create {path}: {exc.strerror}")
        print(f"created {path} ({len(head):,} bytes)")
        return 0

    reason = check_target(path, must_exist=True)
    if reason:
        return fail(reason)
    current = path.read_bytes()
    if not full.startswith(current):
        return fail(
            f"{path} is not the live sample session (its content is not a prefix of the "
            "sequence grow.py writes); nothing was changed"
        )

    if args.reset:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.ftruncate(fd, 0)
            os.write(fd, head)
        finally:
            os.close(fd)
        print(f"reset {path} to the committed head ({len(head):,} bytes)")
        return 0

    rest = full[len(current) :]
    if not rest:
        print(f"{path} is complete; nothing left to append")
        return 0
    pieces = rest.split(b"\n")[:-1]  # each piece ends a line; the first may finish a partial one
    if args.count is not None:
        pieces = pieces[: args.count]
    fd = open_append(path)
    written = 0
    try:
        for k, piece in enumerate(pieces, 1):
            data = piece + b"\n"
            if args.split_every and k % args.split_every == 0 and len(data) > 2:
                half = len(data) // 2
                os.write(fd, data[:half])
                os.fsync(fd)
                time.sleep(args.interval / 2)
                os.write(fd, data[half:])
            else:
                os.write(fd, data)
            written += 1
            if k < len(pieces):
                time.sleep(args.interval)
    except KeyboardInterrupt:
        print(f"\ninterrupted after {written} lines; run again to continue", file=sys.stderr)
        return 130
    finally:
        os.close(fd)
    left = full[len(path.read_bytes()) :].count(b"\n")
    print(f"appended {written} lines to {path}; {left} left")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
