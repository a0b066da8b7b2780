"""What chapter 06 computes above the library: its data sets, the protocols' variances, the engine check, anomalies.

The evaluation's grids run PEM, MCM and SPM (:data:`METHODS`) on the URL stand-in, AOL (when its verified file is
in this build, :func:`aol_status`) and the synthetic set; this module reads the data sets back from the runs
(:func:`grid_datasets`), predicts each protocol's variance of a released count (:func:`predicted_variance`),
places one protocol-engine run among many count-level runs (:func:`engine_comparison`) and measures the causes
of Figures 5 and 6's anomalies on the exact counts (:func:`part_ranks`, :func:`anomaly_table`).  The values the
chapter's prose quotes are assembled from these in :mod:`.findings`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ....analysis import olh_pq, olh_variance
from ....core.dataset import Dataset
from ....datasets import ChecksumError, DataFileNotFoundError, check_aol
from ....experiments import row_dataset
from ....protocols import MCM, PEM, SPM
from ....values import group_values, match_sorted, prefix, sort_unique

__all__ = ["METHODS", "AolStatus", "aol_status", "grid_dataset", "grid_datasets", "protocols_at", "per_method_table",
           "summary_value", "whole_value_report", "predicted_variance", "engine_comparison", "dataset_sizes",
           "variance_table", "ordered_pairs", "sizes_without_top", "part_ranks", "top_two_gap", "anomaly_table",
           "ANOMALY_COLUMNS", "anomaly_view", "prefix_ranks", "FREQUENT"]

#: the protocols of the evaluation, in the order of every legend and table
METHODS = ("PEM", "MCM", "SPM")


class AolStatus(NamedTuple):
    """Whether the AOL tally is in this build: ``problem`` is ``""`` when its verified copy is there.

    Attributes
    ----------
    problem : str
        ``""``, ``"is missing"`` or ``"fails its sha256 check"`` (what the empty AOL panels say).
    error : str
        The loader's message when the file is missing or corrupt (names the folder searched), else ``""``.
    """

    problem: str
    error: str

    @property
    def present(self) -> bool:
        """True when the verified AOL tally is in this build."""
        return not self.problem

    @property
    def absent(self) -> str:
        """The clause a sentence quoting an AOL number says instead: ``"the AOL data file is missing in this build"``.

        ``""`` when the file is there.
        """
        return f"the AOL data file {self.problem} in this build" if self.problem else ""


def aol_status() -> AolStatus:
    """Check the AOL tally (:func:`ldp.datasets.check_aol`): present, missing, or failing its checksum.

    The tally ships in ``data/``; ``LDP_DATA_DIR``, when set, is the only folder searched.  Without a
    verified copy the chapter leaves AOL out, and its panels and sentences say why.
    """
    try:
        check_aol()
    except (DataFileNotFoundError, ChecksumError) as exc:
        return AolStatus("is missing" if isinstance(exc, DataFileNotFoundError) else "fails its sha256 check",
                         str(exc))
    return AolStatus("", "")


def grid_dataset(runs: pd.DataFrame, name: str) -> Dataset:
    """The exact data set ``name`` a grid ran on (:func:`ldp.experiments.row_dataset` of its first row)."""
    return row_dataset(runs[runs["dataset"] == name].iloc[0])


def grid_datasets(runs: pd.DataFrame, names: Iterable[str]) -> dict[str, Dataset]:
    """The exact data sets a grid ran on, by name in the order of ``names`` (:func:`grid_dataset`)."""
    return {name: grid_dataset(runs, name) for name in names}


def protocols_at(methods: Iterable[str], epsilons: Iterable[float], *, k: int, m: int, **options) -> dict:
    """The protocol objects of a grid, ``(method, epsilon) -> ldp.<method>(epsilon, k, m, **options)``.

    ``methods`` are among :data:`METHODS`.

    Their public plans give the budget and users of each released estimate (:func:`whole_value_report`).
    """
    classes = {P.name: P for P in (PEM, MCM, SPM)}
    return {(meth, e): classes[meth](e, k, m, **options) for meth in methods for e in epsilons}


def per_method_table(summary: pd.DataFrame, x: str, values: str) -> pd.DataFrame:
    """A summary as the page shows it: one row per level of ``x``, one column per ``"<data set> <protocol>"``."""
    return (summary.assign(col=summary["dataset"] + " " + summary["protocol"])
            .pivot(index=x, columns="col", values=values).rename_axis(columns=None))


def summary_value(summary: pd.DataFrame, dataset: str, protocol: str, col: str, value, metric: str = "f1",
                  stat: str = "mean") -> float:
    """One value of a :func:`summarize` frame, e.g. PEM's mean F1 on URL at ``epsilon = 4`` (NaN if absent)."""
    sel = summary[(summary["dataset"] == dataset) & (summary["protocol"] == protocol) & (summary[col] == value)]
    return float(sel[f"{metric}_{stat}"].iloc[0]) if len(sel) else float("nan")


