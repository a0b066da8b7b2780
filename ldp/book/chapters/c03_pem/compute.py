"""What chapter 03 computes (paper section 4 and its appendix) around the steps it shows.

The chapter derives PEM's identification probability step by step in its cells; the functions here turn what
the cells computed into the numbers its text quotes (each returns a mapping, the names the chapter glues with
the prefix ``pem_``) and into its tables:

* :func:`setting_findings`, :func:`toy_findings`, :func:`rounds_table` -- the setting and the small example;
* :func:`rule_findings`, :func:`config_table`, :func:`optimizer_readings` -- section 4.3's rule and the optimizer;
* :func:`normal_tail_gap`, :func:`support_findings`, :func:`support_table`, :func:`threshold_findings`,
  :func:`round_probability_findings`, :func:`round_probability_table`, :func:`rule_utility`,
  :func:`per_round_table` -- the steps of eq. (5) and eq. (4);
* :func:`readings_table`, :func:`readings_findings`, :func:`monte_carlo_findings` -- the readings of eq. (5);
* :func:`search_findings`, :func:`balanced_findings`, :func:`optimizer_curves`, :func:`optimizer_choices` -- the
  optimizer's search and its figure;
* :func:`joint_findings` -- the appendix's joint estimator, simulated;
* :func:`candidate_sizes`, :func:`gamma_above_eta` -- section 4.3's remarks on ``|C_i|`` against ``k`` and on
  ``gamma`` against ``eta``, by the model.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

from .... import values as V
from ....analysis import candidate_configs, evaluate_configs, optimize_pem, utility_score
from ....analysis.config import PEMConfig
from ....analysis.montecarlo import READINGS
from ...claims.store import MissingResult

__all__ = ["setting_findings", "toy_findings", "rounds_table", "rule_findings", "config_table", "normal_tail_gap",
           "support_findings", "support_table", "threshold_findings", "round_probability_findings",
           "round_probability_table", "rule_utility", "per_round_table", "readings_table", "readings_findings",
           "monte_carlo_findings", "search_findings", "balanced_findings", "joint_findings", "optimizer_curves",
           "OPTIMIZER_READINGS", "optimizer_readings", "optimizer_choices", "REMARK_KS", "candidate_sizes",
           "gamma_above_eta"]

#: ranks ``j`` (1-based) the chapter's table of ``P_1(j)`` shows, of ``k = 16``
SHOWN_RANKS = (1, 2, 4, 8, 12, 15, 16)
#: ranks ``j`` its table of ``P_i(j)`` per round shows
ROUND_RANKS = (1, 2, 4, 8, 12, 16)


def _predicted_f1(config: PEMConfig) -> float:
    """The F1 :func:`ldp.analysis.optimize_pem` predicted for its choice ``config``."""
    if config.predicted_f1 is None:
        raise ValueError(f"config={config}: no predicted F1; pass a configuration optimize_pem returned")
    return float(config.predicted_f1)


def setting_findings(*, n: int, m: int, ks: Sequence[int], query_limit: int) -> dict:
    """The setting the text quotes: ``n``, ``m``, ``k_small``, ``k_large`` (``ks``) and ``limit_log2``."""
    return dict(n=int(n), m=int(m), k_small=int(ks[0]), k_large=int(ks[1]), limit_log2=float(math.log2(query_limit)))


def toy_findings(result, heavy, *, n: int, D2) -> dict:
    """The small example's numbers: its users ``toy_n``, ``|D_2|`` (``toy_D2``) and the heavy values found."""
    return dict(toy_n=n, toy_D2=int(len(D2)), toy_found=int(np.isin(heavy, result.heavy_hitters).sum()))


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


def rule_findings(rule: Mapping[int, PEMConfig]) -> dict:
    """The numbers the text quotes about the rule's configuration (section 4.3) for each ``k``.

    Returns
    -------
    dict
        ``rule_{etas, g, queries, eta, last, bits, Dlast}_k{k}``: the bits per round (as text), the rounds, the
        paper's query count ``g * max |D_i|`` (section 4.3's ``2^(gamma+eta) g``), the first and the last
        round's bits, the bits after ``gamma`` and the last domain's size.
    """
    out: dict[str, Any] = {}
    for k, c in rule.items():
        out.update({f"rule_{name}_k{k}": value for name, value in (
            ("etas", str(c.etas)), ("g", c.g), ("queries", c.g * max(c.domain_sizes)), ("eta", c.etas[0]),
            ("last", c.etas[-1]), ("bits", c.m - c.gamma), ("Dlast", c.domain_sizes[-1]))})
    return out


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


