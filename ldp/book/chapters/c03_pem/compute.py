"""TODO docstring."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .... import values as V
from ....analysis import candidate_configs, evaluate_configs, optimize_pem
from ....analysis.config import PEMConfig
from ...claims.store import MissingResult


def rounds_table(result, heavy, m: int) -> pd.DataFrame:
    """One row per round of a PEM run: users, prefix bits, ``|D_i|``, the kept prefixes (as bits, best
    first) and how many of the true heavy values' prefixes they hold.

    Parameters
    ----------
    result : ldp.core.HeavyHitterResult
        A PEM run (its ``rounds``).
    heavy : array_like of int
        The true heavy values (``m``-bit).
    m : int
        Value length in bits.
    """
    heavy = np.asarray(heavy, dtype=np.uint64)
    rows = []
    for i, r in enumerate(result.rounds):
        true_prefixes = V.prefix(heavy, m, r.stop)
        rows.append({"round i": i + 1, "users n[i]": r.n_users, "prefix bits": r.stop,
                     "|D_i| tested": r.n_candidates,
                     "C_i (kept, best first)": ", ".join(format(int(x), f"0{r.stop}b") for x in r.kept),
                     f"true top-{len(heavy)} prefixes in C_i": int(np.isin(true_prefixes, r.kept).sum())})
    return pd.DataFrame(rows)


def config_table(rule: Mapping[int, PEMConfig], opt: Mapping[tuple, PEMConfig], n: int) -> pd.DataFrame:
    """The rule's configuration (section 4.3) and the optimizer's, per ``k`` and ``epsilon``.

    ``rule`` maps ``k`` to :func:`ldp.analysis.pem_default_config`'s result,
    ``opt`` maps ``(k, epsilon)`` to :func:`ldp.analysis.optimize_pem`'s.
    """
    rows = []
    for k, c_rule in rule.items():
        entries = [("rule of section 4.3", c_rule)]
        entries += [(f"optimize_pem, ε = {eps:g}", c) for (k_, eps), c in opt.items() if k_ == k]
        for how, c in entries:
            rows.append({"k": k, "chosen by": how, "γ": c.gamma, "η_i": str(c.etas), "g": c.g,
                         "prefix lengths": str(c.prefix_lengths), "|D_i|": str(c.domain_sizes),
                         "Σ |D_i|": c.queries, "g · max |D_i|": c.g * max(c.domain_sizes),
                         "n[i]": c.group_sizes(n)[0]})
    return pd.DataFrame(rows)


def readings_table(rule: Mapping[int, PEMConfig], epsilons, n) -> pd.DataFrame:
    """Predicted F1 of the rule's configurations under the four readings of eq. (5).

    Columns ``k``, ``ε``, then ``SLOTS / COMPETITORS`` for ``slots`` in
    ``text, formula`` and ``competitors`` in ``paper, lower``, and the cap
    ``1 - 1/k`` of the printed formula.
    """
    rows = []
    for k, c in rule.items():
        for eps in epsilons:
            row = {"k": k, "ε": eps}
            for slots in ("text", "formula"):
                for comp in ("paper", "lower"):
                    row[f"{slots} / {comp}"] = float(evaluate_configs([c], eps, n=n, slots=slots,
                                                                      competitors=comp).f1.iloc[0])
            row["cap 1 - 1/k"] = 1 - 1 / k
            rows.append(row)
    return pd.DataFrame(rows)


def optimizer_curves(opt: Mapping[tuple, PEMConfig], rule: Mapping[int, PEMConfig], *, m: int, n, eta_max: int,
                     choice: str) -> pd.DataFrame:
    """Predicted F1 and NCR against η and the optimizer's choices (layout ``choice``): see
    :func:`ldp.figures.pem_optimizer.frame`, whose data this is."""
    epsilons = list(dict.fromkeys(eps for _, eps in opt))
    out = []
    for col, k in enumerate(rule):
        eta_feasible = rule[k].etas[0]  # largest eta within the limit (the rule)
        left = [c for c in candidate_configs(k, m, query_limit=2**40, eta_layout="leftover") if c.etas[0] <= eta_max]
        bal = [c for c in candidate_configs(k, m, query_limit=2**40, eta_layout="balanced") if max(c.etas) <= eta_max]
        for eps in epsilons:
            lft = evaluate_configs(left, eps, n=n, competitors="lower")
            lft = lft.assign(eta=lft.etas.map(lambda e: e[0]))
            bl = evaluate_configs(bal, eps, n=n, competitors="lower")
            paper = evaluate_configs(bal, eps, n=n, competitors="paper")
            bl = bl.assign(eta=bl.etas.map(max), f1_paper=paper["f1"].to_numpy(), ncr_paper=paper["ncr"].to_numpy())
            c_opt = opt[k, eps]
            for row, metric in enumerate(("f1", "ncr")):
                y_opt = c_opt.predicted_f1 if metric == "f1" else c_opt.predicted_ncr
                points = pd.concat([lft[["eta", "etas", metric]].assign(layout="leftover"),
                                    bl[["eta", "etas", metric, f"{metric}_paper"]].assign(layout="balanced")
                                    .rename(columns={f"{metric}_paper": "predicted_paper"}),
                                    pd.DataFrame({"eta": [max(c_opt.etas)], "etas": [c_opt.etas], metric: [y_opt],
                                                  "layout": [choice]})])
                out.append(points.rename(columns={metric: "predicted"}).assign(
                    panel="abcd"[2 * row + col], k=k, metric=metric, epsilon=eps,
                    etas=points["etas"].map(str).to_numpy(),
                    over_query_limit=(points["eta"] > eta_feasible).to_numpy()))
    return pd.concat(out, ignore_index=True)[
        ["panel", "k", "metric", "epsilon", "layout", "eta", "etas", "predicted", "predicted_paper",
         "over_query_limit"]]


#: the other readings of section 4.3 the report decides the optimizer's claims under: name -> optimize_pem options
OPTIMIZER_READINGS: dict[str, dict[str, Any]] = {"competitors='paper'": {"competitors": "paper"},
                                                 "gammas, cand_sizes='search'": {"gammas": "search",
                                                                                 "cand_sizes": "search"}}


def optimizer_readings(ks: Sequence[int], epsilons: Sequence[float], m: int, *, n, query_limit: int) -> pd.DataFrame:
    """:func:`ldp.analysis.optimize_pem`'s choice under each of :data:`OPTIMIZER_READINGS`.

    Parameters
    ----------
    ks, epsilons : sequences
        Numbers of heavy hitters and budgets.
    m : int
        Value length in bits.
    n : float, keyword-only
        Number of users.
    query_limit : int, keyword-only
        The frequency-oracle query limit.

    Returns
    -------
    pandas.DataFrame
        ``reading, k, epsilon, gamma, g, etas`` (``etas`` written as a tuple), one row per reading, k and ε.
    """
    rows = []
    for name, options in OPTIMIZER_READINGS.items():
        for k in ks:
            for eps in epsilons:
                c = optimize_pem(eps, k, m, n=n, query_limit=query_limit, **options)
                rows.append({"reading": name, "k": int(k), "epsilon": float(eps), "gamma": c.gamma, "g": c.g,
                             "etas": str(tuple(int(e) for e in c.etas))})
    return pd.DataFrame(rows)


def optimizer_choices(curves: pd.DataFrame, *, choice: str, readings: pd.DataFrame | None = None,
                      reading: str | None = None) -> pd.DataFrame:
    """The optimizer's bits per round beside the rule's, per (k, ε), read from :func:`optimizer_curves`' frame.

    Parameters
    ----------
    curves : pandas.DataFrame
        :func:`optimizer_curves`' frame (the figure's data).
    choice : str, keyword-only
        Its layout name of the optimizer's choice.
    readings : pandas.DataFrame, optional, keyword-only
        :func:`optimizer_readings`' table: the choice under ``reading`` is taken from it instead.
    reading : str, optional, keyword-only
        A key of :data:`OPTIMIZER_READINGS`.

    Returns
    -------
    pandas.DataFrame
        ``point, k, epsilon, ours, paper, f1_ours, f1_paper``: the optimizer's and the rule's (largest feasible
        η, leftover layout) ``etas`` as tuples and their predicted F1 (``f1_ours`` NaN under a reading).

    Raises
    ------
    MissingResult
        If no (k, ε) has both choices.
    """
    rows = []
    for (k, eps), grp in curves[curves["metric"] == "f1"].groupby(["k", "epsilon"]):
        ours = grp[grp["layout"] == choice] if reading is None or readings is None else readings[
            (readings["reading"] == reading) & (readings["k"] == k) & np.isclose(readings["epsilon"], eps)]
        rule = grp[(grp["layout"] == "leftover") & ~grp["over_query_limit"].astype(bool)].sort_values("eta")
        if ours.empty or rule.empty:
            continue
        o, r = (tuple(int(v) for v in re.findall(r"\d+", str(t["etas"].iloc[-1]))) for t in (ours, rule))
        rows.append({"point": f"k = {k}, ε = {eps:g}: optimizer {o}, rule {r}", "k": int(k), "epsilon": eps,
                     "ours": o, "paper": r, "f1_ours": float(ours["predicted"].iloc[-1]) if reading is None
                     else np.nan, "f1_paper": float(rule["predicted"].iloc[-1])})
    if not rows:
        raise MissingResult("the optimizer's figure has no optimizer choice" + (f" under {reading}" if reading else ""))
    return pd.DataFrame(rows)