def whole_value_report(protocol, n: int) -> tuple[float, float]:
    """Budget and number of users of the whole-value report that gives a protocol's released estimates.

    Read from the protocol's public plan (:meth:`~ldp.protocols.HeavyHitterProtocol.plan`): the groups
    whose questions include the whole ``m``-bit value.  MCM and SPM (budget split, section 3):
    every user, at ``epsilon / 2`` and ``epsilon / 3``; PEM: its last group, at the full ``epsilon``.

    Returns
    -------
    (float, float)
        The report's ``epsilon`` and the users who send it (``n`` when every group does).
    """
    plan = protocol.plan(n, rng=0)
    groups = [(frac, q) for frac, qs in zip(plan.fractions, plan.questions) for q in qs
              if q.start == 0 and q.stop == plan.m and not q.channels]  # not MCM's one block of a short value
    if not groups:
        raise ValueError(f"{protocol!r} has no whole-value report in its plan")
    users = n if len(groups) == len(plan.fractions) else sum(frac for frac, _ in groups) * n
    return groups[0][1].epsilon, users


def predicted_variance(protocol, n: int, frequencies=None) -> float:
    """Variance of a released count estimate, scaled to ``n`` users (section 6.2.6).

    Without ``frequencies``: eq. (3), OLH's variance for a value nobody holds, of the whole-value
    report (:func:`whole_value_report`), times ``(n / n_g)**2``.  With ``frequencies`` (the true
    top values'), the exact variance of the scaled estimate averaged over them: the holders' own
    reports (``f p (1 - p)`` instead of ``q (1 - q)``) and, when only ``n_g < n`` users report, the
    hypergeometric number of holders among them.
    """

    e, n_g = whole_value_report(protocol, n)
    if frequencies is None:
        return float(olh_variance(e, n_g)) * (n / n_g) ** 2  # eq. (3), scaled by n / n_g
    f = np.asarray(frequencies, dtype=float)
    p, q = olh_pq(e)
    oracle = n_g * (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (p - q) ** 2  # Var[I_v] / (p - q)^2, eq. (2)
    sampling = n_g * f * (1 - f) * (n - n_g) / (n - 1)  # hypergeometric count of holders among the n_g
    return float(np.mean((n / n_g) ** 2 * (oracle + sampling)))


def engine_comparison(runs_ref: pd.DataFrame, runs_proto: pd.DataFrame, protocols: Sequence[str]) -> pd.DataFrame:
    """Where one protocol-engine run falls among many count-level runs of the same point.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``method``: the wall times, and per metric (F1, NCR) the protocol engine's value,
        the count-level runs' mean and standard deviation, the z-score and the percentile.
    """
    from scipy import stats

    rows = []
    for meth in protocols:
        ref = runs_ref[runs_ref["protocol"] == meth]
        pro = runs_proto[runs_proto["protocol"] == meth].iloc[0]
        row = {"method": meth, "protocol-engine seconds": pro["wall_time"],
               "counts-engine seconds (mean)": ref["wall_time"].mean()}
        for metric in ("f1", "ncr"):
            x, ref_m = float(pro[metric]), ref[metric].to_numpy()
            sd = ref_m.std(ddof=1)
            z = (x - ref_m.mean()) / sd if sd > 0 else (0.0 if x == ref_m.mean() else np.inf)
            row |= {f"{metric} protocol": x, f"{metric} counts mean": ref_m.mean(), f"{metric} counts std": sd,
                    f"{metric} z": z, f"{metric} percentile": stats.percentileofscore(ref_m, x, kind="mean")}
        rows.append(row)
    return pd.DataFrame(rows).set_index("method")


#: section 2.2.2's frequency of a value worth recovering ("at least 0.1 % of the population")
FREQUENT = 1e-3


def dataset_sizes(runs: pd.DataFrame, k: int = 16) -> pd.DataFrame:
    """Users, distinct values, ``k``-th largest frequency and values of frequency at least :data:`FREQUENT` of each
    data set of a grid.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, n, n_distinct, f_<k>, n_frequent``, one row per data set in the grid's order.
    """

    rows = []
    for name in dict.fromkeys(runs["dataset"]):
        ds = row_dataset(runs[runs["dataset"] == name].iloc[0])
        rows.append({"dataset": name, "n": int(ds.n), "n_distinct": int(ds.n_distinct),
                     f"f_{k}": float(ds.top_frequencies(k)[-1]), "n_frequent": int(len(ds.above(FREQUENT)))})
    return pd.DataFrame(rows)


def variance_table(summary: pd.DataFrame, protocols: Mapping[tuple[str, float], object], n: int,
                   top_frequencies) -> pd.DataFrame:
    """Figure 9's points: observed Var with eq. (3) and the exact variance of each protocol's released estimate.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`ldp.experiments.summarize` rows of one data set by ``protocol, epsilon`` with ``var``.
    protocols : mapping
        ``(protocol name, epsilon)`` -> the protocol object that ran (its plan gives the
        whole-value report: :func:`ldp.experiments.summary.whole_value_report`).
    n : int
        Users of the data set.
    top_frequencies : array
        The true top-k frequencies (the exact variance averages over them).

    Returns
    -------
    pandas.DataFrame
        ``summary`` with ``var_pred`` (eq. (3)), ``var_full`` (exact), ``obs/pred`` and ``obs/full``.
    """
    out = summary.copy()
    keys = list(zip(out["protocol"], out["epsilon"]))
    out["var_pred"] = [predicted_variance(protocols[key], n) for key in keys]
    out["var_full"] = [predicted_variance(protocols[key], n, top_frequencies) for key in keys]
    out["obs/pred"] = out["var_mean"] / out["var_pred"]
    out["obs/full"] = out["var_mean"] / out["var_full"]
    return out


def ordered_pairs(points: pd.DataFrame, at: Sequence[str], z: float, *, by: str = "f1", then: str = "ncr",
                  label: str = "") -> pd.DataFrame:
    """Every pair of protocols whose ``by`` differs beyond ``z`` standard errors at a point: their ``then``.

    ``points`` has ``protocol, metric, mean, se`` and the point's columns ``at`` (e.g. ``dataset,
    epsilon``).  Returns ``point, a, se_a, b, se_b``: ``a`` the ``then`` mean of the protocol better
    in ``by``, ``b`` the other's (a point reads ``"<at[0]>, <label> = <at[1]>: <better> over <other>"``).
    """
    rows = []
    for key, grp in points.groupby(list(at)):
        grp = grp.pivot_table(index="protocol", columns="metric", values=["mean", "se"])
        for a, b in combinations(grp.index, 2):
            d = grp.loc[a, ("mean", by)] - grp.loc[b, ("mean", by)]
            if abs(d) > z * math.hypot(grp.loc[a, ("se", by)], grp.loc[b, ("se", by)]):  # beyond noise
                hi, lo = (a, b) if d > 0 else (b, a)
                rows.append({"point": f"{key[0]}, {label or at[1]} = {float(key[1]):g}: {hi} over {lo}",
                             "a": grp.loc[hi, ("mean", then)], "se_a": grp.loc[hi, ("se", then)],
                             "b": grp.loc[lo, ("mean", then)], "se_b": grp.loc[lo, ("se", then)]})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])



