"""Chapter 09's tidy tables: each figure's frame, and the tables its claims' rules decide.

The figure modules ``ldp.book.chapters.malicious_*`` draw these frames and hold the
claims; the computing stays here, below the drawing layers.  A ``*_frame``
returns exactly the rows a figure plots (its CSV); a measure (``mga_below_input``,
``gain_points``, ...) turns such a frame into the input of a rule of
:mod:`ldp.book.claims.rules` (columns ``point, observed, expected, se``; ``point,
value, target``; or ``point, a, se_a, b, se_b``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CHAPTER", "KIND_LABELS", "CLAIM_FIELDS", "OURS_QUOTE", "OURS_SAYS", "gain_frame",
           "threshold_frame", "targets_frame", "placement_frame",
           "detector_frame", "gain_points", "mga_below_input", "below", "prediction", "lookalike", "flagged",
           "fpr_points", "done_when"]

CHAPTER = "09_malicious_users"
#: how the figures name the kinds of attack
KIND_LABELS = {"MGA": "maximal gain", "input": "input manipulation"}
#: what every test of the chapter shares
CLAIM_FIELDS: dict[str, Any] = {"chapter": CHAPTER}
#: what every claim of the chapter quotes and says (ours: the paper says nothing about malicious users)
OURS_QUOTE = "LDP protects users from the server; nothing protects the server from its users."
OURS_SAYS = "nothing (the paper has no malicious users)"


# --------------------------------------------------------------------------- figure frames
def gain_frame(table: pd.DataFrame, *, kind: str = "MGA") -> pd.DataFrame:
    """The gain figure's frame from :func:`ldp.attacks.gains.gain_table`.

    One row per (panel, oracle, epsilon, source): panel ``a`` one target, ``b`` the
    largest number of targets; ``source`` is ``closed form`` (``nan`` where there is
    none) or ``measured`` (``err`` = 2 standard errors over ``reports`` crafted reports).
    """
    t = table[table["kind"] == kind]
    rs = sorted(t["r"].unique())
    panels = {rs[0]: "a"} | ({rs[-1]: "b"} if len(rs) > 1 else {})
    t = t[t["r"].isin(list(panels))]
    base = pd.DataFrame({"panel": t["r"].map(panels), "targets": t["r"].astype(int), "oracle": t["oracle"],
                         "epsilon": t["epsilon"].astype(float)})
    closed = base.assign(source="closed form", gain=t["gain_closed"].astype(float), err=0.0, reports=0)
    measured = base.assign(source="measured", gain=t["gain"].astype(float), err=2 * t["gain_se"].astype(float),
                           reports=t["reports"].astype(int))
    return pd.concat([closed, measured], ignore_index=True)


def _summary(grid: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean and SD of the smallest fake share over repetitions; ``above_max``: searches that never planted."""
    def agg(g):
        f = g["fraction"].to_numpy(float)
        ok = f[np.isfinite(f)]
        return pd.Series({"mean": ok.mean() if ok.size else np.nan,
                          "sd": ok.std(ddof=1) if ok.size > 1 else 0.0 if ok.size else np.nan,
                          "runs": int(ok.size), "above_max": int(f.size - ok.size)})

    return grid.groupby(by, sort=False).apply(agg, include_groups=False).reset_index()


def _fraction_frame(grid, predicted, datasets, x: str) -> pd.DataFrame:
    s = _summary(grid, ["dataset", "kind", "protocol", x])
    s = s.merge(predicted, on=["dataset", "protocol", x, "kind"], how="left")
    kinds = [k for k in KIND_LABELS if k in set(s["kind"])]
    s["panel"] = [f"{datasets[d]}{kinds.index(k) + 1}" for d, k in zip(s["dataset"], s["kind"])]
    return s[["panel", "dataset", "kind", "protocol", x, "mean", "sd", "runs", "above_max", "predicted"]]