def normal_tail_gap(n_i: float, p_j, *, sigmas: float = 3.0, points: int = 13) -> float:
    """Step 2 of eq. (5): the largest gap between the exact binomial tail of ``Bin(n_i, p_j)`` and its normal tail.

    Parameters
    ----------
    n_i : float
        The group's users (rounded for the binomial).
    p_j : array_like
        Each heavy value's probability of support.
    sigmas : float, keyword-only
        Thresholds within this many standard deviations of the mean ...
    points : int, keyword-only
        ... at this many evenly spaced points.

    Returns
    -------
    float
        ``max |Pr[I_j > T] - (1 - Phi((T - mu_j) / sigma_j))|`` over the thresholds and the values.
    """
    p_j = np.asarray(p_j, dtype=float)
    mu_j, sd_j = n_i * p_j, np.sqrt(n_i * p_j * (1 - p_j))
    T_probe = mu_j[None, :] + np.linspace(-sigmas, sigmas, points)[:, None] * sd_j[None, :]
    return float(np.max(np.abs(binom.sf(np.floor(T_probe), round(n_i), p_j) - norm.sf(T_probe, mu_j, sd_j))))


def support_findings(*, p: float, q: float, n1: float, D1: int, f, tail_err: float) -> dict:
    """Steps 1 and 2's numbers: OLH's ``p, q``, round 1's users ``n1`` and domain ``D1``, ``f_1``, ``f_k`` and
    the normal approximation's :func:`normal_tail_gap` ``tail_err``."""
    return dict(p=p, q=q, n1=float(n1), D1=int(D1), f1=float(f[0]), fk=float(f[-1]), tail_err=float(tail_err))


def support_table(f, p_j, mu_j, sd_j) -> pd.DataFrame:
    """Step 1 for the most and the least frequent heavy value: ``j, f_j, p_j, μ_j[1], σ_j[1]``."""
    ends = [0, -1]
    return pd.DataFrame({"j": [1, len(f)], "f_j": f[ends], "p_j": p_j[ends], "μ_j[1]": mu_j[ends],
                         "σ_j[1]": sd_j[ends]})


def threshold_findings(N: int, T_k: float, mu_0: float, sd_0: float) -> dict:
    """Step 3's numbers: ``N1``, ``Tk``, ``mu0`` and ``expected_above``, the expected number of the ``N``
    zero-frequency supports ``N(mu_0, sd_0^2)`` above ``T_k`` (``k`` by the threshold's definition)."""
    return dict(N1=int(N), Tk=float(T_k), mu0=float(mu_0), expected_above=float(N * norm.sf((T_k - mu_0) / sd_0)))


def round_probability_findings(by_hand: Mapping[str, np.ndarray], library: Mapping[str, np.ndarray]) -> dict:
    """Step 4's numbers from ``P_1(j)`` under the readings ``"text"`` and ``"formula"`` of the slots.

    Parameters
    ----------
    by_hand, library : mapping of str to numpy.ndarray
        Reading -> ``P_1(j)`` for ``j = 1..k``, computed by hand and by
        :func:`ldp.analysis.round_identification_probability`.

    Returns
    -------
    dict
        ``hand_err`` (the largest gap between the two), ``P1_first_text``, ``P1_last_text`` and
        ``P1_last_formula`` (the library's ``P_1(1)`` and ``P_1(k)``).
    """
    return dict(hand_err=max(float(np.max(np.abs(by_hand[r] - library[r]))) for r in by_hand),
                P1_first_text=float(library["text"][0]), P1_last_text=float(library["text"][-1]),
                P1_last_formula=float(library["formula"][-1]))


def round_probability_table(library: Mapping[str, np.ndarray], ranks: Sequence[int] = SHOWN_RANKS) -> pd.DataFrame:
    """``P_1(j)`` under both readings of the slots at the ``ranks`` (1-based) that exist."""
    k = len(library["text"])
    shown = [j - 1 for j in ranks if j <= k]
    return pd.DataFrame({"j": np.arange(1, k + 1), "P_1(j), slots='text'": library["text"],
                         "P_1(j), slots='formula'": library["formula"]}).iloc[shown]


