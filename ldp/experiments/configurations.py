"""What the protocols choose by themselves, and one demonstration run each (chapters 02 and 03).

* :func:`protocol_variants`, :func:`configuration_table` and
  :func:`configuration_values` -- what each protocol chooses at the
  evaluation's settings (section 6.1), read from the protocol objects and their plans;
* :func:`demo_runs`, :func:`demo_summary`, :func:`rounds_frame` and
  :func:`demo_values` -- one run of each protocol and its per-step diagnostics;
* :func:`rounds_table` -- the rounds of one PEM run with the true heavy values' prefixes;
* :func:`config_table`, :func:`readings_table`, :func:`eta_table` -- PEM's configurations: the
  rule's against the optimizer's, their predicted F1 under each reading of eq. (5), fixed steps;
* :func:`assumption_summary`, :func:`assumption_configurations`, :func:`config_label` -- the
  optimizer under different assumed distributions (Figure 8(c));
* :func:`k_for_threshold`, :func:`threshold_table` -- the k a threshold θ translates into (Figure 7);
* :func:`optimizer_curves`, :func:`plan_bars` -- the data of Figure 1 and of the optimizer's figure (section 4.3);
* :func:`optimizer_readings`, :func:`optimizer_choices` -- the optimizer's choice under the other readings of
  section 4.3 (:data:`OPTIMIZER_READINGS`); its choices beside the rule's, as the claims of section 4.3 read them;
* :func:`share`, :func:`compress`, :func:`is_whole` -- how the tables write budgets and lists.
"""
from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .. import metrics
from .. import values as V
from ..analysis import candidate_configs, evaluate_configs, optimize_pem, pem_config
from ..analysis.config import PEMConfig
from ..core.dataset import Dataset
from ..protocols import MCM, PEM, SPM, Strawman, mcm_queries, spm_queries
from .results import MissingResult

__all__ = ["share", "compress", "is_whole", "protocol_variants", "configuration_table", "configuration_values",
           "demo_runs", "demo_summary", "rounds_frame", "demo_values", "rounds_table", "config_table",
           "readings_table", "eta_table", "config_label", "assumption_summary", "assumption_configurations",
           "k_for_threshold", "threshold_table", "optimizer_curves", "optimizer_readings", "OPTIMIZER_READINGS",
           "optimizer_choices", "plan_bars"]


def share(eps_q: float, eps: float) -> str:
    """A report's budget as a share of the user's budget, e.g. ``'ε/3'``."""
    f = Fraction(eps_q / eps).limit_denominator(12)
    return "ε" if f == 1 else (f"ε/{f.denominator}" if f.numerator == 1 else f"{f}ε")


def is_whole(question, m: int) -> bool:
    """Whether a question asks for the whole m-bit value."""
    return question.start == 0 and question.stop == m and not question.channels


def compress(xs) -> str:
    """``[65536, 65536, 1536]`` -> ``'65,536 ×2 + 1,536'``."""
    parts, i = [], 0
    while i < len(xs):
        j = i
        while j < len(xs) and xs[j] == xs[i]:
            j += 1
        parts.append(f"{xs[i]:,}" + (f" ×{j - i}" if j - i > 1 else ""))
        i = j
    return " + ".join(parts)


# --------------------------------------------------------------------------------------------- configurations
def protocol_variants(epsilon: float, k: int, m: int, *, query_limit: int, final_fraction: float) -> dict:
    """The protocols of the evaluation at value length ``m`` (section 6.1 defaults), both budget variants."""
    lim = query_limit
    return {"PEM": PEM(epsilon, k, m, query_limit=lim), "SPM": SPM(epsilon, k, m, query_limit=lim),
            "SPM, partition": SPM(epsilon, k, m, final_fraction=final_fraction, query_limit=lim),
            "MCM": MCM(epsilon, k, m, query_limit=lim),
            "MCM, partition": MCM(epsilon, k, m, final_fraction=final_fraction, query_limit=lim),
            "Strawman": Strawman(epsilon, k, m, query_limit=lim)}


def _sends(P, plan) -> str:
    """What a user of the first group, and of a final group if any, sends."""
    def one(qs):
        names = ["v" if is_whole(q, P.m) else ("(H(v), block)" if q.channels else "segment") for q in qs]
        shares = {share(q.epsilon, P.epsilon) for q in qs}
        return " + ".join(names) + " at " + ("/".join(sorted(shares)) + " each" if len(qs) > 1 else shares.pop())
    first, last = plan.questions[0], plan.questions[-1]
    if P.name == "PEM":
        return "one prefix at ε (last group: v)"
    if len(last) == 1 and is_whole(last[0], P.m):
        return f"{one(first)}; final group: {one(last)}"
    return one(first)