def threshold_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The threshold figure's frame: mean and SD over repetitions of the smallest fake share, and its prediction.

    Parameters
    ----------
    grid : pandas.DataFrame
        :func:`ldp.attacks.threshold_grid` (the rows with ``need == 1`` are used).
    predicted : pandas.DataFrame
        ``dataset, protocol, epsilon, kind, predicted`` (:func:`ldp.attacks.predictions`).
    datasets : mapping
        Data set label -> panel row letter (``{"Synthetic": "a", "AOL": "b"}``).

    Returns
    -------
    pandas.DataFrame
        ``panel, dataset, kind, protocol, epsilon, mean, sd, runs, above_max, predicted``
        (``runs``: repetitions whose search planted the target; ``above_max``: those
        that needed more than the largest share tried).
    """
    return _fraction_frame(grid[grid["need"] == 1], predicted, datasets, "epsilon")


def targets_frame(grid: pd.DataFrame, predicted: pd.DataFrame, *, datasets: Mapping[str, str]) -> pd.DataFrame:
    """The r-of-16 figure's frame: as :func:`threshold_frame` with ``need`` (targets planted) for ``epsilon``."""
    return _fraction_frame(grid, predicted, datasets, "need")


def placement_frame(grid: pd.DataFrame, flags: pd.DataFrame) -> pd.DataFrame:
    """PEM's smallest fake share per strategy (panel a) and the share of runs the consistency check flags (b).

    ``grid`` is :func:`ldp.attacks.threshold_grid` with a ``strategy`` column; ``flags`` has
    ``strategy, epsilon, flagged`` (one row per run at the threshold).  Returns ``panel,
    strategy, epsilon, value, sd, runs``.
    """
    a = _summary(grid, ["strategy", "epsilon"]).rename(columns={"mean": "value"}).assign(panel="a")
    b = flags.groupby(["strategy", "epsilon"], sort=False)["flagged"].agg(["mean", "size"]).reset_index()
    b = b.rename(columns={"mean": "value", "size": "runs"}).assign(panel="b", sd=0.0)
    cols = ["panel", "strategy", "epsilon", "value", "sd", "runs"]
    return pd.concat([a[cols], b[cols]], ignore_index=True)


def detector_frame(honest_counts: np.ndarray, crafted_counts: Mapping[str, np.ndarray], bound: np.ndarray,
                   threshold: int) -> pd.DataFrame:
    """The detector figure's frame: the tail ``P(count >= c)`` of honest and crafted reports, and the stated bound.

    ``honest_counts`` and each of ``crafted_counts`` (label -> counts) are the released answers
    each report supports; ``bound`` the detector's bound on the honest tail for ``c = 0 .. A + 1``
    (:meth:`ldp.attacks.SupportCountDetector.null_tail`); ``threshold`` the detector's threshold.
    Returns ``series, count, tail, reports, threshold``.
    """
    c = np.arange(bound.shape[0] - 1)
    parts = [pd.DataFrame({"series": label, "count": c, "tail": (np.asarray(x)[:, None] >= c).mean(axis=0),
                           "reports": len(x)}) for label, x in [("honest reports", honest_counts),
                                                                *crafted_counts.items()]]
    parts.append(pd.DataFrame({"series": "stated bound", "count": c, "tail": bound[:-1].astype(float), "reports": 0}))
    return pd.concat(parts, ignore_index=True).assign(threshold=int(threshold))


# --------------------------------------------------------------------------- the claims' measures
def _se(sd, runs):
    return np.asarray(sd, float) / np.sqrt(np.maximum(np.asarray(runs, float), 1))


def _ordering(points, j: pd.DataFrame, col: str, scale_a: float = 1.0) -> pd.DataFrame:
    """``OrderingHolds``' input from a frame of pairs (suffixes ``_a``, ``_b``): ``col`` and its SE."""
    return pd.DataFrame({"point": list(points), "a": scale_a * j[f"{col}_a"],
                         "se_a": scale_a * _se(j["sd_a"], j["runs_a"]), "b": j[f"{col}_b"],
                         "se_b": _se(j["sd_b"], j["runs_b"])})


