"""``python -m ldp``: the package's command line (``rerun``, ``report``, ``kernel``)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .execution import KERNEL_NAME, ensure_kernel
from .notebooks import NotebookError, find_notebook
from .parameters import ParameterError, parameter_listing, parse_assignments
from .run import rerun
from .runfolder import RunFolderError

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ldp", description="Tools of the ldp reproduction package.")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "rerun", help="rerun a chapter notebook with your own parameters",
        description="Rerun a chapter notebook (from a source checkout) with your own parameters, into its "
                    "own folder: my-runs/NAME-HASH/ (or --out) with the executed notebook (figures inline), "
                    "an HTML copy, the figure files, parameters.json and run.log.",
        epilog="examples:\n"
               "  python -m ldp rerun 06 --quick --set 'epsilons=[1.0, 3.0]' --set repetitions=2\n"
               "  python -m ldp rerun 05_validation --params\n\n"
               "VALUE is a Python literal: 3, 2.5, 2**20, True, [1.0, 3.0], 'text' (a str parameter also "
               "takes a bare word). Names and types are checked before anything runs.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("notebook", metavar="NOTEBOOK", help="chapter number or name: 06, 06_evaluation")
    r.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter value (repeat for several; one argument may hold several)")
    r.add_argument("--quick", action="store_true",
                   help="small sizes for every parameter you do not set (the book's quick build)")
    r.add_argument("--out", metavar="DIR",
                   help="the run's folder (default my-runs/NAME-HASH): a new or empty folder, or one an earlier "
                        "rerun made (it holds rerun.json); any other folder is refused")
    r.add_argument("--params", action="store_true", help="list the notebook's parameters and exit")
    r.add_argument("--progress-interval", type=float, default=10.0, metavar="S", help=argparse.SUPPRESS)
    rp = sub.add_parser(
        "report", help="decide the paper's claims on saved results (a build's or a rerun's)",
        description="Evaluate every claim of the registry (ldp.book.chapters) against saved results and write "
                    "claims.csv, claims.json, report.md and scorecard.md (MyST Markdown for the book).")
    rp.add_argument("--mode", choices=("full", "quick"), default=None,
                    help="the build whose results to read, _generated/cache/MODE (default: _generated/MODE, else full)")
    rp.add_argument("--book", action="store_true",
                    help="write the book's pages, _generated/report/ (what make book does after the notebooks)")
    rp.add_argument("--rerun", metavar="FOLDER", help="read a rerun's folder (my-runs/NAME-HASH) instead")
    rp.add_argument("--out", metavar="FOLDER", help="where to write (default: <results>/report)")
    sub.add_parser("kernel", help=f"register the Jupyter kernel {KERNEL_NAME!r} (this Python) if it is missing",
                   description=f"Register the Jupyter kernel {KERNEL_NAME!r} that runs the notebooks with this "
                               "interpreter, in its prefix (make setup runs it; a rerun does it when needed).")
    return parser


def _report(args) -> int:
    """``python -m ldp report``: the claims of a build (``--mode``) or of a rerun's folder (``--rerun``)."""
    import pandas as pd

    from ...paths import generated_dir
    from ..chapters import REGISTRY  # here: the claims read the results
    from ..claims.evaluation import verdict_counts
    from ..claims.store import ResultStore
    from ..pages import write_outputs
    from ..report import REPORT_DIR

    if args.rerun:
        store = ResultStore.for_rerun(args.rerun)
        chapters = [store.root.name.rsplit("-", 1)[0]]
    else:
        marker = generated_dir() / "MODE"
        mode = args.mode or (marker.read_text().strip() if marker.is_file() else "full")
        store, chapters = ResultStore.for_build(mode), None
    out = generated_dir() / REPORT_DIR if args.book and not args.rerun and args.out is None else args.out
    paths = write_outputs(store, REGISTRY, out, chapters=chapters)
    table = pd.read_csv(paths["claims.csv"])
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(table).items())
    print(f"[reporting] {len(table)} claims against {store.root}: {counts}")
    print(f"[reporting] wrote {len(paths)} files to {paths['report.md'].parent}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ldp rerun ...``, ``report`` or ``kernel``; exit status 0 ok, 1 notebook failed, 2 bad input."""
    args = _build_parser().parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "kernel":
        print(f"kernel {KERNEL_NAME!r}: {ensure_kernel()}")
        return 0
    try:
        if args.params:
            print(parameter_listing(find_notebook(args.notebook)))
            return 0
        if args.progress_interval <= 0:
            raise ParameterError(f"--progress-interval must be > 0, got {args.progress_interval}")
        ok, _ = rerun(args.notebook, sets=parse_assignments(args.sets), quick=args.quick, out=args.out,
                      interval=args.progress_interval, echo=lambda s: print(s, flush=True))
    except (NotebookError, ParameterError, RunFolderError) as exc:
        print(f"python -m ldp rerun: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("python -m ldp rerun: interrupted", file=sys.stderr)
        return 130
    return 0 if ok else 1

