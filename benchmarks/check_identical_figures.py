"""Every figure the figure tests draw, saved as SVG, PDF and phone layout: to compare two versions of the drawing code.

The figure tests (``tests/test_fig_*.py``) draw each chapter's figures from synthetic frames.  This runs them
(pytest, in this process) with a plugin that keeps every matplotlib figure a test makes and, after the test,
saves it with :func:`ldp.book.plotting.save_figure` (its SVG, PDF and ``-narrow.svg``) into ``OUT/<test>-<i>``.
Run it before and after a change to ``ldp/book/plotting`` and compare the folders byte for byte
(``--compare``); a figure whose bytes differ can then be checked by eye (``benchmarks/compare_svg_pixels.py``).

Usage::

    python benchmarks/check_identical_figures.py OUT [pytest args, default tests/test_fig_*.py]
    python benchmarks/check_identical_figures.py --compare BEFORE AFTER
"""
from __future__ import annotations

import filecmp
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")


class KeepFigures:
    """A pytest plugin: each figure made during a test, saved after it under ``out``."""

    def __init__(self, out: Path):
        self.out = out
        self.made: list = []
        self.failed: list[str] = []

    def pytest_configure(self, config):
        from matplotlib.figure import Figure

        made, init = self.made, Figure.__init__

        def keep(fig, *args, **kwargs):
            init(fig, *args, **kwargs)
            made.append(fig)  # kept alive until the test's teardown saves it
        Figure.__init__ = keep  # type: ignore[method-assign]

    def pytest_runtest_teardown(self, item):
        import pandas as pd

        from ldp.book.plotting import save_figure

        figs, self.made[:] = list(self.made), []
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid.split("::", 1)[-1])
        for i, fig in enumerate(figs):
            if not fig.axes:
                continue
            folder = self.out / f"{Path(item.fspath).stem}-{name}-{i}"
            folder.mkdir(parents=True, exist_ok=True)
            try:
                save_figure(fig, "figure", data=pd.DataFrame({"x": [0]}), folder=folder)
            except Exception as exc:  # noqa: BLE001  (a figure the phone layout cannot take: reported, not fatal)
                self.failed.append(f"{folder.name}: {type(exc).__name__}: {exc}")


def compare(before: Path, after: Path) -> int:
    """Byte-compare every file of the two output folders; 0 when all are the same and both hold the same files."""
    a = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    b = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    only = sorted(a ^ b)
    differ = sorted(p for p in a & b if not filecmp.cmp(before / p, after / p, shallow=False))
    print(f"{len(a & b)} files in both, {len(differ)} differ, {len(only)} in one folder only")
    for p in differ[:50]:
        print("  differs:", p)
    for p in only[:50]:
        print("  only in one:", p)
    return 1 if differ or only else 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--compare"]:
        return compare(Path(argv[1]), Path(argv[2]))
    import glob

    import pytest

    out = Path(argv.pop(0))
    plugin = KeepFigures(out)
    root = Path(__file__).resolve().parents[1]
    args = argv or sorted(glob.glob(str(root / "tests" / "test_fig_*.py")))
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args], plugins=[plugin])
    for line in plugin.failed:
        print("not saved:", line)
    print(f"saved {sum(1 for _ in out.glob('*/figure.svg'))} figures into {out}")
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