def rule_utility(cfg: PEMConfig, epsilon: float, frequencies, *, n) -> dict:
    """Eq. (4) of the rule's configuration for ``k = 16`` at ε = 1 by :func:`ldp.analysis.utility_score`:
    ``rule_f1_k16_eps1`` and ``rule_ncr_k16_eps1``."""
    return dict(rule_f1_k16_eps1=utility_score(cfg, epsilon, frequencies, n=n, metric="f1"),
                rule_ncr_k16_eps1=utility_score(cfg, epsilon, frequencies, n=n, metric="ncr"))


def per_round_table(P_rounds: np.ndarray, etas: Sequence[int], ranks: Sequence[int] = ROUND_RANKS) -> pd.DataFrame:
    """``P_i(j)`` of every round ``i`` (rows ``"i (eta_i bits)"``) and their product, at the ``ranks`` that exist.

    Parameters
    ----------
    P_rounds : numpy.ndarray
        ``(g, k)``: :func:`ldp.analysis.identification_probability` with ``per_round=True``.
    etas : sequence of int
        The bits of each round.
    ranks : sequence of int
        The columns ``j`` (1-based) shown.
    """
    k = P_rounds.shape[1]
    tbl = pd.DataFrame(np.vstack([P_rounds, P_rounds.prod(axis=0)]), columns=[f"j={j}" for j in range(1, k + 1)])
    tbl.insert(0, "round", [*(f"{i + 1} ({e} bits)" for i, e in enumerate(etas)), "product"])
    return tbl.iloc[:, [0, *(j for j in ranks if j <= k)]]


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


def readings_findings(readings: pd.DataFrame, k: int) -> dict:
    """The numbers the text quotes from :func:`readings_table` at ``k`` (its ``k = 16``) and ε = 4.

    Returns
    -------
    dict
        ``read_text_k16_eps4``, ``read_formula_k16_eps4`` (predicted F1 under the slots' two readings, the
        paper's competitors), ``read_cap_k16`` (``1 - 1/k``) and ``read_max_comp_diff`` (the largest change the
        competitors' reading makes anywhere in the table).
    """
    at = readings[(readings.k == k) & (readings["ε"] == 4.0)].iloc[0]
    return dict(read_text_k16_eps4=float(at["text / paper"]), read_cap_k16=1 - 1 / k,
                read_formula_k16_eps4=float(at["formula / paper"]), read_max_comp_diff=float(max(
                    (readings["text / paper"] - readings["text / lower"]).abs().max(),
                    (readings["formula / paper"] - readings["formula / lower"]).abs().max())))


def monte_carlo_findings(mc_f1: pd.DataFrame, opt_paper_n: PEMConfig, *, reps: int, reps_large: int) -> dict:
    """The numbers the text quotes from the model's Monte-Carlo and from the optimizer under the paper's ``N``.

    Parameters
    ----------
    mc_f1 : pandas.DataFrame
        :func:`ldp.analysis.montecarlo.readings_f1`: one row per ``eta``.
    opt_paper_n : ldp.analysis.PEMConfig
        :func:`ldp.analysis.optimize_pem`'s choice with ``competitors="paper"``.
    reps, reps_large : int, keyword-only
        The Monte-Carlo's runs (``|D_i|`` of 32 and 1024; of 2^16).

    Returns
    -------
    dict
        Per ``eta``: ``mc_f1_eta{eta}`` and ``mc_f1se_eta{eta}`` (the Monte-Carlo's F1 and its standard error),
        and per reading ``{slots}_{competitors}`` of :data:`ldp.analysis.montecarlo.READINGS`
        ``pred_f1_eta{eta}_{reading}`` and ``mc_pmax_eta{eta}_{reading}`` (the predicted F1 and the largest
        per-rank error); ``optpaperN_g``, ``optpaperN_eta``, ``optpaperN_f1``; ``mc_reps``, ``mc_reps_large``.
    """
    out: dict[str, Any] = {}
    for row in mc_f1.to_dict("records"):
        out.update({f"mc_f1_eta{row['eta']}": row["f1_mc"], f"mc_f1se_eta{row['eta']}": row["f1_se"]})
        for name, (sl, cp) in READINGS.items():
            out[f"pred_f1_eta{row['eta']}_{sl}_{cp}"] = row[f"F1 {name}"]
            out[f"mc_pmax_eta{row['eta']}_{sl}_{cp}"] = row[f"max error {name}"]
    return out | dict(optpaperN_g=opt_paper_n.g, optpaperN_eta=max(opt_paper_n.etas),
                      optpaperN_f1=_predicted_f1(opt_paper_n), mc_reps=int(reps), mc_reps_large=int(reps_large))