def gain_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured against closed-form gain at every (oracle, epsilon, targets) with a closed form (``WithinSE``)."""
    key = ["oracle", "epsilon", "targets"]
    c = frame[frame["source"] == "closed form"].set_index(key)["gain"]
    j = frame[frame["source"] == "measured"].set_index(key).join(c.rename("closed")).dropna(subset=["closed"])
    j = j.reset_index()
    return pd.DataFrame({"point": [f"{o}, ε = {e:g}, {t} target(s)" for o, e, t in zip(j["oracle"], j["epsilon"],
                                                                                       j["targets"])],
                         "observed": j["gain"], "expected": j["closed"], "se": j["err"] / 2})


def mga_below_input(frame: pd.DataFrame) -> pd.DataFrame:
    """Input manipulation's mean share (a) against maximal gain's (b), per (data set, protocol, epsilon)."""
    key = ["dataset", "protocol", "epsilon"]
    j = frame[frame["kind"] == "input"].merge(frame[frame["kind"] == "MGA"], on=key, suffixes=("_a", "_b"))
    return _ordering((f"{d}, {p}, ε = {e:g}" for d, p, e in zip(j["dataset"], j["protocol"], j["epsilon"])), j,
                     "mean")


def below(protocol: str, other: str, dataset: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """``protocol``'s mean maximal-gain share (a) against ``other``'s (b), per epsilon on ``dataset``."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["kind"] == "MGA") & (frame["dataset"] == dataset)]
        j = f[f["protocol"] == protocol].merge(f[f["protocol"] == other], on="epsilon", suffixes=("_a", "_b"))
        return _ordering((f"{dataset}, ε = {e:g}" for e in j["epsilon"]), j, "mean")
    return measure


def prediction(protocol: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The measured share over its first-order prediction for ``protocol`` (target 1)."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["protocol"] == protocol) & np.isfinite(frame["predicted"]) & (frame["predicted"] > 0)]
        points = [f"{d}, {k}, ε = {e:g}" for d, k, e in zip(f["dataset"], f["kind"], f["epsilon"])]
        return pd.DataFrame({"point": points, "value": f["mean"] / f["predicted"], "target": 1.0})
    return measure


def lookalike(frame: pd.DataFrame) -> pd.DataFrame:
    """Half the fresh target's share in the plan's groups (a) against the chosen-group look-alike's (b)."""
    a = frame[frame["panel"] == "a"]
    j = a[a["strategy"] == "fresh, plan's groups"].merge(a[a["strategy"] == "look-alike, chosen groups"],
                                                        on="epsilon", suffixes=("_a", "_b"))
    return _ordering((f"ε = {e:g}" for e in j["epsilon"]), j, "value", scale_a=0.5)


def flagged(min_eps: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The share of runs the consistency check flags, chosen-group look-alikes, from ``min_eps`` (target 1)."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        b = frame[(frame["panel"] == "b") & (frame["strategy"] == "look-alike, chosen groups")
                  & (frame["epsilon"] >= min_eps - 1e-12)]
        return pd.DataFrame({"point": [f"ε = {e:g}" for e in b["epsilon"]], "value": b["value"], "target": 1.0})
    return measure


def fpr_points(runs: pd.DataFrame) -> pd.DataFrame:
    """The stated rate (a) against the measured false-positive rate (b) of every detector run."""
    f = runs.dropna(subset=["fpr"])
    return pd.DataFrame({"point": f["run"], "a": f["alpha"], "se_a": 0.0, "b": f["fpr"],
                         "se_b": np.sqrt(f["fpr"] * (1 - f["fpr"]) / f["honest"].clip(lower=1))})


def done_when(table: pd.DataFrame) -> pd.DataFrame:
    """Runs planted out of ``runs``: all of them for maximal gain, none for input manipulation (target)."""
    return pd.DataFrame({"point": table["kind"], "value": table["planted"],
                         "target": np.where(table["kind"] == "MGA", table["runs"], 0)})
