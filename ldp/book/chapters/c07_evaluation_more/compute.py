"""What chapter 07 computes above the library: the ``k`` a threshold translates into, η's configurations, the
optimiser under other assumed distributions, and the values the chapter's prose quotes.

The threshold versions of Figure 7 run with ``k(θ)`` (:func:`k_for_threshold`); one run per protocol at the lowest
threshold shows where PEM's false positives come from (:func:`threshold_probe`).  Figure 8's panels need η's
configurations (:func:`eta_table`) and the configurations the optimiser picks under each assumption
(:func:`optimised_configurations`, :func:`assumption_summary`).  The values the markdown pastes come, one mapping
per section, from :func:`setup_findings`, :func:`figure7_findings`, :func:`figure8_findings` and
:func:`runtime_findings`, named without the chapter's glue prefix ``evalmore_`` (the chapter glues them with
``glue_all(..., prefix="evalmore_")``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ....analysis import optimize_pem, pem_config, pem_default_config
from ....analysis.config import PEMConfig
from ....core.dataset import Dataset
from ....experiments import summarize
from ....protocols import MCM, PEM, SPM
from ..c06_evaluation.prose import as_markdown
from .design import PEM_OPTIMISED

__all__ = ["PROTOCOLS", "eta_table", "config_label", "optimised_configurations", "assumption_summary",
           "assumption_configurations", "k_for_threshold", "threshold_table", "final_round_release",
           "threshold_probe", "at_budget", "mode_note", "setup_findings", "figure7_findings", "figure8_findings",
           "runtime_findings"]

#: the protocols of Figure 7, in the order of its legend
PROTOCOLS = ("PEM", "SPM", "MCM")


def eta_table(k: int, m: int, etas: Sequence[int], *, query_limit: int) -> pd.DataFrame:
    """PEM with the step fixed at each η (:func:`ldp.analysis.pem_config`): rounds, oracle queries, within the limit."""
    cfg = {e: pem_config(k, m, eta=e) for e in etas}
    return pd.DataFrame({"rounds g": [cfg[e].g for e in etas], "oracle queries": [cfg[e].queries for e in etas],
                         "within 2^20": [cfg[e].queries <= query_limit for e in etas]},
                        index=pd.Index(list(etas), name="eta"))


def config_label(config) -> str:
    """A PEM configuration's series label in panel (c)'s runs: ``"etas=12-12-12-12-12"``."""
    return "etas=" + "-".join(map(str, config.etas))


def optimised_configurations(assumptions: Mapping[str, Mapping[str, Any]], epsilons: Sequence[float], *, k: int,
                             m: int, n: int, query_limit: int) -> tuple[dict[tuple[str, float], PEMConfig],
                                                                        list[PEMConfig]]:
    """The configuration :func:`ldp.analysis.optimize_pem` picks under each assumed distribution and budget.

    PEM depends on the assumption only through this configuration, so panel (c) runs each distinct
    configuration once per budget and shares it among the assumptions that select it.

    Parameters
    ----------
    assumptions : mapping of str to mapping
        The keywords of :func:`~ldp.analysis.optimize_pem` (``distribution``, ``zipf_exponent``) of each
        assumption, by its legend label.
    epsilons : sequence of float
        The budgets.
    k, m, n, query_limit : int
        The setting of the runs.

    Returns
    -------
    chosen : dict
        ``(assumption, epsilon) -> configuration``.
    configs : list of PEMConfig
        The distinct configurations, sorted by ``gamma``, ``etas``, ``cand_sizes``; each is rebuilt exactly by
        :func:`ldp.analysis.pem_config` from its ``gamma`` and ``etas`` (the explicit parameters the runs pass).

    Raises
    ------
    ValueError
        If a chosen configuration is not rebuilt from its ``gamma`` and ``etas``.
    """
    chosen = {(a, e): optimize_pem(e, k, m, n=n, query_limit=query_limit, **kw)
              for a, kw in assumptions.items() for e in epsilons}
    configs = sorted(set(chosen.values()), key=lambda c: (c.gamma, c.etas, c.cand_sizes))
    for c in configs:  # explicit parameters rebuild exactly the optimiser's configuration
        if pem_config(k, m, gamma=c.gamma, etas=c.etas) != c:
            raise ValueError(f"pem_config(gamma={c.gamma}, etas={c.etas}) does not rebuild the optimiser's {c}")
    return chosen, configs


def assumption_summary(df8c: pd.DataFrame, chosen: Mapping[tuple[str, float], PEMConfig]) -> pd.DataFrame:
    """Panel (c)'s rows: per (assumption, ε) the configuration the optimiser chose and its measured F1.

    ``df8c`` holds the runs of each distinct configuration (protocol label :func:`config_label`),
    ``chosen`` maps ``(assumption, epsilon)`` to the optimiser's configuration.
    """

    per_config = summarize(df8c, by=["protocol", "epsilon"], metrics=["f1"]).set_index(["protocol", "epsilon"])
    return pd.DataFrame([{"assumption": a, "epsilon": e, "configuration": config_label(c),
                          "predicted F1": c.predicted_f1, **per_config.loc[(config_label(c), e)].to_dict()}
                         for (a, e), c in chosen.items()])


def assumption_configurations(s8c: pd.DataFrame) -> pd.DataFrame:
    """Panel (c)'s configurations: per assumption, each configuration the optimiser chose and at which budgets."""
    return (s8c.groupby(["assumption", "configuration"], sort=False)["epsilon"]
            .agg(lambda e: ", ".join(f"{x:g}" for x in e)).rename("at budgets ε").reset_index())