def sizes_without_top(ds: Dataset, name: str, k: int = 16) -> dict[str, Any]:
    """``dataset, n, n_distinct, f_<k>, n_frequent`` of ``ds`` without its most frequent value (AOL's empty-query
    placeholder).

    The row of :func:`ldp.experiments.summary.dataset_sizes` for the data set that reading gives.
    """
    counts = ds.top_counts(k + 1)
    n = int(ds.n) - int(counts[0])
    frequent = int(np.count_nonzero(ds.ranked_counts[1:] >= FREQUENT * n))
    return {"dataset": name, "n": n, "n_distinct": int(ds.n_distinct) - 1, f"f_{k}": float(counts[k]) / n,
            "n_frequent": frequent}



def _competition_rank(counts: np.ndarray, of: np.ndarray) -> np.ndarray:
    """1 + the number of entries of ``counts`` strictly larger than each of ``of``."""
    desc = np.sort(np.asarray(counts))
    return 1 + (desc.size - np.searchsorted(desc, np.asarray(of), side="right"))


def _tally(answers: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:

    d, _, inv = group_values(answers)
    return d, np.rint(np.bincount(inv, weights=weights, minlength=d.shape[0])).astype(np.int64)


def part_ranks(protocol, dataset, k: int | None = None) -> pd.DataFrame:
    """Where each true top value stands in every step of a protocol run on the exact counts (no noise).

    The steps that build the candidates, taken on the true counts instead of the oracle's estimates:

    - **PEM** (section 4.1): round ``i`` tests the ``L_i``-bit prefixes that extend the
      ``|C_{i-1}|`` kept ones (all ``2**L_1`` in round 1) and keeps the ``|C_i|`` most frequent.
      A prefix's count is the sum over every value that shares it ("prefix mass"; section 4.2.3
      assumes the values outside the top ``k`` have frequency zero), so the prefix of a top
      value can rank below ``|C_i|`` even with no noise at all.
    - **SPM and MCM** (sections 3.3, 3.4): every part question (SPM's segments, MCM's blocks
      with their channel) over all users; SPM keeps ``k`` patterns per segment, MCM the most
      frequent pattern of each channel (the rank is within the value's channel).

    Parameters
    ----------
    protocol : PEM, SPM or MCM
        The protocol as it ran (its configuration for ``dataset.n``).
    dataset : ldp.datasets.Dataset
    k : int, optional
        Top values to follow (default the protocol's ``k``).

    Returns
    -------
    pandas.DataFrame
        One row per (part, j): ``part`` (1-based round, segment or block), ``start, stop`` (bits),
        ``kept`` (how many answers the step keeps), ``j`` (rank of the true value, 1-based),
        ``rank`` (competition rank of its answer among the step's candidates; 0 when an earlier
        round already dropped it), ``held`` (``0 < rank <= kept``).
    """

    k = protocol.k if k is None else int(k)
    top, m = dataset.top(k), dataset.m
    rows = []
    if isinstance(protocol, PEM):
        cfg = protocol.config(dataset.n)
        kept_prev, prev_len = None, 0
        assert cfg.cand_sizes is not None  # filled in when a configuration is built
        for i, (length, size) in enumerate(zip(cfg.prefix_lengths, cfg.cand_sizes), 1):
            pre, cnt = dataset.prefix_tally(length)
            if kept_prev is not None:  # only the extensions of the kept prefixes are tested
                inside = match_sorted(kept_prev, prefix(pre, length, prev_len)) >= 0
                pre, cnt = pre[inside], cnt[inside]
            idx = match_sorted(pre, prefix(top, m, length) if length < m else top)
            rank = np.where(idx >= 0, _competition_rank(cnt, cnt[np.maximum(idx, 0)]), 0)
            kept_prev, prev_len = sort_unique(pre[np.argsort(-cnt, kind="stable")[:size]]), length
            rows += [(i, 0, length, size, j + 1, int(r)) for j, r in enumerate(rank)]
    else:
        parts, _ = protocol.questions()
        for i, q in enumerate(parts, 1):
            ans, top_ans, shift = q.answer(dataset.distinct, m), q.answer(top, m), np.uint64(q.seg_bits)
            kept = 1 if q.channels else min(protocol.k, q.domain_size)
            for j, a in enumerate(top_ans):
                mask = (ans >> shift) == (a >> shift) if q.channels else slice(None)  # MCM: within a's channel
                d, cnt = _tally(ans[mask], dataset.distinct_counts[mask])
                rank = _competition_rank(cnt, cnt[match_sorted(d, a[None])])[0]
                rows.append((i, q.start, q.stop, kept, j + 1, int(rank)))
    out = pd.DataFrame(rows, columns=["part", "start", "stop", "kept", "j", "rank"])
    out["held"] = (out["rank"] > 0) & (out["rank"] <= out["kept"])
    return out


def top_two_gap(dataset, protocol) -> dict[str, float]:
    """How far apart the two most frequent values are, in standard deviations of their final estimates.

    The released estimates come from the whole-value report (:func:`whole_value_report`); the
    difference of two of them has variance ``2 Var`` (eq. (3), scaled to ``n``), so the last
    step alone orders the two correctly with probability about ``Phi(z)``.

    Returns
    -------
    dict
        ``c1, c2`` (true counts), ``z`` and ``phi`` (the normal probability of the right order).
    """
    from scipy import stats


    n = dataset.n
    c1, c2 = (int(c) for c in dataset.top_counts(2))
    e, n_g = whole_value_report(protocol, n)
    sd = np.sqrt(2 * olh_variance(e, n_g)) * n / n_g  # eq. (3), scaled by n / n_g
    return {"c1": c1, "c2": c2, "z": float((c1 - c2) / sd), "phi": float(stats.norm.cdf((c1 - c2) / sd))}


def anomaly_table(data: Mapping[str, Dataset], summary_k: pd.DataFrame | None = None, *, epsilon: float,
                  query_limit: int = 2**20, pem_ks: Sequence[int] = (1, 2, 4, 8),
                  part_ks: Sequence[int] = (1,)) -> pd.DataFrame:
    """The measured causes of Figure 6's anomalies, one quantity per row (chapter 06's table ``anomalies``).

    Parameters
    ----------
    data : mapping of str to Dataset
        The evaluation's data sets by name (``"URL"``, ``"AOL"``, ``"Synthetic"``).
    summary_k : pandas.DataFrame, optional
        :func:`summarize` of the ``k`` grid (columns ``dataset, protocol, k, f1_mean, f1_std``): the
        observed F1 next to the measured cause, where the grid has the point.
    epsilon, query_limit : float, int
        The setting of the grid (Figure 6: ``epsilon = 2``, ``2**20``).
    pem_ks, part_ks : sequences of int
        The ``k`` at which PEM, and SPM and MCM, are followed on the exact counts.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, protocol, k, quantity, value``.  Quantities: ``noise_free_f1`` (PEM: the
        F1 of its rounds on the exact counts, :func:`part_ranks`; SPM, MCM: the share of the top
        ``k`` values whose pattern is kept in every part, an upper bound on it, exact at ``k = 1``),
        ``kept_part1`` (``|C_1|`` or patterns kept per segment), ``rank_part1_top<j>`` (PEM: the
        rank of the j-th value's prefix in round 1's true tally, ``j <= 8``), ``parts`` and
        ``parts_missed_top1`` (SPM, MCM: parts whose kept pattern is not the top value's),
        ``top2_gap_sd`` and ``top2_order_prob`` (PEM at ``k = 1``: :func:`top_two_gap`),
        ``f1_mean`` and ``f1_std`` (observed, from ``summary_k``).
    """

    rows = []
    for name, ds in data.items():
        runs = [(PEM, k) for k in pem_ks] + [(P, k) for P in (SPM, MCM) for k in part_ks]
        for P, k in runs:
            proto = P(epsilon, k, ds.m, query_limit=query_limit)
            ranks = part_ranks(proto, ds)
            held = ranks.groupby("j")["held"].all()
            q = {"noise_free_f1": float(held.mean()), "kept_part1": int(ranks["kept"].iloc[0])}
            if P is PEM:
                first = ranks[ranks["part"] == 1]
                q |= {f"rank_part1_top{j}": int(r) for j, r in zip(first["j"], first["rank"]) if j <= 8}
                if k == 1:
                    gap = top_two_gap(ds, proto)
                    q |= {"top2_gap_sd": gap["z"], "top2_order_prob": gap["phi"]}
            else:
                top1 = ranks[ranks["j"] == 1]
                q |= {"parts": int(len(top1)), "parts_missed_top1": int((~top1["held"]).sum())}
            if summary_k is not None:
                for stat in ("mean", "std"):
                    v = summary_value(summary_k, name, P.name, "k", k, stat=stat)
                    if v == v:
                        q[f"f1_{stat}"] = v
            rows += [(name, P.name, k, key, float(v)) for key, v in q.items()]
    return pd.DataFrame(rows, columns=["dataset", "protocol", "k", "quantity", "value"])


#: the quantities of :func:`anomaly_table` the chapter shows, with their column names on the page
ANOMALY_COLUMNS = {"kept_part1": "kept in part 1", "rank_part1_top1": "part-1 rank of the top value",
                   "rank_part1_top4": "part-1 rank of the 4th value",
                   "parts_missed_top1": "parts missing the top value", "noise_free_f1": "F1 on exact counts",
                   "f1_mean": "F1 (mean)", "f1_std": "F1 (SD)"}


def anomaly_view(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`anomaly_table` as the page shows it: one row per data set, protocol and ``k``, readable column names.

    The quantities of :data:`ANOMALY_COLUMNS` only, rounded to 3 digits, one flat header row; a quantity a row
    does not have (SPM's prefix ranks, PEM's parts) is an empty cell.
    """
    wide = table.pivot_table(index=["dataset", "protocol", "k"], columns="quantity", values="value", sort=False)
    return (wide.filter(list(ANOMALY_COLUMNS)).rename(columns=ANOMALY_COLUMNS).rename_axis(columns=None)
            .reset_index().round(3).astype(object).fillna(""))


def prefix_ranks(table: pd.DataFrame) -> pd.DataFrame:
    """PEM's round-1 rank of each top value's prefix against ``|C_1|``, from :func:`anomaly_table`'s rows.

    Returns
    -------
    pandas.DataFrame
        ``anomaly, dataset, protocol, k, rank, capacity``: one row per ``rank_part1_top<j>`` quantity
        (``anomaly`` is ``"top <j>"``, ``capacity`` the ``kept_part1`` of the same data set, protocol and ``k``).
    """
    rows = []
    for (ds, proto, k), grp in table.groupby(["dataset", "protocol", "k"], sort=False):
        q = dict(zip(grp["quantity"], grp["value"]))
        rows += [(f"top {str(name).removeprefix('rank_part1_top')}", ds, proto, int(k), float(rank),
                  float(q["kept_part1"])) for name, rank in q.items()
                 if "kept_part1" in q and str(name).startswith("rank_part1_top")]
    return pd.DataFrame(rows, columns=["anomaly", "dataset", "protocol", "k", "rank", "capacity"])