def search_findings(candidates: Mapping[int, Sequence[PEMConfig]], best: Mapping[tuple, float],
                    opt: Mapping[tuple, PEMConfig], k: int) -> dict:
    """The optimizer's search space against its choice.

    Parameters
    ----------
    candidates : mapping of int to sequence of PEMConfig
        ``k ->`` :func:`ldp.analysis.candidate_configs` (the search space within the query limit).
    best : mapping of (int, float) to float
        ``(k, epsilon) ->`` the largest predicted F1 over ``candidates[k]``.
    opt : mapping of (int, float) to PEMConfig
        ``(k, epsilon) ->`` :func:`ldp.analysis.optimize_pem`'s choice.
    k : int
        The ``k`` whose number of candidates is quoted.

    Returns
    -------
    dict
        ``opt_n_candidates`` (``len(candidates[k])``), ``opt_search_gap`` (the largest gap between ``best`` and
        the choice's predicted F1) and ``opt_max_queries`` (the most queries ``g * max |D_i|`` of a candidate).
    """
    return dict(opt_n_candidates=len(candidates[k]),
                opt_search_gap=float(max(abs(best[key] - _predicted_f1(opt[key])) for key in opt)),
                opt_max_queries=max(c.g * max(c.domain_sizes) for cs in candidates.values() for c in cs))


def balanced_findings(balanced: PEMConfig, rule: Mapping[int, PEMConfig], opt: Mapping[tuple, PEMConfig], *,
                      ks: Sequence[int], epsilons: Sequence[float], n) -> dict:
    """The balanced layout of the rule's rounds against the rule, and the optimizer's choices, for ``ks = (16, 32)``.

    Parameters
    ----------
    balanced : ldp.analysis.PEMConfig
        The balanced layout with the rule's ``g`` for ``ks[0]``.
    rule, opt : mappings
        ``k ->`` the rule's configuration; ``(k, epsilon) ->`` the optimizer's.
    ks : two int, keyword-only
        ``k_small, k_large``.
    epsilons : sequence of float, keyword-only
        The budgets of ``opt``.
    n : float, keyword-only
        Users.

    Returns
    -------
    dict
        ``bal_f1_eps{1,2}_{lower,paper}`` and ``rule_f1_eps{1,2}_{lower,paper}`` (predicted F1 under both
        competitor readings), ``opt_etas_k16``, ``bal_etas_k16``, ``opt_etas_k32`` (bits per round, as text),
        ``opt_k32_is_rule`` (``"the same as"`` or ``"different from"``: the optimizer's choice for ``ks[1]``
        against the rule's at every ε) and ``opt_f1_k16_eps4``.
    """
    k_small, k_large = ks
    out: dict[str, Any] = {}
    for eps in (1.0, 2.0):
        for comp in ("lower", "paper"):
            ev = evaluate_configs([balanced, rule[k_small]], eps, n=n, competitors=comp)
            out[f"bal_f1_eps{eps:g}_{comp}"], out[f"rule_f1_eps{eps:g}_{comp}"] = map(float, ev.f1)
    same = all(opt[k_large, e].etas == rule[k_large].etas for e in epsilons)
    return out | dict(opt_etas_k16=str(opt[k_small, 1.0].etas), bal_etas_k16=str(balanced.etas),
                      opt_etas_k32=str(opt[k_large, 1.0].etas),
                      opt_k32_is_rule="the same as" if same else "different from",
                      opt_f1_k16_eps4=_predicted_f1(opt[k_small, 4.0]))


def joint_findings(joint, *, users: int, reps: int) -> dict:
    """The numbers the text quotes from :func:`ldp.analysis.montecarlo.joint_estimator_simulation`'s result.

    Returns
    -------
    dict
        ``joint_users``, ``joint_reps``; ``joint_max_absz`` (over every subset of answers), ``joint_z_pair``,
        ``joint_z_triple``; ``joint_pair_gap`` (the pair formula against the general recursion);
        ``joint_true_ab`` and, with the appendix's ``p, q``, ``joint_z_appendix_pq`` and ``joint_bias_appendix_pq``.
    """
    jt = joint.table.set_index("answers")
    return dict(joint_users=int(users), joint_reps=int(reps), joint_max_absz=float(jt.z.abs().max()),
                joint_z_pair=float(jt.z["ab"]), joint_z_triple=float(jt.z["abc"]), joint_pair_gap=joint.pair_gap,
                joint_true_ab=int(jt.true_count["ab"]), joint_z_appendix_pq=joint.z_appendix_pq,
                joint_bias_appendix_pq=joint.bias_appendix_pq)


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



