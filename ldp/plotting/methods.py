"""Chapter 02 (existing methods, paper section 3): Figure 1, the configurations table and the demonstration run.

* :func:`all_methods_protocols`, :func:`all_methods_bars` and
  :func:`plot_all_methods` -- paper Figure 1, drawn from the protocols' own
  plans (one bar per question of a user group);
* :func:`protocol_variants`, :func:`configuration_table` and
  :func:`configuration_values` -- what each protocol chooses at the
  evaluation's settings (section 6.1);
* :func:`demo_runs`, :func:`demo_summary`, :func:`rounds_frame` and
  :func:`demo_values` -- one run of each protocol and its per-step diagnostics.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 3.2-3.4, 4.1 and 6.1, Figure 1.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .. import metrics
from ..protocols import MCM, PEM, SPM, Strawman, mcm_queries, spm_queries
from .style import FULL_WIDTH, METHOD_STYLE

__all__ = ["share", "compress", "all_methods_protocols", "all_methods_bars", "plot_all_methods",
           "all_methods_values", "protocol_variants", "configuration_table", "configuration_values", "demo_runs",
           "demo_summary", "rounds_frame", "demo_values"]

_PANEL = {"Strawman": "a", "SPM": "b", "MCM": "c", "PEM": "d"}
_BAR_COLUMNS = ["panel", "method", "group", "group_label", "bar", "bit_start", "bit_stop", "budget", "channels"]


def share(eps_q: float, eps: float) -> str:
    """A report's budget as a share of the user's budget, e.g. ``'ε/3'``."""
    f = Fraction(eps_q / eps).limit_denominator(12)
    return "ε" if f == 1 else (f"ε/{f.denominator}" if f.numerator == 1 else f"{f}ε")


def _is_whole(question, m: int) -> bool:
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


# --------------------------------------------------------------------------------------------- Figure 1
def all_methods_protocols(epsilon: float, k: int, *, query_limit: int, m: int = 64) -> dict:
    """The four protocols of Figure 1 at the paper's illustration: 16-bit segments, 1-bit MCM blocks, 16-bit PEM steps.

    PEM's 4 steps of 16 bits (``gamma = 0, eta = 16``) test ``16 * 2**16``
    prefixes per step, more than ``2**20`` queries in all: its limit is raised to ``4 * 2**20``.
    """
    return {"Strawman": Strawman(epsilon, k, m, query_limit=query_limit, segments=4),
            "SPM": SPM(epsilon, k, m, query_limit=query_limit, segments=4),
            "MCM": MCM(epsilon, k, m, query_limit=query_limit, block_bits=1),
            "PEM": PEM(epsilon, k, m, gamma=0, eta=16, query_limit=4 * 2**20)}


def _group_labels(name: str, P, plan) -> list[str]:
    if name == "SPM":
        return [f"({a + 1},{b + 1})" for a, b in P.pairs]
    return [f"group {g + 1}" for g in range(plan.n_groups)]


def all_methods_bars(protocols: Mapping, n: int) -> pd.DataFrame:
    """Figure 1's data: one row per bar, read from each protocol's plan for ``n`` users (``protocol.plan(n)``).

    Columns ``panel, method, group, group_label, bar, bit_start, bit_stop,
    budget, channels``: the bit range each group reports, its share of the
    budget (:func:`share`), MCM's number of channels; ``bar`` says what it is
    (a segment, PEM's new bits or the prefix known from ``C_{i-1}``, the whole value).
    """
    rows = []
    for name, P in protocols.items():
        plan = P.plan(n, rng=0)
        labels = _group_labels(name, P, plan)
        prev = 0
        for g, qs in enumerate(plan.questions):
            row = dict(method=name, group=g + 1, group_label=labels[g])
            for q in qs:
                budget = share(q.epsilon, P.epsilon)
                if name == "MCM":
                    if q.channels:
                        rows.append({**row, "bar": "bits on every channel", "bit_start": q.start,
                                     "bit_stop": q.stop, "budget": budget, "channels": q.channels})
                    elif _is_whole(q, P.m):
                        whole = budget
                    continue
                if _is_whole(q, P.m) and len(qs) > 1:  # the whole value, sent next to the segments
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
    bars = pd.DataFrame(rows, columns=_BAR_COLUMNS[1:])
    bars.insert(0, "panel", bars["method"].map(_PANEL))
    return bars.astype({"channels": "Int64"})


_WHOLE: dict[str, Any] = dict(fc="0.85", ec="0.35", lw=0.4, hatch="////")


def _draw_groups(ax, bars: pd.DataFrame, m: int) -> None:
    """One row per user group, one bar per bit range the group reports (whole value: hatched)."""
    from matplotlib.patches import Rectangle

    labels = list(dict.fromkeys(bars.group_label))
    G, color = len(labels), METHOD_STYLE[bars.method.iloc[0]]["color"]
    for b in bars.itertuples():
        y = G - b.group
        width = b.bit_stop - b.bit_start
        if b.bar == "whole value":
            ax.add_patch(Rectangle((0, y + 0.04), m, 0.14, **_WHOLE))
        elif b.bar == "prefix in C_{i-1}":
            ax.add_patch(Rectangle((0, y + 0.25), width, 0.6, fc=color, alpha=0.3, ec="k", lw=0.5))
        else:
            ax.add_patch(Rectangle((b.bit_start, y + 0.25), width, 0.6, fc=color, ec="k", lw=0.5))
            start = 0 if b.method == "PEM" else b.bit_start  # PEM's question is the whole prefix
            ax.text(b.bit_start + width / 2, y + 0.55, f"v[{start}:{b.bit_stop}]\n{b.budget}", ha="center",
                    va="center", color="white", linespacing=1.0)
    ax.set(xlim=(0, m), ylim=(0, G + 0.75), xticks=np.arange(0, m + 1, 16), yticks=np.arange(G) + 0.5)
    ax.set_yticklabels(labels[::-1])
    ax.grid(False)


def _draw_mcm(ax, bars: pd.DataFrame, m: int) -> None:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    shades = ListedColormap([METHOD_STYLE["MCM"]["color"], "#98df8a"])
    blocks = bars[bars.bar == "bits on every channel"]
    h = int(blocks.channels.max())
    for b in blocks.itertuples():
        ax.add_patch(Rectangle((b.bit_start, 0), b.bit_stop - b.bit_start, b.channels, fc=shades((b.group - 1) % 2),
                               lw=0))
    ws = bars[bars.bar == "whole value"].budget.iloc[0]
    ax.add_patch(Rectangle((0, -7), m, 4, **_WHOLE))
    ax.text(m / 2, -5, f"every user also reports the whole value, {ws}", ha="center", va="center",
            bbox=dict(fc="white", ec="none", pad=1))
    row = h // 3
    ax.add_patch(Rectangle((0, row), m, 1, fill=False, ec="red", lw=1.3))
    ax.annotate("one channel: its winning bit\nin every group = one candidate", xy=(m * 0.75, row + 1),
                xytext=(m * 0.6, row + 16), color="red", ha="center", bbox=dict(fc="white", ec="red", lw=0.6),
                arrowprops=dict(arrowstyle="->", color="red", lw=0.8))
    ax.set(xlim=(0, m), ylim=(h, -8), xticks=np.arange(0, m + 1, 16), yticks=[0, 16, 32, 48, h - 1])
    ax.set_ylabel(f"channel $H(v)$ (h = {h})")
    ax.grid(False)


def plot_all_methods(bars: pd.DataFrame, protocols: Mapping, n: int):
    """Paper Figure 1 from :func:`all_methods_bars`: (a) strawman, (b) SPM, (c) MCM, (d) PEM.

    ``protocols`` (the same as for the bars) and ``n`` give the titles'
    counts: the strawman's product of candidates, MCM's channels and PEM's steps.

    Returns
    -------
    (matplotlib.figure.Figure, pandas.DataFrame)
        The figure (full width) and the rows it plots (``bars``).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    groups = {name: P.plan(n, rng=0).n_groups for name, P in protocols.items()}
    fig, axes = plt.subplots(2, 2, figsize=(FULL_WIDTH, 8.2), layout="constrained")
    ax_a, ax_b, ax_c, ax_d = axes.ravel()
    m = protocols["Strawman"].m
    for ax, name in ((ax_a, "Strawman"), (ax_b, "SPM"), (ax_d, "PEM")):
        _draw_groups(ax, bars[bars.method == name], m)
    _draw_mcm(ax_c, bars[bars.method == "MCM"], m)
    S, M = protocols["Strawman"], protocols["MCM"]
    ax_a.set_title(f"(a) Strawman: users partitioned into\nC({S.segments},1) = {groups['Strawman']} groups,\n"
                   "each reporting one segment")
    sizes = "·".join(map(str, S.top_sizes))
    ax_a.set_xlabel("bit position\ncandidates: $C_1\\times\\cdots\\times C_{" + str(S.segments)
                    + f"}}$\n= {sizes} = {math.prod(S.top_sizes):,} values")
    ax_b.set_title(f"(b) SPM: users partitioned into\nC({protocols['SPM'].segments},2) = {groups['SPM']} groups,\n"
                   "each reporting a pair of segments")
    ax_b.set_xlabel(f"bit position\ncandidates: values all of whose\n{len(protocols['SPM'].pairs)} segment pairs "
                    "are frequent")
    ax_c.set_title(f"(c) MCM: users partitioned into\n{groups['MCM']} groups, each reporting\none bit on multiple "
                   "channels")
    ax_c.set_xlabel(f"bit position = user group $\\ell$\ncandidates: one per channel, at most {M.channels} values")
    cfg = protocols["PEM"].config(n)
    ax_d.set_title(f"(d) PEM: users partitioned into\n{groups['PEM']} groups,\neach reporting a prefix")
    ax_d.set_xlabel(f"bit position\ncandidates: $D_1 = \\{{0,1\\}}^{{{cfg.prefix_lengths[0]}}}$, "
                    f"$D_i = C_{{i-1}}\\times\\{{0,1\\}}^{{{cfg.etas[1]}}}$;\nthe last group is the final test")
    whole = bars[bars.bar == "whole value"].groupby("method", sort=False).budget.first()
    pem = METHOD_STYLE["PEM"]["color"]
    handles = [Patch(**_WHOLE, label="whole value, every user: " + ", ".join(f"{k} {v}" for k, v in whole.items())),
               Patch(fc=pem, alpha=0.3, ec="k", lw=0.5, label="PEM: prefix in $C_{i-1}$"),
               Patch(fc=pem, ec="k", lw=0.5, label="PEM: new bits tested")]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=1, frameon=False)
    return fig, bars


