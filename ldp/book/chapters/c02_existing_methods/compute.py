"""What chapter 02 computes (paper sections 3 and 6.1): the protocols' own configurations and one run of each.

* :func:`figure1_findings` -- the numbers the text quotes about Figure 1's protocols;
* :func:`protocol_variants`, :func:`configuration_table`, :func:`configuration_parts`,
  :func:`configuration_values`, :func:`plans_table` -- what each protocol chooses by itself at the evaluation's
  settings;
* :func:`demo_runs`, :func:`demo_summary`, :func:`steps_table`, :func:`demo_values` -- one demonstration run of
  each protocol and its per-step diagnostics;
* :func:`plan_bars` -- Figure 1's bars, read from the protocols' plans
  (:mod:`ldp.book.chapters.c02_existing_methods.all_methods` draws them).
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .... import metrics
from ....protocols import MCM, PEM, SPM, Strawman, mcm_queries, spm_queries
from ...plotting.tables import compress, share

__all__ = ["is_whole", "figure1_findings", "protocol_variants", "configuration_table", "configuration_parts",
           "configuration_values", "demo_runs", "demo_summary", "rounds_frame", "steps_table", "demo_values",
           "plan_bars", "plans_table"]


def is_whole(question, m: int) -> bool:
    """Whether a question asks for the whole m-bit value."""
    return question.start == 0 and question.stop == m and not question.channels


def figure1_findings(protocols: Mapping, n: int, *, query_limit: int) -> dict:
    """The numbers the text quotes about Figure 1's protocols (:func:`ldp.book.chapters.c02_existing_methods.
    all_methods.protocols`) drawn for ``n`` users.

    Returns
    -------
    dict
        ``existing_fig_mcm_channels`` (MCM's ``h``), ``existing_fig_strawman_product`` (the strawman's product
        candidates), ``existing_fig_pem_queries`` (PEM's oracle queries with its 16-bit steps) and
        ``existing_query_limit`` (the evaluation's limit, for comparison).
    """
    return dict(existing_fig_mcm_channels=protocols["MCM"].channels,
                existing_fig_strawman_product=math.prod(protocols["Strawman"].top_sizes),
                existing_fig_pem_queries=int(protocols["PEM"].config(n).queries), existing_query_limit=int(query_limit))


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


def plans_table(protocols: Mapping, populations: Mapping[int, int]) -> pd.DataFrame:
    """The numbers of each protocol's plan at each value length: groups, the last group's users, MCM's channels.

    Parameters
    ----------
    protocols : mapping
        ``(m, variant) -> protocol``, as :func:`configuration_table` returns it.
    populations : mapping of int to int
        ``m -> n``.

    Returns
    -------
    pandas.DataFrame
        ``m, n, protocol, groups, last_group_users, channels`` (``channels``: MCM's ``h``, NaN otherwise), one row
        per (m, variant), read from the protocol objects and their plans.
    """
    rows = []
    for (m, name), P in protocols.items():
        n = int(populations[m])
        plan = P.plan(n, rng=0)
        rows.append({"m": int(m), "n": n, "protocol": name, "groups": int(plan.n_groups),
                     "last_group_users": int(round(n * plan.fractions[-1])),
                     "channels": float(P.channels) if P.name == "MCM" else np.nan})
    return pd.DataFrame(rows)


def configuration_parts(table: pd.DataFrame):
    """:func:`configuration_table` in parts, one per value length: yields ``(caption, part)``.

    ``caption`` names the value length and the population (``"m = 64 bits, n = 1,000,000 users"``), ``part``
    is the rows of that ``m`` without the columns ``m`` and ``n``.
    """
    for (m, n), part in table.groupby(["m", "n"], sort=False):
        yield f"m = {m} bits, n = {n:,} users", part.drop(columns=["m", "n"])


def configuration_values(protocols: Mapping, populations: Mapping[int, int], names: Mapping[int, str], *,
                         final_fraction: float) -> dict:
    """The numbers the chapter quotes about the configurations.

    Parameters
    ----------
    protocols : mapping
        ``(m, variant) -> protocol``, as :func:`configuration_table` returns it.
    populations : mapping of int to int
        ``m -> n``; the first ``m`` is the synthetic data set's.
    names : mapping of int to str
        ``m ->`` the data set's short name in the glued names (``"syn"``, ``"aol"``, ``"url"``).
    final_fraction : float, keyword-only
        The share of users of the partition variant's final group.

    Returns
    -------
    dict
        ``existing_*_m{m}`` per value length (SPM's segments and pair groups, MCM's blocks, PEM's rounds, the
        strawman's product), ``existing_n_{name}``, MCM's channels ``h`` against ``n^1.5`` and the settings
        ``existing_k``, ``existing_epsilon`` and ``existing_final_fraction_pct``.
    """
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
    pem = protocols[m0, "PEM"]
    return out | {"existing_k": int(pem.k), "existing_epsilon": float(pem.epsilon),
                  "existing_final_fraction_pct": 100 * float(final_fraction)}


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


def steps_table(results: Mapping, true_top) -> pd.DataFrame:
    """:func:`rounds_frame` of every run of ``results`` (name -> run), one after the other, the protocol first."""
    steps = pd.concat([rounds_frame(r, true_top).assign(protocol=name) for name, r in results.items()])
    return steps.set_index("protocol").reset_index()


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

