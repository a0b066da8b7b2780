"""The empirical privacy audit of the deployed client, in full: every protocol, oracle and group kind, the eps grid.

Usage::

    .venv/bin/python benchmarks/bench_audit.py [--n 200000] [--eps 0.25 0.5 1 2 4 6 8] [--groups kinds]
        [--alpha 1e-6] [--jobs 2] [--book-n 20000] [--book-eps 0.5 1 2 4] [--csv PATH]

Prints, with wall-clock time (the machine may be shared):

* the audit at the book's size (``--book-n`` reports of each value, ``--book-eps``, one user of each group
  kind; ``ldp.attacks.audit_grid``): its time, which a build must afford (at most about 30 s);
* the full audit (``--n`` reports of each value per audited group, ``--eps``, ``--groups``): one row per
  protocol, oracle, group kind and epsilon with eps_hat (the likelihood-ratio event's log-ratio) and
  eps_lower (its Clopper-Pearson lower bound, each bound at level alpha / 2: above eps with probability at
  most 2 alpha per row if the client is eps-LDP), and the largest eps_lower - eps over all rows.

``--csv`` writes the full audit's frame, every row with the command, the commit, the machine, the load average
before and after and the wall-clock seconds (``benchmarks/provenance.py``); the book's chapter 09 shows the
committed result of::

    nice -n 10 .venv/bin/python benchmarks/bench_audit.py --csv benchmarks/results/audit.csv

The reports are the deployed client's (``ldp.client.report_many``: the operating system's coins), so the numbers
change from run to run within their confidence; only the plans' public seeds are fixed.
"""
from __future__ import annotations

import argparse
import time

import pandas as pd
import provenance

from ldp.attacks.audit import audit_grid, audited_protocols


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--eps", type=float, nargs="*", default=[0.25, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0])
    ap.add_argument("--groups", choices=["kinds", "all"], default="kinds")
    ap.add_argument("--alpha", type=float, default=1e-6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--book-n", type=int, default=20_000)
    ap.add_argument("--book-eps", type=float, nargs="*", default=[0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--csv", help="write the full audit's frame here")
    args = ap.parse_args()
    protocols = audited_protocols()
    commit = provenance.commit("ldp", "benchmarks")  # the code the run starts from
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 1000)

    audit_grid({"PEM-OLH": protocols["PEM-OLH"]}, [1.0], n=200, n_jobs=1)  # warm-up: numba, the plan's labels
    t0 = time.perf_counter()
    book = audit_grid(protocols, args.book_eps, n=args.book_n, alpha=args.alpha, n_jobs=args.jobs)
    print(f"book-size audit: {book.shape[0]} rows ({len(protocols)} protocol/oracle pairs, every group kind, "
          f"eps {args.book_eps}), {args.book_n:,} reports of each value, {args.jobs} workers: "
          f"{time.perf_counter() - t0:.1f} s wall; largest eps_lower - eps {(book.eps_lower - book.epsilon).max():.3f}",
          flush=True)

    t0, load0 = time.perf_counter(), provenance.load()
    full = audit_grid(protocols, args.eps, n=args.n, alpha=args.alpha, groups=args.groups, n_jobs=args.jobs)
    wall = time.perf_counter() - t0
    cols = ["protocol", "kind", "group", "questions", "epsilon", "n", "k0", "k1", "eps_hat", "eps_lower"]
    print(full[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    gap = full.eps_lower - full.epsilon
    print(f"full audit: {full.shape[0]} rows, {args.n:,} reports of each value per group ({args.groups}), "
          f"alpha {args.alpha:g} per bound pair, {wall:.1f} s wall")
    print(f"every eps_lower <= eps: {bool((gap <= 0).all())} (largest eps_lower - eps {gap.max():.3f}; "
          f"chance of any row above its eps if the client is eps-LDP <= {2 * args.alpha * full.shape[0]:.1e})")
    print(f"eps - eps_lower: median {(-gap).median():.3f}, largest {(-gap).max():.3f} "
          f"(at {full.loc[gap.idxmin(), 'protocol']}, {full.loc[gap.idxmin(), 'kind']}, "
          f"eps {full.loc[gap.idxmin(), 'epsilon']:g})")
    if args.csv:
        from ldp.paths import atomic_path

        made = {"commit": commit, "machine": provenance.machine(),
                "command": provenance.command("bench_audit.py"), "load_before": load0, "load_after": provenance.load(),
                "seconds": round(wall, 1), "date": provenance.now()}
        with atomic_path(args.csv) as tmp:
            full.assign(**made).to_csv(tmp, index=False)
        print(f"written: {args.csv}")


if __name__ == "__main__":
    main()