def all_methods_values(protocols: Mapping, n: int, query_limit: int) -> dict:
    """The numbers the chapter quotes about Figure 1 (``existing_fig_*``)."""
    groups = {name: P.plan(n, rng=0).n_groups for name, P in protocols.items()}
    return {"existing_fig_strawman_groups": int(groups["Strawman"]), "existing_fig_spm_groups": int(groups["SPM"]),
            "existing_fig_mcm_groups": int(groups["MCM"]), "existing_fig_mcm_channels": protocols["MCM"].channels,
            "existing_fig_pem_groups": int(groups["PEM"]),
            "existing_fig_strawman_product": math.prod(protocols["Strawman"].top_sizes),
            "existing_fig_pem_queries": int(protocols["PEM"].config(n).queries),
            "existing_query_limit": int(query_limit)}


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
        names = ["v" if _is_whole(q, P.m) else ("(H(v), block)" if q.channels else "segment") for q in qs]
        shares = {share(q.epsilon, P.epsilon) for q in qs}
        return " + ".join(names) + " at " + ("/".join(sorted(shares)) + " each" if len(qs) > 1 else shares.pop())
    first, last = plan.questions[0], plan.questions[-1]
    if P.name == "PEM":
        return "one prefix at ε (last group: v)"
    if len(last) == 1 and _is_whole(last[0], P.m):
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