def k_for_threshold(rank_frequencies, theta: float) -> int:
    """``k(θ)``: the number of ranks whose frequency under the generating law is at least ``theta`` (at least 1)."""
    return max(1, int(np.count_nonzero(np.asarray(rank_frequencies) >= theta)))


def threshold_table(ds: Dataset, rank_frequencies, thetas: Sequence[float]) -> pd.DataFrame:
    """Per threshold: ``k(θ)`` under the law and the number of values at or above θ in the data."""
    return pd.DataFrame({"theta": list(thetas),
                         "k(theta) (law)": [k_for_threshold(rank_frequencies, t) for t in thetas],
                         "values >= theta in the data": [len(ds.above(t)) for t in thetas]}).set_index("theta")



def final_round_release(protocol, ds, *, theta: float, rng) -> dict[str, float]:
    """One run of a threshold-mode ``protocol`` on ``ds``: its final step and the false positives it predicts.

    Returns ``n_users`` and ``n_candidates`` of the last round, ``fp_expected``
    (candidates nobody holds whose support passes the release test: the
    binomial tail of a non-holder's support ``Bin(N, q)`` beyond the support
    that gives an estimate of ``theta n`` under eq. (2), times the candidates)
    and ``theta_sigmas`` (``theta`` in standard deviations of a non-holder's
    frequency estimate).
    """
    from scipy import stats

    last = protocol.run(ds, rng=rng, engine="counts").rounds[-1]
    o = last.question.oracle()
    N, D = last.n_users, last.n_candidates
    t_sup = np.ceil(N * o.q + theta * N * (o.p - o.q))  # smallest support with estimate >= theta n, eq. (2)
    sigma_freq = np.sqrt(N * o.q * (1 - o.q)) / (o.p - o.q) / N
    return {"n_users": int(N), "n_candidates": int(D), "fp_expected": float(D * stats.binom.sf(t_sup - 1, N, o.q)),
            "theta_sigmas": float(theta / sigma_freq)}



def threshold_probe(ds: Dataset, *, k: int, theta: float, epsilon: float, m: int, query_limit: int, seed: int,
                    protocols: Iterable[str] = PROTOCOLS) -> dict[str, dict[str, float]]:
    """One run of each threshold-mode protocol at ``theta`` (:func:`final_round_release`): its final step.

    Each protocol runs with ``k`` (``k(θ)``, :func:`k_for_threshold`) and the first child of ``seed``'s
    :class:`numpy.random.SeedSequence` (a simulation).

    Returns
    -------
    dict
        ``protocol -> {n_users, n_candidates, fp_expected, theta_sigmas}``.
    """
    classes = {P.name: P for P in (PEM, SPM, MCM)}
    return {p: final_round_release(classes[p](epsilon, k, m, threshold=theta, query_limit=query_limit), ds,
                                   theta=theta, rng=np.random.SeedSequence(seed).spawn(1)[0]) for p in protocols}


