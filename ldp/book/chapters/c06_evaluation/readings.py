"""The runs chapter 06's claims need under another reading of the paper, saved beside the chapter's own tables.

The reproduction report decides a claim that rests on a reading the paper leaves open again under a documented
other reading (``book/interpretation.md``; :mod:`ldp.book.claims.readings`).  For chapter 06 these are: SPM and
MCM with 10 % of the users for the final test (section 6.2.4's partition) at the budgets and ``k`` the text
quotes, PEM on the URL stand-in's ``binomial`` calibration and on the synthetic set cut at RAPPOR's 100 values,
and the sizes of those sets and of AOL without its empty-query placeholder.  Each table is saved as
``<figure or table>--<reading>``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ....core.dataset import Dataset
from ....experiments import Grid, row_dataset, run_grid, summarize
from . import eval_datasets, eval_variance, eval_vary
from .compute import anomaly_table, protocols_at, sizes_without_top, variance_table

__all__ = ["QUOTED_EPSILONS", "QUOTED_KS", "FINAL_FRACTION", "run_other_readings"]

#: the budgets and ``k`` the chapter's text quotes: the partition reading is run at these only
QUOTED_EPSILONS, QUOTED_KS = (0.9, 1.2, 2.0, 4.0), (1, 2, 16, 30)
#: the share of users the partitioned SPM and MCM keep for the final test (section 6.2.4)
FINAL_FRACTION = 0.1


def run_other_readings(store, *, protocols: Sequence[tuple], datasets: Sequence[tuple], synthetic: tuple,
                       synthetic_data: Dataset, aol_data: Dataset | None, epsilons: Sequence[float],
                       ks: Sequence[int], k_fixed: int, eps_fixed: float, repetitions: int, seed: int, n_jobs: int,
                       query_limit: int, panels: Mapping[str, str]) -> list[str]:
    """Run the grids of the other readings on the count engine and save their tables into ``store``.

    Parameters
    ----------
    store : ldp.book.claims.ResultStore
        Where the chapter saves its tables (chapter ``06_evaluation``).
    protocols, datasets : sequences of grid entries
        The chapter's ``(name, keywords, label)`` protocols (PEM first) and data sets of Figures 5 and 6.
    synthetic : tuple
        The synthetic set's grid entry (the ``exp-100`` reading cuts it at 100 distinct values).
    synthetic_data : Dataset
        The synthetic set Figures 5 and 9 ran on (Figure 9 under the partition reading).
    aol_data : Dataset or None
        The AOL tally when it is in this build (its sizes without the empty-query placeholder).
    epsilons, ks : sequences
        The chapter's grids (a rerun's grid may leave out the levels a reading is decided at: it is skipped).
    k_fixed, eps_fixed : int, float
        The ``k`` of the ε grids and the ε of the ``k`` grids.
    repetitions, seed, n_jobs, query_limit : int
        As the chapter's grids.
    panels : mapping of str to str
        The panel names of the data sets (:func:`.eval_vary.frame`).

    Returns
    -------
    list of str
        The names of the saved tables, in the order saved.
    """
    chapter, saved = eval_vary.CHAPTER, []

    def save(name: str, frame: pd.DataFrame) -> None:
        store.save(chapter, name, frame)
        saved.append(name)

    quoted: dict[str, list] = {"epsilon": [e for e in epsilons if e in QUOTED_EPSILONS],
                               "k": [k for k in ks if k in QUOTED_KS]}
    part = [(p, {"query_limit": query_limit, "final_fraction": FINAL_FRACTION}, p) for p in ("MCM", "SPM")]
    pem, binomial = protocols[:1], [("url", {"slicing": "binomial"}, "URL")]
    exp_100 = [(synthetic[0], synthetic[1] | {"n_distinct": 100}, "Synthetic")]
    readings: dict[str, tuple[Sequence[tuple], Sequence[tuple], Mapping[str, Sequence]]] = {
        "partition": (part, datasets, quoted),  # SPM and MCM partitioned, at the levels the text quotes
        "url-binomial": (pem, binomial, {"epsilon": epsilons, "k": ks}),
        "exp-100": (pem, exp_100, {"k": ks})}
    fixed: dict[str, dict[str, list]] = {"epsilon": {"k": [k_fixed]}, "k": {"epsilon": [eps_fixed]}}
    alt: dict[tuple[str, str], pd.DataFrame] = {}
    alt_data: dict[str, Dataset] = {}
    for tag, (protos, sets, levels) in readings.items():
        for x, values in levels.items():
            if not values:  # a rerun whose grid leaves out the levels this reading is decided at
                continue
            grid = Grid(protocols=protos, datasets=sets, params={x: values, **fixed[x]}, repetitions=repetitions,
                        engine="counts", root_seed=seed)
            runs = run_grid(grid, n_jobs=n_jobs, progress=False)
            alt[tag, x] = summarize(runs, by=["dataset", "protocol", x], metrics=["f1", "ncr", "var"])
            save(f"{eval_vary.NAMES[x]}--{tag}", eval_vary.frame(alt[tag, x], x=x, datasets=panels))
        if tag != "partition":  # the data set this reading gives, and its sizes
            alt_data[tag] = row_dataset(runs.iloc[0])
            save(f"{eval_datasets.NAME}--{tag}", eval_datasets.frame(runs))
    save("anomalies--url-binomial", anomaly_table({"URL": alt_data["url-binomial"]}, alt["url-binomial", "k"],
                                                  epsilon=eps_fixed, query_limit=query_limit))
    if ("partition", "epsilon") in alt:  # Figure 9 with SPM and MCM partitioned
        syn = synthetic_data
        part_protocols = protocols_at(("MCM", "SPM"), quoted["epsilon"], k=k_fixed, m=syn.m,
                                      query_limit=query_limit, final_fraction=FINAL_FRACTION)
        save(f"{eval_variance.NAME}--partition", eval_variance.frame(variance_table(
            alt["partition", "epsilon"].query("dataset == 'Synthetic'"), part_protocols, int(syn.n),
            syn.top_frequencies(k_fixed))))
    if aol_data is not None:  # AOL without its most frequent row, the empty-query placeholder
        if aol_data.decode(aol_data.top(1))[0].strip() != "-":
            raise ValueError("AOL's most frequent query is not its empty-query placeholder '-'")
        save(f"{eval_datasets.NAME}--aol-placeholder", pd.DataFrame([sizes_without_top(aol_data, "AOL")]))
    return saved
