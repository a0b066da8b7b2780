#!/usr/bin/env python
"""Execute the book's notebooks with papermill and stage them for Jupyter Book.

The sources live in ``notebooks/*.ipynb``. Each one has a cell tagged
``parameters`` whose type-annotated defaults are the paper's settings, plus
``quick: bool = False``; a ``[quick: VALUE]`` at the end of a parameter's
comment is its value in quick mode (see :mod:`ldp.book.rerun`, which holds the code
this script shares with ``python -m ldp rerun``; the build itself is
:mod:`ldp.book.rerun.build`, of which this script is the command line). This script

1. checks every source notebook's parameters cell and quick values (before
   running anything);
2. executes each notebook with papermill (kernel ``ldp``: this venv's Python,
   working directory = repository root, environment ``LDP_ROOT`` and
   ``LDP_FIGURE_DIR`` set; in quick mode with ``quick=True`` and the quick
   values), two at a time, into a per-mode cache
   ``_generated/cache/{full,quick}/``; a notebook whose inputs did not change
   since its last successful run in the same mode is not executed again.
   Every 10 s it prints each running notebook's progress: time, cell, and the
   runs done in its current :func:`ldp.experiments.run_grid` grid;
3. copies the executed notebooks to ``_generated/notebooks/`` and the figures
   they saved to ``_generated/figures/``: the paths that ``_toc.yml`` and the
   ``{figure}`` directives point at;
4. writes ``_generated/params.md``, the rerun commands and parameter tables
   that ``book/rerun.md`` includes, and ``_generated/artifact/``, the artifact
   appendix (:mod:`ldp.book.artifact`) that ``book/artifact.md`` includes.

A notebook that raises makes the script print the failing cell, the error and
its traceback, and exit with status 1.

Usage (from anywhere; paths resolve from the repository root)::

    .venv/bin/python scripts/run_notebooks.py            # paper settings
    .venv/bin/python scripts/run_notebooks.py --quick    # quick values
    .venv/bin/python scripts/run_notebooks.py --quick --only 06 --force
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ["LDP_ROOT"] = str(ROOT)  # ldp (and the kernels) work on this checkout

from ldp.book.rerun import (  # noqa: E402  (shared with `python -m ldp rerun`)
    KERNEL_NAME,
    NotebookError,
    ensure_kernel,
    error_report,
    execute,
    kernel_env,
    notebook_parameters,
    parameters_cell,
    source_notebooks,
)
from ldp.book.rerun.build import cache_key, mode_parameters, params_markdown, run_all, stage, write_params_page  # noqa: E402  (the book build)

NOTEBOOK_DIR = ROOT / "notebooks"
GENERATED = ROOT / "_generated"
__all__ = ["KERNEL_NAME", "NotebookError", "ensure_kernel", "error_report", "execute", "kernel_env",
           "notebook_parameters", "parameters_cell", "source_notebooks", "mode_parameters", "cache_key",
           "run_all", "stage", "params_markdown", "write_params_page", "main"]


# --------------------------------------------------------------------------- #
def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0 ok, 1 a notebook failed, 2 bad notebooks)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="quick=True and the notebooks' [quick: ...] values (small sizes)")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed in parallel (default 2)")
    ap.add_argument("--force", action="store_true", help="execute even if the cache is current")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="execute only these notebooks")
    ap.add_argument("--params-only", action="store_true", help="only write _generated/params.md")
    ap.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                    help="seconds between progress lines of a running notebook (default 10)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.progress_interval <= 0:
        ap.error(f"--progress-interval must be > 0, got {args.progress_interval}")

    t0 = time.perf_counter()
    try:
        if not args.params_only:
            results = run_all(args.quick, args.jobs, args.force, args.only, args.progress_interval)
            failed = [r for r in results if not r.ok]
            for r in failed:
                print(f"\n[run_notebooks] ===== {r.name} failed =====\n{r.message}\n",
                      file=sys.stderr, flush=True)
            if failed:
                print(f"[run_notebooks] {len(failed)} notebook(s) failed: "
                      f"{', '.join(r.name for r in failed)}; logs in "
                      f"_generated/cache/{'quick' if args.quick else 'full'}/logs/",
                      file=sys.stderr)
                return 1
            stage(args.quick)
            from ldp.book.artifact import write_appendix  # here: the claims registry imports the figures
            from ldp.book.chapters import REGISTRY

            write_appendix(REGISTRY)  # _generated/artifact/: the artifact appendix (book/artifact.md)
        write_params_page()
    except NotebookError as exc:
        print(f"[run_notebooks] error:\n{exc}", file=sys.stderr)
        return 2
    print(f"[run_notebooks] done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
