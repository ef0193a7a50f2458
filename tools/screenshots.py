"""Screenshots of the main screens: ``make screenshots`` (``python -m tools.screenshots``).

Runs the scenes of :mod:`tools.scenes` marked ``screenshot`` (the snapshot tests draw the same
scenes) and writes an SVG of each to ``screenshots/``, plus a PNG when ``rsvg-convert`` is
installed (``apt-get install librsvg2-bin fonts-firacode``; without it the PNGs are skipped with a
note). Any scene can be drawn by name: ``python -m tools.screenshots help overflow-none``.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from tools.scenes import COMPACTED, OVERFLOW, REPO, SCENES, Scene, fixed_timezone

OUT = REPO / "screenshots"


def _svg_for_rasterizers(svg: str) -> str:
    # Rich writes spaces as &#160; at the start of text runs; librsvg drops a leading one unless
    # whitespace is preserved, which shifts text one cell left in the PNG.
    return svg.replace("<svg ", '<svg xml:space="preserve" ', 1)


async def take(scene: Scene, out: Path, size: tuple[int, int] | None = None) -> Path:
    """Run ``scene`` (at ``size``, default its own) and write its SVG into ``out``; returns the
    SVG's path."""
    app = scene.app()
    async with app.run_test(size=size or scene.size) as pilot:
        await scene.run(pilot)
        svg = app.export_screenshot(title=scene.title)
    path = out / f"{scene.name}.svg"
    path.write_text(_svg_for_rasterizers(svg), encoding="utf-8")
    return path


def to_png(svg: Path, converter: str) -> Path | None:
    """Convert ``svg`` next to itself with rsvg-convert; None (and a message) on failure."""
    png = svg.with_suffix(".png")
    done = subprocess.run(
        [converter, "--format=png", "--output", str(png), str(svg)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"  {svg.name}: rsvg-convert failed: {done.stderr.strip()}", file=sys.stderr)
        return None
    return png


def main(argv: list[str] | None = None) -> int:
    """Write every screenshot (or the scenes named) to screenshots/."""
    fixed_timezone()
    parser = argparse.ArgumentParser(prog="python -m tools.screenshots", description=__doc__)
    shots = ", ".join(s.name for s in SCENES if s.screenshot)
    parser.add_argument("names", nargs="*", help=f"scenes to draw (default: {shots})")
    parser.add_argument("--out", type=Path, default=OUT, help="folder (default: screenshots/)")
    parser.add_argument("--size", help="terminal COLUMNSxROWS (default: each scene's own)")
    args = parser.parse_args(argv)
    missing = [p for p in (OVERFLOW, COMPACTED) if not p.exists()]
    if missing:
        names = ", ".join(str(p.relative_to(REPO)) for p in missing)
        print(
            f"screenshots: sample sessions missing ({names}); run `make samples`", file=sys.stderr
        )
        return 1
    size: tuple[int, int] | None = None
    if args.size is not None:
        try:
            columns, rows = (int(part) for part in args.size.lower().split("x"))
        except ValueError:
            print(
                f"screenshots: --size wants COLUMNSxROWS, e.g. 80x24, not {args.size}",
                file=sys.stderr,
            )
            return 2
        size = (columns, rows)
    wanted = [s for s in SCENES if s.name in args.names or (not args.names and s.screenshot)]
    unknown = set(args.names) - {s.name for s in SCENES}
    if unknown:
        print(f"screenshots: no such screenshot: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    converter = shutil.which("rsvg-convert")
    if converter is None:
        print(
            "screenshots: rsvg-convert not found, so only SVGs are written "
            "(apt-get install librsvg2-bin fonts-firacode for PNGs)",
            file=sys.stderr,
        )
    for scene in wanted:
        svg = asyncio.run(take(scene, args.out, size))
        png = to_png(svg, converter) if converter else None
        written = f"{svg.relative_to(REPO) if svg.is_relative_to(REPO) else svg}"
        print(f"{scene.name:<14} {written}" + (f" + {png.name}" if png else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
