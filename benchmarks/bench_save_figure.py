"""CPU seconds of :func:`ldp.book.plotting.save_figure` per figure, running chapters' notebooks in this process.

Each named chapter's code cells are executed here (IPython, quick parameters as ``python -m ldp rerun --quick``
resolves them), with ``save_figure`` timed (``time.process_time``: the CPU seconds of this process) per figure
and, inside it, each ``Figure.savefig`` by format (``narrow`` is the phone layout's SVG, with the layout it needs
in ``one_column``).  The chapter's results come from the results cache: run a chapter once to fill it, then
measure (the second run is the warm one).  The figures are written into ``--out`` (default a temporary folder),
one subfolder per chapter, which ``benchmarks/check_identical_figures.py --compare`` compares between versions.

Usage::

    LDP_ROOT=$PWD python benchmarks/bench_save_figure.py 06_evaluation [08_after_pem ...]
        [--out DIR] [--profile FILE.prof] [--show]

``--profile`` writes cProfile statistics of the ``save_figure`` calls only (read them with ``python -m pstats``);
``--show`` sets ``$LDP_SHOW_FIGURES`` as a rerun does (save_figure then also draws a PNG for the notebook).
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")


def _timed_save_figure(records: list, profile: cProfile.Profile | None):
    """Patch ``save_figure`` (where the notebooks import it from) and ``Figure.savefig`` to record CPU seconds."""
    from matplotlib.figure import Figure

    import ldp.book.plotting as plotting
    import ldp.book.plotting.save as save

    original, savefig, one_column = save.save_figure, Figure.savefig, save.one_column
    current: dict = {}

    def timed_savefig(fig, fname, *args, **kwargs):
        start = time.process_time()
        try:
            return savefig(fig, fname, *args, **kwargs)
        finally:
            if current:
                key = "narrow" if current.get("narrow") else str(kwargs.get("format"))
                current["parts"][key] += time.process_time() - start

    @contextlib.contextmanager
    def timed_one_column(fig, *args, **kwargs):
        start = time.process_time()
        with one_column(fig, *args, **kwargs) as out:
            current["parts"]["narrow layout"] += time.process_time() - start
            current["narrow"] = True
            try:
                yield out
            finally:
                current["narrow"] = False

    def timed(fig, name, **kwargs):
        current.update(name=name, parts=defaultdict(float), narrow=False)
        start = time.process_time()
        if profile is not None:
            profile.enable()
        try:
            return original(fig, name, **kwargs)
        finally:
            if profile is not None:
                profile.disable()
            records.append((name, time.process_time() - start, dict(current["parts"])))
            current.clear()

    Figure.savefig = timed_savefig  # type: ignore[method-assign]
    save.one_column = timed_one_column
    save.save_figure = plotting.save_figure = timed


def run_chapter(name: str, out: Path) -> tuple[float, float]:
    """Execute chapter ``name``'s code cells (quick parameters) writing its figures into ``out``; its CPU and wall
    seconds."""
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell

    from ldp.book import rerun

    os.environ["LDP_FIGURE_DIR"] = str(out)
    out.mkdir(parents=True, exist_ok=True)
    path = rerun.find_notebook(name)
    params, _ = rerun.resolve_parameters(path, {}, quick=True)
    nb = nbformat.read(path, as_version=4)
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    cpu, wall = time.process_time(), time.perf_counter()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = cell.source
        if "parameters" in cell.metadata.get("tags", []):
            source += "\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items())
        result = shell.run_cell(source, silent=True)
        if not result.success:
            result.raise_error()
    return time.process_time() - cpu, time.perf_counter() - wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapters", nargs="+", help="notebook names, e.g. 06_evaluation")
    ap.add_argument("--out", type=Path, help="folder for the figures (one subfolder per chapter)")
    ap.add_argument("--profile", type=Path, help="write cProfile statistics of the save_figure calls here")
    ap.add_argument("--show", action="store_true", help="set $LDP_SHOW_FIGURES (a rerun's inline PNG)")
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    if args.show:
        os.environ["LDP_SHOW_FIGURES"] = "1"
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-save-figure-"))
    profile = cProfile.Profile() if args.profile else None
    records: list = []
    _timed_save_figure(records, profile)
    for chapter in args.chapters:
        first = len(records)
        cpu, wall = run_chapter(chapter, out / chapter)
        mine = records[first:]
        total = sum(r[1] for r in mine)
        print(f"{chapter}: code cells {cpu:.2f} CPU s ({wall:.2f} s wall), save_figure {total:.2f} CPU s "
              f"for {len(mine)} figures")
        for fig, seconds, parts in mine:
            split = ", ".join(f"{k} {v:.2f}" for k, v in sorted(parts.items()))
            print(f"  {fig}: {seconds:.2f} CPU s ({split})")
        sys.stdout.flush()
    if profile is not None:
        profile.dump_stats(args.profile)
    print(f"figures in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
