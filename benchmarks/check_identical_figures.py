"""Every figure the figure tests draw, or every chapter saves, in SVG, PDF and phone layout: to compare two versions
of the drawing and saving code.

The figure tests (``tests/test_fig_*.py``) draw each chapter's figures from synthetic frames.  This runs them
(pytest, in this process) with a plugin that keeps every matplotlib figure a test makes and, after the test,
saves it with :func:`ldp.book.plotting.save_figure` (its SVG, PDF and ``-narrow.svg``) into ``OUT/<test>-<i>``.
``--chapters`` instead runs chapters' notebooks in this process with quick parameters (their results from the
results cache, as ``benchmarks/bench_save_figure.py`` runs them) and keeps each figure they save, as it was
handed to ``save_figure``, in ``KEPT/<chapter>/NAME.pickle``; ``--resave`` saves those with the checked-out
version's ``save_figure`` (so two versions save the same figures, also those that show timings or a run of
the OS's randomness).  Run it before and after a change to ``ldp/book/plotting`` and compare the folders
(``--compare``, the files ``save_figure`` writes: SVG, PDF, CSV): each file the
same bytes, or (an SVG) the same but for the names of its clip paths (a name is a hash of the clip rectangle's
coordinates to the last bit of a float, where the file writes six decimals), or the same but for numbers
(the largest difference is printed), or different.  A figure whose bytes differ can then be checked by eye
or by its pixels (``benchmarks/compare_svg_pixels.py``).

Usage::

    python benchmarks/check_identical_figures.py OUT [pytest args, default tests/test_fig_*.py]
    LDP_ROOT=$PWD python benchmarks/check_identical_figures.py --chapters KEPT [CHAPTER ...]  (default: all)
    python benchmarks/check_identical_figures.py --resave KEPT OUT
    python benchmarks/check_identical_figures.py --compare BEFORE AFTER

``--compare`` exits 0 when every file is the same but for clip-path names.
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


_FIGURE_FILES = {".svg", ".pdf", ".csv"}  # what save_figure writes (a chapter's tables carry the time written)
_CLIP_ID = re.compile(rb"\bp[0-9a-f]{10}\b")  # matplotlib's SVG id of a clip path: p + 10 hex digits of a hash
_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]*)?(?:e-?[0-9]+)?")


def _renamed_ids(svg: bytes) -> bytes:
    """``svg`` with its clip-path ids renamed in order of first appearance (``ID0``, ``ID1``, ...)."""
    names: dict[bytes, int] = {}
    return _CLIP_ID.sub(lambda m: b"ID%d" % names.setdefault(m.group(), len(names)), svg)


def how_differ(a: bytes, b: bytes, suffix: str) -> tuple[str, float]:
    """How two files differ: ``"same"``, ``"ids"`` (SVG: only the clip-path names), ``"numbers"`` (the same but
    for numbers; with the largest difference) or ``"other"``."""
    if a == b:
        return "same", 0.0
    if suffix != ".svg":
        return "other", float("nan")
    a, b = _renamed_ids(a), _renamed_ids(b)
    if a == b:
        return "ids", 0.0
    pa, pb = _NUMBER.split(a), _NUMBER.split(b)
    if pa != pb:
        return "other", float("nan")
    na, nb = _NUMBER.findall(a), _NUMBER.findall(b)
    return "numbers", max(abs(float(x) - float(y)) for x, y in zip(na, nb))


def compare(before: Path, after: Path) -> int:
    """Compare every file of the two output folders; 0 when each is the same but for clip-path names and both
    hold the same files."""
    a = {p.relative_to(before) for p in before.rglob("*") if p.suffix in _FIGURE_FILES and "png" not in p.parts}
    b = {p.relative_to(after) for p in after.rglob("*") if p.suffix in _FIGURE_FILES and "png" not in p.parts}
    only = sorted(a ^ b)
    kinds: dict[str, list] = {"same": [], "ids": [], "numbers": [], "other": []}
    for p in sorted(a & b):
        if filecmp.cmp(before / p, after / p, shallow=False):
            kinds["same"].append((p, 0.0))
        else:
            kind, most = how_differ((before / p).read_bytes(), (after / p).read_bytes(), p.suffix)
            kinds[kind].append((p, most))
    print(f"{len(a & b)} files in both: {len(kinds['same'])} the same bytes, {len(kinds['ids'])} the same but for "
          f"clip-path names, {len(kinds['numbers'])} the same but for numbers, {len(kinds['other'])} different; "
          f"{len(only)} in one folder only")
    for p, most in kinds["numbers"]:
        print(f"  numbers differ (at most {most:.2g}): {p}")
    for p, _ in kinds["other"][:50]:
        print("  differs:", p)
    for p in only[:50]:
        print("  only in one:", p)
    return 1 if kinds["numbers"] or kinds["other"] or only else 0


def keep_chapters(out: Path, chapters: list[str]) -> int:
    """Run ``chapters`` (default: every notebook) in this process; each figure handed to ``save_figure`` is kept,
    with its data, as ``out/<chapter>/<name>.pickle`` (cloudpickle) before it is saved (into ``out/<chapter>/``)."""
    import cloudpickle

    import ldp.book.plotting as plotting
    import ldp.book.plotting.save as save

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_save_figure import run_chapter

    from ldp.book.rerun import source_notebooks

    original = save.save_figure

    def keep(fig, name, **kwargs):
        (Path(os.environ["LDP_FIGURE_DIR"]) / f"{name}.pickle").write_bytes(
            cloudpickle.dumps((fig, kwargs.get("data"))))
        return original(fig, name, **kwargs)

    save.save_figure = plotting.save_figure = keep
    for chapter in chapters or [p.stem for p in source_notebooks()]:
        cpu, _ = run_chapter(chapter, out / chapter)
        print(f"{chapter}: {len(list((out / chapter).glob('*.pickle')))} figures kept ({cpu:.1f} CPU s)", flush=True)
    return 0


def resave(kept: Path, out: Path) -> int:
    """Save each figure ``keep_chapters`` kept under ``kept`` (only files it wrote: a pickle runs code when read)
    with this version's ``save_figure`` into ``out/<chapter>/``."""
    import pickle

    from ldp.book.plotting import save_figure

    files = sorted(kept.glob("*/*.pickle"))
    for path in files:
        fig, data = pickle.loads(path.read_bytes())  # noqa: S301  (files this script wrote)
        folder = out / path.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        save_figure(fig, path.stem, data=data, folder=folder)
    print(f"saved {len(files)} figures into {out}")
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--compare"]:
        return compare(Path(argv[1]), Path(argv[2]))
    if argv[:1] == ["--chapters"]:
        return keep_chapters(Path(argv[1]), argv[2:])
    if argv[:1] == ["--resave"]:
        return resave(Path(argv[1]), Path(argv[2]))
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