def _configuration(name: str, P, n: int) -> dict:
    plan = P.plan(n, rng=0)
    if P.name == "PEM":
        c = P.config(n)
        bits, per_step = f"γ = {c.gamma}, then η = {compress(list(c.etas))}", compress(list(c.domain_sizes))
        total, exact = int(c.queries), True
    elif P.name == "SPM":
        seg = [1 << (b - a) for a, b in P.bounds]
        bits = f"segments: {compress([b - a for a, b in P.bounds])}"
        per_step = f"{compress(seg)} + pairs {spm_queries(P.bounds, P.k) - sum(seg):,} + final > {P.k}"
        total, exact = spm_queries(P.bounds, P.k) + P.k + 1, False
    elif P.name == "MCM":
        bits = f"blocks: {compress([b - a for a, b in P.bounds])}; h = {P.channels}"
        per_step = f"{compress([P.channels << (b - a) for a, b in P.bounds])} + final ≤ {P.channels}"
        total, exact = mcm_queries(P.m, P.channels, P.block_bits), True
    else:
        seg, prod = [1 << (b - a) for a, b in P.bounds], math.prod(P.top_sizes)
        bits = f"segments: {compress([b - a for a, b in P.bounds])}; |C_α| = {compress(list(P.top_sizes))}"
        per_step, total, exact = f"{compress(seg)} + final {prod:,}", sum(seg) + prod, True
    return {"m": P.m, "n": n, "protocol": name, "groups": plan.n_groups, "bits per step": bits,
            "users per group": compress([round(n * f) for f in plan.fractions]), "each user sends": _sends(P, plan),
            "queries per step": per_step, "total queries": f"{total:,}" if exact else f"≥ {total:,}",
            "_total": total}


def configuration_table(epsilon: float, k: int, populations: Mapping[int, int], *, query_limit: int,
                        final_fraction: float) -> tuple[pd.DataFrame, dict]:
    """What each protocol chooses by itself at each value length ``m`` with ``populations[m]`` users.

    Returns
    -------
    table : pandas.DataFrame
        One row per (m, protocol variant): groups, bits per step, users per group,
        what each user sends, queries per step and in total (read from the
        protocol objects and their plans).
    protocols : dict
        ``(m, variant) -> protocol``.

    Raises
    ------
    AssertionError
        If a configuration exceeds ``query_limit``.
    """
    protocols, rows = {}, []
    for m, n in populations.items():
        for name, P in protocol_variants(epsilon, k, m, query_limit=query_limit, final_fraction=final_fraction).items():
            protocols[m, name] = P
            rows.append(_configuration(name, P, n))
    assert all(row["_total"] <= query_limit for row in rows)
    return pd.DataFrame(rows).drop(columns="_total"), protocols


def configuration_values(protocols: Mapping, populations: Mapping[int, int], names: Mapping[int, str]) -> dict:
    """The numbers the chapter quotes about the configurations, per ``m`` (``existing_*_m{m}``, ``existing_n_*``)."""
    out = {f"existing_n_{names[m]}": int(n) for m, n in populations.items()}
    for m, n in populations.items():
        spm, mcm, pem, straw = (protocols[m, x] for x in ("SPM", "MCM", "PEM", "Strawman"))
        c = pem.config(n)
        out.update({f"existing_{key}_m{m}": value for key, value in (
            ("spm_segments", spm.segments), ("spm_segbits", max(b - a for a, b in spm.bounds)),
            ("spm_groups", len(spm.pairs)), ("spm_pair_users", round(n / len(spm.pairs))),
            ("spm_seg_users", round(n * 2 / spm.segments)), ("mcm_groups", len(mcm.bounds)),
            ("mcm_blockbits", mcm.block_bits), ("mcm_minbits", min(b - a for a, b in mcm.bounds)),
            ("mcm_group_users", round(n / len(mcm.bounds))), ("pem_groups", c.g), ("pem_gamma", c.gamma),
            ("pem_eta", max(c.etas)), ("strawman_segments", straw.segments),
            ("strawman_product", math.prod(straw.top_sizes)), ("strawman_cmin", min(straw.top_sizes)),
            ("strawman_cmax", max(straw.top_sizes)))})
    m0 = next(iter(populations))
    out.update(existing_mcm_channels=protocols[m0, "MCM"].channels,
               existing_mcm_channels_n15=float(populations[m0]) ** 1.5)
    return out


# --------------------------------------------------------------------------------------------- demonstration
def demo_runs(protocols: Mapping, data, *, seed_seq: np.random.SeedSequence, engine: str = "counts"):
    """One run of each protocol on ``data`` (streams ``seed_seq.spawn``); returns (results, seconds) by name."""
    results, seconds = {}, {}
    for (name, P), s in zip(protocols.items(), seed_seq.spawn(len(protocols))):
        t0 = time.perf_counter()
        results[name] = P.run(data, rng=s, engine=engine)
        seconds[name] = time.perf_counter() - t0
    return results, seconds


def demo_summary(results: Mapping, true_top) -> pd.DataFrame:
    """Groups, oracle queries, F1 and NCR of each run (index: protocol)."""
    return pd.DataFrame([{
        "protocol": name, "groups": len(r.group_sizes), "oracle queries": r.queries,
        "F1": metrics.f1(true_top, r.heavy_hitters), "NCR": metrics.ncr(true_top, r.heavy_hitters),
    } for name, r in results.items()]).set_index("protocol")