def at_budget(pivot: pd.DataFrame, column: str, eps: float) -> float:
    """The value of ``column`` at budget ``eps`` of a pivot indexed by ε (NaN if the grid has no such point)."""
    sel = np.isclose(pivot.index, eps)
    return float(pivot.loc[sel, column].iloc[0]) if sel.any() and column in pivot else float("nan")


def mode_note(*, quick: bool, n_users: int, repetitions: int):
    """The note under the chapter's title (Markdown): which settings ran, and what its numbers are comparable with."""
    if quick:
        return as_markdown(
            f"Quick build: {n_users:,} users and {repetitions} repetitions per point, on a reduced grid. The numbers "
            "below, and the verdicts on the paper's claims, come from this small run. They are not comparable with "
            "the paper: the reproduction's are those of the paper-scale run (`make book`).")
    return as_markdown(f"Paper-scale run: {n_users:,} users and {repetitions} repetitions per point. Every number in "
                       "the text is pasted from this execution of the notebook.")


def _budgets(values: Iterable[float]):
    """A grid's values as the text lists them (Markdown): ``0.9, 1.2, 2, 4``."""
    return as_markdown(", ".join(f"{x:g}" for x in values))


def setup_findings(ds: Dataset, law, *, quick: bool, n_users: int, m: int, k: int, repetitions: int,
                   epsilons: Sequence[float], thetas: Sequence[float], theta_fixed: float,
                   final_fraction: float) -> dict[str, Any]:
    """The numbers of the set-up: the data set, the grids, ``k(θ)`` at Figure 7(a)'s threshold.

    Parameters
    ----------
    ds : Dataset
        The synthetic set the grids ran on.
    law : array
        The rank frequencies of its generating law (``k(θ)``, :func:`k_for_threshold`).
    quick : bool
        Whether this is a quick build (:func:`mode_note`).
    n_users, m, k, repetitions : int
        The chapter's parameters.
    epsilons, thetas : sequences of float
        The budgets and thresholds on the x axes.
    theta_fixed, final_fraction : float
        Figure 7(a)'s threshold, Figure 8(a)'s share of users kept for the final test.

    Returns
    -------
    dict
        ``mode_note``, ``n_users``, ``m``, ``k``, ``reps``, ``eps_grid`` and ``theta_grid`` (Markdown lists),
        ``final_fraction_pct``, ``k_theta_fixed``, the 16th frequency under the law and in the data
        (``f16_law``, ``f16_data``), the largest one in the data (``f1_data``), the values at or above
        ``theta_fixed`` (``n_above_fixed``) and the distinct values (``n_distinct``).
    """
    return {"mode_note": mode_note(quick=quick, n_users=n_users, repetitions=repetitions),
            "n_users": n_users, "m": m, "k": k, "reps": repetitions, "eps_grid": _budgets(epsilons),
            "theta_grid": _budgets(thetas), "final_fraction_pct": 100 * final_fraction,
            "k_theta_fixed": k_for_threshold(law, theta_fixed), "f16_law": float(law[15]),
            "f16_data": float(ds.top_frequencies(16)[-1]), "f1_data": float(ds.top_frequencies(1)[0]),
            "n_above_fixed": len(ds.above(theta_fixed)), "n_distinct": ds.n_distinct}


