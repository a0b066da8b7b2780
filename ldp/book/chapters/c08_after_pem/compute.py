"""Chapter 08's protocols, and TreeHist and SFP tuned: the treatment PEM gets, where the library can give it.

PEM's configuration comes from a model of its own accuracy (:func:`ldp.analysis.optimize_pem`,
section 6.1).  TreeHist and SFP have no such model here, so their settings are chosen by a
sweep, with this rule (the chapter states it and shows the sweep):

* **candidates** (:func:`candidates`) -- TreeHist: ``bits_per_level`` b in 2, 4, 8, 10 (the
  paper's b = 1 is a series of its own); SFP: ``hash_bits`` 4, 6 or 8 (Apple's 8), the fragment
  length then the longest the query limit allows (:class:`ldp.SFP`'s rule).  Each with the
  budget split (every user sends both reports at ε/2, the published protocols) and with
  partitioned users (``final_fraction`` = :data:`PARTITION` of the users send only the whole
  value, the others only the first report, each at the full ε: the paper's modification of
  SPM and MCM in section 6.2.4); candidates the query limit rules out at some point of the
  chapter's grids are left out (:func:`feasible`);
* **choice** (:func:`choose`) -- per data set and tuned series, the candidate with the highest
  mean F1 over the tuning runs: the ε grid of Figure 5 at k = 16, with a root seed of their
  own, so the runs the figures show never take part in the choice; ties go to the candidate
  listed first.  The chosen setting then runs on both grids (:func:`tuned_protocols`).

One setting per data set, chosen with the data's own F1, is more than PEM gets (its optimiser
sees only n, m, k and ε): any lead PEM keeps over a tuned series is not a matter of tuning.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ....experiments.registry import resolve_protocol
from ....oracles import CMS, HR, OLH

__all__ = ["PARTITION", "TUNED", "protocols", "candidates", "feasible", "choose", "tuned_protocols", "series_pairs"]

#: share of the users kept for the whole-value report in the partitioned series (the paper's 10 %, section 6.2.4)
PARTITION = 0.1
#: the tuned series, by protocol family
TUNED = {"TreeHist": ("TreeHist (tuned)", "TreeHist (tuned, partitioned users)"),
         "SFP": ("SFP (tuned)", "SFP (tuned, partitioned users)")}
_SWEEP = {"TreeHist": ("bits_per_level", (2, 4, 8, 10), "b = {}"), "SFP": ("hash_bits", (4, 6, 8), "hash {} bits")}
_DEFAULTS = {"SFP": {"hash_bits": 8}}  # left out of a candidate's keywords, so that its runs are the published series'


def protocols(query_limit: int) -> list[tuple[str, dict, str]]:
    """The chapter's protocols with their published settings, as :class:`~ldp.experiments.Grid` specs.

    PEM, MCM and SPM exactly as chapter 06 (same specs: their runs come from the grid cache);
    TreeHist with one bit per level (the paper's) and with 8; SFP with Apple's count-mean
    sketch and with its Hadamard count-mean sketch (oracle ``"Hashtogram"``: the support law of
    one Hadamard coefficient of a hashed cell, see :mod:`ldp.oracles.hr`), under one query limit.
    """
    q = {"query_limit": query_limit}
    return [*((name, dict(q), name) for name in ("PEM", "MCM", "SPM")), ("TreeHist", dict(q), "TreeHist"),
            ("TreeHist", {**q, "bits_per_level": 8}, "TreeHist (8 bits)"), ("SFP", dict(q), "SFP"),
            ("SFP", {**q, "oracle": "Hashtogram"}, "SFP (Hadamard sketch)")]


def candidates(query_limit: int, final_fraction: float = PARTITION) -> dict[str, list[tuple[str, dict, str]]]:
    """Tuned series -> its candidate settings as grid specs ``(name, kwargs, label)`` (module notes)."""
    out = {}
    for family, series in TUNED.items():
        key, levels, text = _SWEEP[family]
        for label, part in zip(series, (None, final_fraction)):
            extra = {} if part is None else {"final_fraction": part}
            out[label] = [(family, {"query_limit": query_limit, **extra,
                                    **({} if _DEFAULTS.get(family, {}).get(key) == v else {key: v})},
                           f"{label}: {text.format(v)}") for v in levels]
    return out


def feasible(spec: tuple[str, dict, str], *, m: int, epsilons: Sequence[float], ks: Sequence[int]) -> bool:
    """Whether the protocol of ``spec`` can be built (its query limit allows it) at every ``(epsilon, k)``."""
    factory = resolve_protocol(spec[0])[1]
    try:
        for e in epsilons:
            for k in ks:
                factory(float(e), int(k), int(m), **spec[1])
    except ValueError:
        return False
    return True


def choose(runs: pd.DataFrame, series: Mapping[str, Sequence[tuple[str, dict, str]]]) -> pd.DataFrame:
    """The sweep: every candidate's mean F1 per data set, and the one each tuned series takes.

    Parameters
    ----------
    runs : pandas.DataFrame
        :func:`~ldp.experiments.run_grid` rows of the candidates (labels as in :func:`candidates`).
    series : mapping
        :func:`candidates` (the order of each list breaks ties).

    Returns
    -------
    pandas.DataFrame
        ``dataset, series, setting, F1 (mean), runs, chosen``: one row per data set and candidate run.
    """
    rows = []
    for ds, sub in runs.groupby("dataset", sort=False):
        f1 = sub.groupby("protocol", sort=False)["f1"].agg(["mean", "count"])
        for label, specs in series.items():
            tried = [s[2] for s in specs if s[2] in f1.index]
            if not tried:
                continue
            best = max(tried, key=lambda c: (f1.loc[c, "mean"], -tried.index(c)))
            rows += [{"dataset": ds, "series": label, "setting": c.split(": ", 1)[1], "F1 (mean)": f1.loc[c, "mean"],
                      "runs": int(f1.loc[c, "count"]), "chosen": c == best} for c in tried]
    return pd.DataFrame(rows, columns=["dataset", "series", "setting", "F1 (mean)", "runs", "chosen"])


def tuned_protocols(sweep: pd.DataFrame, series: Mapping[str, Sequence[tuple[str, dict, str]]],
                    dataset: str) -> list[tuple[str, dict, str]]:
    """The grid specs of the settings :func:`choose` chose on ``dataset``, each labelled as its tuned series."""
    chosen = sweep[(sweep["dataset"] == dataset) & sweep["chosen"]]
    out = []
    for label, setting in zip(chosen["series"], chosen["setting"]):
        name, kwargs, _ = next(s for s in series[label] if s[2] == f"{label}: {setting}")
        out.append((name, kwargs, label))
    return out


def series_pairs(points: pd.DataFrame, x: str, a: str, b: str) -> pd.DataFrame:
    """Protocol ``a`` against protocol ``b`` at every (data set, ``x``) point where both ran (chapter 08's figures).

    Parameters
    ----------
    points : pandas.DataFrame
        ``dataset, protocol, <x>, mean, se``, one metric.
    x : str
        The varied parameter (``"epsilon"`` or ``"k"``).
    a, b : str
        The two protocols, as the chapter labels them.

    Returns
    -------
    pandas.DataFrame
        ``point, a, se_a, b, se_b`` (the layout of an ordering rule's measurement).
    """
    rows = []
    for (ds, xv), grp in points.groupby(["dataset", x], sort=False):
        grp = grp.set_index("protocol")
        if {a, b} <= set(grp.index):
            rows.append({"point": f"{ds}, {'ε' if x == 'epsilon' else x} = {float(xv):g}", "a": grp.loc[a, "mean"],
                         "se_a": grp.loc[a, "se"], "b": grp.loc[b, "mean"], "se_b": grp.loc[b, "se"]})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


COLUMNS = {"groups": "groups", "bits": "bits per user", "queries": "oracle queries",
           "server": "server: aggregation (s)", "clients": "all users: reports (s)", "memory": "reports (MB)",
           "counts": "count engine: one run (ms)"}


def report_bits(oracle) -> int:
    """Bits of one report of ``oracle``: HR and CMS say so; OLH sends its 64-bit seed and ``y`` in ``[d']``."""
    if isinstance(oracle, (HR, CMS)):
        return int(oracle.bits_per_report)
    if isinstance(oracle, OLH):
        return 64 + int(oracle.d_prime - 1).bit_length()
    raise TypeError(f"report_bits: no report size known for {type(oracle).__name__}")


def bits_per_user(plan) -> float:
    """Mean bits a user sends under ``plan``: one report per question of her group, averaged over the groups."""
    return sum(f * sum(report_bits(q.oracle()) for q in qs) for f, qs in zip(plan.fractions, plan.questions))


def deployer_table(protocols, data, *, epsilon: float, k: int, counts_ms: Mapping[str, float],
                   warmup=None) -> pd.DataFrame:
    """What each protocol costs, measured with the protocol engine (every report made and aggregated).

    Parameters
    ----------
    protocols : list of (name, kwargs, label)
        :func:`ldp.experiments.successors.protocols` (grid specs: name, keywords, label).
    data : ldp.datasets.Dataset
        The users (``data.m`` bits per value).
    epsilon, k : float, int
        The protocols' budget and number of heavy hitters.
    counts_ms : mapping
        Label -> mean wall time (ms) of one count-level run in the chapter's grid (a column of the table).
    warmup : ldp.datasets.Dataset, optional
        A small data set run once through each protocol before it is timed, so that the times leave
        out numba's compilation.

    Returns
    -------
    pandas.DataFrame
        One row per protocol (index ``protocol``), in the column names :data:`COLUMNS` gives: groups, bits per
        user, oracle queries, the server's time to aggregate, the time to make every user's reports, the
        reports' memory and the count engine's time per run.
    """
    rows = []
    for name, kw, label in protocols:
        P = resolve_protocol(name)[1](epsilon, k, data.m, **kw)
        if warmup is not None:
            P.aggregate(P.privatize(warmup, plan=P.plan(warmup.n, rng=1), rng=2), rng=3)
        plan = P.plan(data.n, rng=1)  # what the server publishes first
        t0 = time.perf_counter()
        reports = P.privatize(data, plan=plan, rng=2)
        t_client = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = P.aggregate(reports, rng=3)
        values = (len(res.group_sizes), bits_per_user(plan), res.queries, time.perf_counter() - t0, t_client,
                  reports.nbytes / 2**20, counts_ms.get(label, np.nan))
        rows.append({"protocol": label, **dict(zip(COLUMNS.values(), values))})
    return pd.DataFrame(rows).set_index("protocol")