def rounds_frame(result, true_top) -> pd.DataFrame:
    """Per-step diagnostics of a run (``result.rounds``), with the number of true top-k values lost at each step."""
    lost = result.lost_round(true_top)
    return pd.DataFrame([{
        "step": r.name, "bits": f"v[{r.start}:{r.stop}]", "groups": len(r.groups), "users": r.n_users,
        "queried": r.n_candidates, "kept": len(r.kept), "top-k lost here": int((lost == i).sum()),
    } for i, r in enumerate(result.rounds)])


def demo_values(summary: pd.DataFrame, results: Mapping, seconds: Mapping, data) -> dict:
    """The numbers the chapter quotes about the demonstration run (``existing_demo_*``)."""
    keys = {"PEM": "pem", "SPM": "spm", "SPM, partition": "spm_part", "MCM": "mcm", "MCM, partition": "mcm_part",
            "Strawman": "strawman"}
    out = {f"existing_demo_f1_{key}": float(summary.loc[name, "F1"]) for name, key in keys.items()}
    pairs = next(r for r in results["SPM"].rounds if r.kind == "candidates")
    return {**out, "existing_demo_spm_pairs_added": int(pairs.info["pairs_added"]),
            "existing_demo_spm_pairs_total": int(pairs.info["pairs_total"]),
            "existing_demo_spm_candidates": int(len(pairs.kept)),
            "existing_demo_mcm_candidates": int(results["MCM"].rounds[-1].n_candidates),
            "existing_demo_strawman_candidates": int(results["Strawman"].rounds[-1].n_candidates),
            "existing_demo_n": int(data.n), "existing_demo_m": int(data.m),
            "existing_demo_seconds_total": float(sum(seconds.values()))}


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


def eta_table(k: int, m: int, etas: Sequence[int], *, query_limit: int) -> pd.DataFrame:
    """PEM with the step fixed at each η (:func:`ldp.analysis.pem_config`): rounds, oracle queries, within the limit."""
    cfg = {e: pem_config(k, m, eta=e) for e in etas}
    return pd.DataFrame({"rounds g": [cfg[e].g for e in etas], "oracle queries": [cfg[e].queries for e in etas],
                         "within 2^20": [cfg[e].queries <= query_limit for e in etas]},
                        index=pd.Index(list(etas), name="eta"))


def config_label(config) -> str:
    """A PEM configuration's series label in panel (c)'s runs: ``"etas=12-12-12-12-12"``."""
    return "etas=" + "-".join(map(str, config.etas))


def assumption_summary(df8c: pd.DataFrame, chosen: Mapping[tuple[str, float], PEMConfig]) -> pd.DataFrame:
    """Panel (c)'s rows: per (assumption, ε) the configuration the optimiser chose and its measured F1.

    ``df8c`` holds the runs of each distinct configuration (protocol label :func:`config_label`),
    ``chosen`` maps ``(assumption, epsilon)`` to the optimiser's configuration.
    """
    from .summary import summarize

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


_BAR_COLUMNS = ["method", "group", "group_label", "bar", "bit_start", "bit_stop", "budget", "channels"]


def plan_bars(protocols: Mapping, n: int, *, panels: Mapping[str, str]) -> pd.DataFrame:
    """One row per bar of Figure 1, read from each protocol's plan for ``n`` users, in the panel ``panels``
    gives its method: see :func:`ldp.figures.all_methods.frame`, whose data this is."""
    rows = []
    for name, P in protocols.items():
        plan = P.plan(n, rng=0)
        labels = ([f"({a + 1},{b + 1})" for a, b in P.pairs] if name == "SPM"
                  else [f"group {g + 1}" for g in range(plan.n_groups)])
        prev = 0
        for g, qs in enumerate(plan.questions):
            row = dict(method=name, group=g + 1, group_label=labels[g])
            for q in qs:
                budget = share(q.epsilon, P.epsilon)
                if name == "MCM":
                    if q.channels:
                        rows.append({**row, "bar": "bits on every channel", "bit_start": q.start,
                                     "bit_stop": q.stop, "budget": budget, "channels": q.channels})
                    elif is_whole(q, P.m):
                        whole = budget
                    continue
                if is_whole(q, P.m) and len(qs) > 1:  # the whole value, sent next to the segments
                    rows.append({**row, "bar": "whole value", "bit_start": 0, "bit_stop": P.m, "budget": budget})
                    continue
                lo = prev if name == "PEM" else q.start
                if name == "PEM" and lo > 0:  # the part of the prefix already known from C_{i-1}
                    rows.append({**row, "bar": "prefix in C_{i-1}", "bit_start": 0, "bit_stop": lo, "budget": budget})
                rows.append({**row, "bar": "new bits tested" if name == "PEM" else "segment reported",
                             "bit_start": lo, "bit_stop": q.stop, "budget": budget})
                prev = q.stop
        if name == "MCM":
            rows.append(dict(method="MCM", group=0, group_label="every user", bar="whole value", bit_start=0,
                             bit_stop=P.m, budget=whole))
    bars = pd.DataFrame(rows, columns=_BAR_COLUMNS)
    bars.insert(0, "panel", bars["method"].map(panels))
    return bars.astype({"channels": "Int64"})