#: the numbers of heavy hitters of section 4.3's remark on ``|C_i|`` (our grid: the paper names no k)
REMARK_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: the competitor models of eq. (5) (:func:`ldp.analysis.round_identification_probability`): the optimizer's, then
#: the paper's
_MODELS = ("lower", "paper")


def candidate_sizes(ks: Sequence[int], epsilons: Sequence[float], m: int, *, n, query_limit: int) -> pd.DataFrame:
    """``|C_i|`` of :func:`ldp.analysis.optimize_pem` when it also searches it (``cand_sizes="search"``).

    The optimizer keeps the same ``|C_i|``, one of ``{ceil(k/2), k, 2k, 4k}``, in every round before the last
    (the last keeps ``k``); for each ``k``, ``epsilon`` and competitor model of eq. (5) (``"lower"``, the
    optimizer's, and ``"paper"``) this is its choice and its predicted F1.

    Returns
    -------
    pandas.DataFrame
        ``k, epsilon, model, gamma, etas, cand_size, ratio, predicted_f1, saturated``: ``cand_size`` the
        ``|C_i|`` before the last round (NaN with one round), ``ratio`` that over ``k``, ``saturated`` True where
        the predicted F1 is 1 (to 1e-9: every ``|C_i|`` then ties, the choice says nothing).
    """
    rows = []
    for k in ks:
        for eps in epsilons:
            for model in _MODELS:
                c = optimize_pem(eps, k, m, n=n, query_limit=query_limit, cand_sizes="search", competitors=model)
                size = float(c.cand_sizes[0]) if c.g > 1 and c.cand_sizes else np.nan
                f1 = _predicted_f1(c)
                rows.append({"k": int(k), "epsilon": float(eps), "model": model, "gamma": c.gamma,
                             "etas": str(tuple(int(e) for e in c.etas)), "cand_size": size, "ratio": size / k,
                             "predicted_f1": f1, "saturated": f1 >= 1 - 1e-9})
    return pd.DataFrame(rows)


def gamma_above_eta(ks: Sequence[int], epsilons: Sequence[float], m: int, *, n, query_limit: int,
                    above: Sequence[int] = (1, 2)) -> pd.DataFrame:
    """Predicted F1 (eq. (4), the optimizer's model) of PEM with ``gamma`` slightly larger than ``eta``, and of
    :func:`ldp.analysis.optimize_pem`'s choice (``gamma = ceil(log2 k)``).

    Every configuration of :func:`ldp.analysis.candidate_configs` within ``query_limit`` with ``eta`` bits in each
    round but the last (which takes the leftover), ``|C_i| = k`` and ``gamma - eta`` in ``above``.

    Returns
    -------
    pandas.DataFrame
        ``k, epsilon, series, gamma, eta, etas, domains, predicted_f1``: ``series`` is ``"γ = η + 1"``, ...
        or ``"optimize_pem's choice"`` (``eta`` its largest ``eta[i]``); ``domains`` the ``|D_i|`` as a tuple.
    """
    rows = []
    for k in ks:
        configs = [c for gamma in range(1, m) for c in candidate_configs(k, m, query_limit=query_limit, gammas=[gamma],
                                                                          eta_layout="leftover")
                   if c.gamma - c.etas[0] in above]
        for eps in epsilons:
            f1 = evaluate_configs(configs, eps, n=n, competitors="lower")["f1"] if configs else []
            chosen = optimize_pem(eps, k, m, n=n, query_limit=query_limit)
            entries = [(f"γ = η + {c.gamma - c.etas[0]}", c, f) for c, f in zip(configs, f1)]
            for series, c, f in [*entries, ("optimize_pem's choice", chosen, _predicted_f1(chosen))]:
                rows.append({"k": int(k), "epsilon": float(eps), "series": series, "gamma": c.gamma,
                             "eta": max(c.etas[:-1] or c.etas), "etas": str(tuple(int(e) for e in c.etas)),
                             "domains": str(tuple(int(d) for d in c.domain_sizes)), "predicted_f1": float(f)})
    return pd.DataFrame(rows)