def figure7_findings(s7a: pd.DataFrame, s7bc: pd.DataFrame, *, eps_bc: tuple[float, float], ds: Dataset, law,
                     probe: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The numbers on Figure 7: PEM's lead in panel (a), and the lowest threshold of panel (b).

    Parameters
    ----------
    s7a : pandas.DataFrame
        Panel (a)'s summary by ``protocol, epsilon`` (``f1``).
    s7bc : pandas.DataFrame
        Panels (b) and (c)'s summary by ``protocol_name, threshold, epsilon`` (``f1``, ``n_found``, ``f1_topk``).
    eps_bc : (float, float)
        The budgets of panels (b) and (c).
    ds : Dataset
        The synthetic set.
    law : array
        Its generating law's rank frequencies.
    probe : mapping
        :func:`threshold_probe` at the lowest threshold, at ``eps_bc[0]``.

    Returns
    -------
    dict
        Panel (a): PEM's F1, the better competitor's and its name, and the gap at the budget nearest 2
        (``f7_eps2``, ``f7_pem_eps2``, ``f7_best_other_eps2``, ``f7_best_other_name_eps2``, ``f7_gap_eps2``), the
        largest gap and where (``f7_max_gap``, ``f7_max_gap_eps``, ``f7_max_gap_pem``, ``f7_max_gap_other``).
        Panel (b) at its lowest threshold ``theta_low``: ``k_theta_low``, the values truly above it
        (``f7_true_low``), PEM's F1 with the threshold and with a top-``k(θ)`` release, the values each protocol
        releases (``f7_<p>_found_low``) and the probe's last round (``f7_last_users``, ``f7_last_cands``,
        ``f7_fp_expected``, ``f7_theta_sigmas``, ``f7_spm_last_cands``, ``f7_mcm_last_cands``); ``eps_a``,
        ``eps_b`` and the number of thresholds ``f7_n_thetas``.
    """
    f1a = s7a.pivot(index="epsilon", columns="protocol", values="f1_mean")  # panel (a)
    others = f1a[["SPM", "MCM"]]
    lead = f1a["PEM"] - others.max(axis=1)  # PEM minus the better of the other two
    e2, e_max = float(f1a.index[np.argmin(np.abs(f1a.index - 2.0))]), float(lead.idxmax())
    t_low = float(s7bc["threshold"].min())  # the lowest threshold of panel (b)
    low = s7bc[np.isclose(s7bc["epsilon"], eps_bc[0]) & np.isclose(s7bc["threshold"], t_low)].set_index("protocol_name")
    return {
        "f7_eps2": e2, "f7_pem_eps2": float(f1a.loc[e2, "PEM"]), "f7_best_other_eps2": float(others.loc[e2].max()),
        "f7_best_other_name_eps2": as_markdown(str(others.loc[e2].idxmax())), "f7_gap_eps2": float(lead.loc[e2]),
        "f7_max_gap": float(lead.max()), "f7_max_gap_eps": e_max, "f7_max_gap_other": float(others.loc[e_max].max()),
        "f7_max_gap_pem": float(f1a.loc[e_max, "PEM"]), "theta_low": t_low,
        "f7_n_thetas": int(s7bc["threshold"].nunique()),
        "f7_pem_f1_low": float(low["f1_mean"].get("PEM", np.nan)), "eps_a": eps_bc[0], "eps_b": eps_bc[1],
        "f7_pem_f1_topk_low": float(low["f1_topk_mean"].get("PEM", np.nan)),
        **{f"f7_{p.lower()}_found_low": float(low["n_found_mean"].get(p, np.nan)) for p in PROTOCOLS},
        "k_theta_low": k_for_threshold(law, t_low), "f7_true_low": len(ds.above(t_low)),
        "f7_last_users": probe["PEM"]["n_users"], "f7_last_cands": probe["PEM"]["n_candidates"],
        "f7_fp_expected": probe["PEM"]["fp_expected"], "f7_theta_sigmas": probe["PEM"]["theta_sigmas"],
        "f7_spm_last_cands": probe["SPM"]["n_candidates"], "f7_mcm_last_cands": probe["MCM"]["n_candidates"]}


def figure8_findings(s8a: pd.DataFrame, s8b: pd.DataFrame, *, etas: Sequence[int], eta_info: pd.DataFrame,
                     configs: Sequence[PEMConfig], k: int, m: int, query_limit: int) -> dict[str, Any]:
    """The numbers on Figure 8: partitioning users (a), fixed η (b), the configurations of (c).

    Parameters
    ----------
    s8a, s8b : pandas.DataFrame
        Panels (a) and (b)'s summaries by ``protocol, epsilon`` (``f1``).
    etas : sequence of int
        The fixed steps asked for.
    eta_info : pandas.DataFrame
        :func:`eta_table` of ``etas`` (which are within the query limit, and their queries).
    configs : sequence of PEMConfig
        The distinct configurations of panel (c) (:func:`optimised_configurations`).
    k, m, query_limit : int
        The setting (the longest step within the limit is :func:`ldp.analysis.pem_default_config`'s).

    Returns
    -------
    dict
        (a) optimised PEM at ε = 1.2 and 0.9 (``pem_eps12``, ``pem_opt_eps09``), per SPM and MCM the F1 with
        the budget split and partitioned at ε = 1.2 and 2 (``<p>_split_eps12``, ``<p>_part_eps2``, ...) and the
        largest gain of partitioning and where (``<p>_max_gain``, ``<p>_max_gain_eps``); (b) the smallest and
        largest η run (``eta_lo``, ``eta_hi``), PEM's F1 and its SD at ε = 0.9 for each
        (``pem_eta_lo_eps09``, ``pem_eta_lo_eps09_std``, ...), the settings asked for and dropped by the limit
        (``n_etas``, ``n_eta_dropped``), the longest asked (``eta_largest``, ``eta_largest_queries``) and the
        longest within the limit (``eta_max``, ``eta_max_queries``); (c) ``dist_n_configs`` and ``dist_configs``
        (Markdown).
    """
    f1a8, f1b8 = (s.pivot(index="epsilon", columns="protocol", values="f1_mean") for s in (s8a, s8b))
    sd_b8 = s8b.pivot(index="epsilon", columns="protocol", values="f1_std")
    etas_ok = [e for e in etas if eta_info.loc[e, "within 2^20"]]
    out: dict[str, Any] = {"pem_eps12": at_budget(f1a8, PEM_OPTIMISED, 1.2),
                           "pem_opt_eps09": at_budget(f1a8, PEM_OPTIMISED, 0.9),
                           "eta_lo": min(etas_ok), "eta_hi": max(etas_ok)}
    for p in ("MCM", "SPM"):  # partitioned users against the budget split
        gain = f1a8[f"{p}, partitioned users"] - f1a8[f"{p}, budget split"]
        out |= {f"{p.lower()}_max_gain": float(gain.max()), f"{p.lower()}_max_gain_eps": float(gain.idxmax())}
        for eps, tag in ((1.2, "12"), (2.0, "2")):
            out |= {f"{p.lower()}_split_eps{tag}": at_budget(f1a8, f"{p}, budget split", eps),
                    f"{p.lower()}_part_eps{tag}": at_budget(f1a8, f"{p}, partitioned users", eps)}
    for tag, eta in (("lo", min(etas_ok)), ("hi", max(etas_ok))):  # fixed eta at eps = 0.9
        out |= {f"pem_eta_{tag}_eps09": at_budget(f1b8, f"eta = {eta}", 0.9),
                f"pem_eta_{tag}_eps09_std": at_budget(sd_b8, f"eta = {eta}", 0.9)}
    default = pem_default_config(k, m, query_limit=query_limit)
    return out | {
        "n_etas": len(etas), "n_eta_dropped": len(etas) - len(etas_ok), "eta_largest": max(etas),
        "eta_largest_queries": int(eta_info.loc[max(etas), "oracle queries"]), "eta_max": default.etas[0],
        "eta_max_queries": default.queries, "dist_n_configs": len(configs), "dist_configs": as_markdown(" and ".join(
            f"$\\gamma = {c.gamma}$, $\\eta = ({', '.join(map(str, c.etas))})$" for c in configs))}


def runtime_findings(runs: Iterable[pd.DataFrame], seconds: float) -> dict[str, Any]:
    """The chapter's cost: its runs (``n_runs``), their summed wall time (``run_seconds``) and ``notebook_seconds``."""
    all_runs = pd.concat(list(runs))
    return {"n_runs": len(all_runs), "run_seconds": float(all_runs["wall_time"].sum()), "notebook_seconds": seconds}
