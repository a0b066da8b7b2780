"""Kernel CPU of chapter 08's notebook cells at paper scale, outside the notebook.

The notebook's grids (cells "runs" and "tuning") run in joblib workers; this script times what the notebook's
own process does with their results: the summaries, figure frames, drawing and saving of the two after-PEM
figures, and the deployer's table (every protocol through the protocol engine at ``n_deploy`` users).

The grids' results are built once with the notebook's code and paper defaults (``--build``; about four
minutes of CPU on one core, through the results cache) and kept as a pickle, so each timing reads the same
inputs whatever the library's source digest (which keys the results cache) is at the time.

Usage::

    python benchmarks/ch08_kernel.py --build                 # once: the paper-scale runs -> .cache/bench/ch08_runs.pkl
    python benchmarks/ch08_kernel.py --cells figures deploy  # CPU per cell (time.process_time)
    python benchmarks/ch08_kernel.py --cells figures --out /tmp/figs   # the figures and their CSVs into /tmp/figs
"""
from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

INPUTS = Path(__file__).resolve().parents[1] / ".cache" / "bench" / "ch08_runs.pkl"
# the notebook's paper defaults (notebooks/08_after_pem.ipynb, cell "parameters")
EPSILONS = [0.5, 0.9, 1.2, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0]
KS = [1, 2, 4, 8, 12, 16, 20, 24, 28, 30, 32]
K_FIXED, EPS_FIXED, REPS, TUNING_REPS = 16, 2.0, 10, 2
TUNING_SEED, SEED, FINAL_FRACTION = 20190102, 20190101, 0.1
N_SYNTHETIC, M_SYNTHETIC, EXP_SCALE, QUERY_LIMIT, N_DEPLOY = 1_000_000, 64, 0.05, 2**20, 100_000


def build(n_jobs: int) -> None:
    """The notebook's cells "runs" and "tuning" at paper scale; their results pickled to :data:`INPUTS`."""
    import pandas as pd

    from ldp.book.chapters.c08_after_pem import compute
    from ldp.experiments import Grid, run_grid

    no_aol = compute.aol_missing()
    protocols = compute.protocols(QUERY_LIMIT)
    synth = ("exponential", {"n": N_SYNTHETIC, "scale": EXP_SCALE, "m": M_SYNTHETIC}, "Synthetic")
    data_sets = [("url", {}, "URL")] + ([] if no_aol else [("aol", {}, "AOL")]) + [synth]
    grids = {"epsilon": {"epsilon": EPSILONS, "k": [K_FIXED]}, "k": {"epsilon": [EPS_FIXED], "k": KS}}

    def grid(protos, sets, params, reps=REPS, root=SEED):
        return run_grid(Grid(protocols=protos, datasets=sets, params=params, repetitions=reps, engine="counts",
                             root_seed=root), n_jobs=n_jobs, progress=True)

    runs = {x: grid(protocols, data_sets, params) for x, params in grids.items()}
    candidates = compute.candidates(QUERY_LIMIT, FINAL_FRACTION)
    m = runs["epsilon"].groupby("dataset", sort=False)["m"].first()
    tried = compute.feasible_candidates(candidates, data_sets, m=m, epsilons=EPSILONS, ks=[K_FIXED, *KS])
    tuning = pd.concat([grid(tried[spec[2]], [spec], grids["epsilon"], reps=TUNING_REPS, root=TUNING_SEED)
                        for spec in data_sets], ignore_index=True)
    sweep = compute.choose(tuning, candidates)
    for x, params in grids.items():
        runs[x] = pd.concat([runs[x], *(grid(compute.tuned_protocols(sweep, candidates, spec[2]), [spec], params)
                                        for spec in data_sets)], ignore_index=True)
    INPUTS.parent.mkdir(parents=True, exist_ok=True)
    with open(INPUTS, "wb") as f:
        pickle.dump({"runs": runs, "sweep": sweep, "no_aol": no_aol}, f)
    print(f"wrote {INPUTS}")


def figures(inputs: dict, out: Path | None) -> None:
    """The notebook's cell drawing the two after-PEM figures (summaries, frames, drawing, saving)."""
    from ldp.book.chapters.c08_after_pem import after_pem, compute
    from ldp.book.plotting import save_figure
    from ldp.experiments import summarize

    summary = {x: summarize(r, by=["dataset", "protocol", "epsilon", "k"], metrics=["f1", "ncr"])
               for x, r in inputs["runs"].items()}
    for x, s in summary.items():
        frame = after_pem.frame(s, x=x)
        fig = after_pem.draw(frame, x=x, xlabel=r"$\varepsilon$" if x == "epsilon" else "$k$",
                             missing=compute.missing_panels(inputs["no_aol"]))
        save_figure(fig, after_pem.NAMES[x], data=frame, **({"folder": out} if out else {}))


def deploy(inputs: dict, out: Path | None) -> None:
    """The notebook's cell of the deployer's table (protocol engine at ``n_deploy`` users)."""
    from ldp import datasets
    from ldp.book.chapters.c08_after_pem import compute

    runs = inputs["runs"]
    syn = runs["epsilon"][(runs["epsilon"]["dataset"] == "Synthetic") & (runs["epsilon"]["epsilon"] == EPS_FIXED)]
    warm = datasets.exponential(2_000, scale=EXP_SCALE, m=M_SYNTHETIC, rng=SEED)
    costed = compute.protocols(QUERY_LIMIT) + compute.tuned_protocols(
        inputs["sweep"], compute.candidates(QUERY_LIMIT, FINAL_FRACTION), "Synthetic")
    table = compute.deployer_table(costed, datasets.exponential(N_DEPLOY, scale=EXP_SCALE, m=M_SYNTHETIC, rng=SEED),
                                   epsilon=EPS_FIXED, k=K_FIXED, warmup=warm,
                                   counts_ms=1000 * syn.groupby("protocol")["wall_time"].mean())
    table["F1 (mean, count engine)"] = syn.groupby("protocol")["f1"].mean()
    print(table.to_string())
    if out:
        out.mkdir(parents=True, exist_ok=True)
        table.to_pickle(out / "deploy.pkl")


CELLS = {"figures": figures, "deploy": deploy}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="build the paper-scale runs first")
    ap.add_argument("--n-jobs", type=int, default=1, help="joblib workers of --build")
    ap.add_argument("--cells", nargs="*", default=[], choices=sorted(CELLS))
    ap.add_argument("--out", type=Path, help="save the figures (and the deployer's table) here")
    args = ap.parse_args(argv)
    if args.build:
        build(args.n_jobs)
    if not args.cells:
        return 0
    with open(INPUTS, "rb") as f:
        inputs = pickle.load(f)
    import ldp.book.plotting  # noqa: F401  (imports outside the timed cells, as the notebook's first cell)
    for name in args.cells:
        t0, w0 = time.process_time(), time.perf_counter()
        CELLS[name](inputs, args.out)
        print(f"{name}: {time.process_time() - t0:.2f} s CPU (kernel), {time.perf_counter() - w0:.2f} s wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
