"""Render the SVG figures of two folders with headless Chromium and count the pixels that differ.

A speed-up of a figure's drawing may change its SVG's structure (how many groups hold the marks, their ids)
but not what it shows; this checks the second.  Each ``NAME.svg`` present in both folders is rendered at its
own size (points as CSS pixels, times ``--scale``) into ``<folder>/png/NAME.png``.

Usage::

    python benchmarks/compare_svg_pixels.py BEFORE AFTER [--scale 2]

Exit status 0 when every pair renders to the same pixels.
"""
from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
from PIL import Image


def size_pt(svg: Path) -> tuple[float, float]:
    """The SVG's width and height in points (as matplotlib writes them)."""
    head = svg.read_text(encoding="utf-8")[:2000]
    w, h = (float(re.search(rf'{k}="([0-9.]+)pt"', head).group(1)) for k in ("width", "height"))
    return w, h


def render(svg: Path, scale: float) -> Path:
    """``svg`` as a PNG from headless Chromium, the page the size of the drawing."""
    out = svg.parent / "png" / f"{svg.stem}.png"
    out.parent.mkdir(exist_ok=True)
    w, h = size_pt(svg)
    html = svg.parent / "png" / f"{svg.stem}.html"
    html.write_text(f'<html><body style="margin:0"><img src="../{svg.name}" style="width:{w}px;height:{h}px">'
                    "</body></html>", encoding="utf-8")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--force-device-scale-factor={scale}", f"--window-size={math.ceil(w)},{math.ceil(h)}",
                    f"--screenshot={out}", html.as_uri()], check=True, capture_output=True, timeout=120)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--scale", type=float, default=2.0, help="device pixels per CSS pixel")
    args = ap.parse_args(argv)
    names = sorted({p.name for p in args.before.glob("*.svg")} & {p.name for p in args.after.glob("*.svg")})
    if not names:
        print("no SVG in both folders")
        return 1
    bad = 0
    for name in names:
        a, b = (np.asarray(Image.open(render(folder / name, args.scale)).convert("RGB"))
                for folder in (args.before, args.after))
        differ = int((a != b).any(axis=-1).sum()) if a.shape == b.shape else -1
        same_bytes = (args.before / name).read_bytes() == (args.after / name).read_bytes()
        print(f"{name}: {a.shape[1]}x{a.shape[0]} px, "
              + ("sizes differ" if differ < 0 else f"{differ} pixels differ") + (", same bytes" if same_bytes else ""))
        bad += differ != 0
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
