"""Chapter 10's computations: the report store shown at work, the live cost, FLH's price and the pool size to use.

The figure modules (:mod:`.scale_cost`, :mod:`.flh_price`) draw the frames and hold the claims; here is what the
notebook computes with the library and what its text quotes: each section ends with one call that returns its
values (:func:`store_findings`, :func:`pool_variance_check`, :func:`bench_findings`, :func:`price_findings`,
:func:`recommendation`), glued with the prefix ``scale_``.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .... import metrics
from ....datasets import Dataset, exponential, random_distinct_values
from ....experiments import summarize
from ....oracles.flh import DEFAULT_POOL_SIZE, FLH, pool_variance
from ....protocols import PEM, HeavyHitterProtocol, ProtocolReports
from ..c08_after_pem.compute import chapter_runtime
from .scale_cost import oracle_label

__all__ = ["ENGINE_WORDS", "check_engine", "pem_specs", "store_demo", "store_findings", "pool_variance_check",
           "bench_oracles", "live_costs", "bench_value", "bench_table", "bench_findings", "f1_against_olh",
           "pool_share", "price_table", "pool_sweep_table", "price_findings", "recommendation", "chapter_runtime"]

#: the accuracy grid's engines, as the text names them
ENGINE_WORDS = {"counts": "count-level engine (FLH: the exact law of its tally)",
           "protocol": "protocol engine (every report made and aggregated)"}
#: what the recommendation asks of a pool size: aggregation time (s) at the benchmark's largest n, and F1 gap
MAX_SECONDS, MAX_F1_LOSS = 60, 0.05


def check_engine(price_engine: str) -> None:
    """Refuse an engine the accuracy grid does not have (:data:`ENGINE_WORDS`), before any work."""
    if price_engine not in ENGINE_WORDS:
        raise ValueError(f"price_engine must be 'counts' or 'protocol', got {price_engine!r}")


def pem_specs(query_limit: int, pools: Sequence[int]) -> list[tuple[str, dict, str]]:
    """PEM with OLH (``"OLH"``) and with FLH of each pool size (``"FLH, h = 1024"``), as grid specs."""
    q = {"query_limit": query_limit}
    return [("PEM", q, "OLH")] + [("PEM", {**q, "oracle": "FLH", "pool_size": h}, f"FLH, h = {h}") for h in pools]


# --------------------------------------------------------------------------- reports on disk
def store_demo(protocol: HeavyHitterProtocol, data: Dataset, folder: Path, *, seed: int, batches: int = 4,
               chunk: int = 10_000) -> dict[str, Any]:
    """``data``'s users report in ``batches`` batches into a report store; the server aggregates it twice.

    The first batch is saved and aggregated (estimates scaled to the users so far), then the others, and the
    whole folder is aggregated again, read in chunks of ``chunk`` reports.  That aggregation must equal the
    one of the same reports in memory, bit for bit (heavy hitters, estimates, every round's supports).

    Parameters
    ----------
    protocol : ldp.protocols.HeavyHitterProtocol
        The protocol (its ``k`` values released).
    data : ldp.datasets.Dataset
        The users.
    folder : pathlib.Path
        The store (a new folder).
    seed : int
        Plan ``seed``, reports ``seed + 1``, aggregation ``seed + 2``.

    Returns
    -------
    dict
        ``batches, users, bytes per user`` (of the stored reports), ``F1 after batch 1``, ``F1, all batches``.

    Raises
    ------
    AssertionError
        If the aggregation from disk differs from the one in memory.
    """
    plan = protocol.plan(data.n, rng=seed)
    size = -(-data.n // batches)
    parts = [protocol.privatize(data.values[lo:lo + size], plan=plan, users=lo, rng=seed + 1)
             for lo in range(0, data.n, size)]
    parts[0].save(folder)
    early = protocol.aggregate(ProtocolReports.open(folder), rng=seed + 2)  # after the first batch
    for part in parts[1:]:
        part.save(folder)
    stored = ProtocolReports.open(folder)
    from_disk = protocol.aggregate(stored, rng=seed + 2, chunk=chunk)
    in_memory = protocol.aggregate(ProtocolReports.concat(parts), rng=seed + 2)
    same = (np.array_equal(from_disk.heavy_hitters, in_memory.heavy_hitters)
            and np.array_equal(from_disk.estimates, in_memory.estimates)
            and all(np.array_equal(a.support, b.support) for a, b in zip(from_disk.rounds, in_memory.rounds)))
    if not same:
        raise AssertionError(f"{folder.name}: the aggregation from disk differs from the one in memory")
    top = data.top(protocol.k)
    return {"batches": len(stored.batches), "users": stored.n, "bytes per user": stored.nbytes / stored.n,
            "F1 after batch 1": metrics.f1(top, early.heavy_hitters),
            "F1, all batches": metrics.f1(top, from_disk.heavy_hitters)}


def store_findings(table: pd.DataFrame, olh: PEM, data: Dataset, *, n_price: int, scale: float,
                   seed: int) -> dict[str, Any]:
    """What the opening and the store's section quote: memory per user and OLH's hash evaluations.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`store_demo`'s rows, indexed by oracle (``"OLH"``, ``"FLH"``).
    olh : ldp.PEM
        PEM with OLH.
    data : ldp.datasets.Dataset
        The users of the demonstration (their reports in memory, per user).
    n_price, scale, seed
        The synthetic set of the accuracy grid (its users, exponential scale and seed), on which one count-engine
        run counts OLH's hash evaluations (the sum over rounds of users times candidates).

    Returns
    -------
    dict
        ``olh_mem_bytes`` (bytes per user in memory, which is also ``olh_mem_1e9_gb``, GB per 10^9 users),
        ``hashes_1e6``, ``n_live`` and the store's bytes per OLH and FLH user.
    """
    mem = olh.privatize(data, rng=seed).nbytes / data.n  # reports in memory, per user
    rounds = olh.run(exponential(n_price, scale=scale, m=olh.m, rng=seed), rng=seed, engine="counts").rounds
    return {"olh_mem_bytes": mem, "olh_mem_1e9_gb": mem, "hashes_1e6": float(sum(r.n_users * r.n_candidates
                                                                                 for r in rounds)),
            "n_live": data.n, "olh_bytes_per_user": table.loc["OLH", "bytes per user"],
            "flh_bytes_per_user": table.loc["FLH", "bytes per user"]}


# --------------------------------------------------------------------------- fast local hashing
def pool_variance_check(*, seed: int, pools: int = 400, h: int = 32, eps: float = 2.0,
                        counts: Sequence[int] = (3000, 2000)) -> dict[str, Any]:
    """eq. (eq-flh-pool-variance) by simulation: the variance of a value's estimate over random pools.

    Two random 16-bit values held by ``counts`` users and a third held by nobody (drawn with
    ``default_rng(seed)``); for each of ``pools`` pools of ``h`` functions (pool seeds ``0 .. pools - 1``) the
    tally is drawn from its exact law and the third value's count estimated.

    Returns
    -------
    dict
        ``check_measured`` (the estimates' sample variance), ``check_olh_term`` and ``check_pool_term`` (the
        formula's two terms), ``check_predicted`` (their sum), ``check_rel_diff`` (measured over predicted,
        minus 1), ``check_rel_se`` (the relative standard error of a sample variance of normal draws) and
        ``check_pools``.
    """
    n_held = np.array(counts)
    rng = np.random.default_rng(seed)
    values = random_distinct_values(3, 16, rng=rng)  # two held values and the candidate
    est = []
    for s in range(pools):
        o = FLH(eps, m=16, pool_size=h, pool_seed=s)
        support = o.support_from_tally(o.draw_tally(values[:2], n_held, rng=rng), values[2:])[0]
        est.append((support - n_held.sum() * o.q) / (o.p - o.q))
    o = FLH(eps, m=16, pool_size=h)
    out = {"measured": np.var(est, ddof=1), "olh_term": o.variance(int(n_held.sum())),
           "pool_term": pool_variance(n_held, h, o.d_prime), "pools": pools}
    out["predicted"] = out["olh_term"] + out["pool_term"]
    out["rel_diff"] = out["measured"] / out["predicted"] - 1
    out["rel_se"] = np.sqrt(2 / (pools - 1))  # of a sample variance (normal draws)
    return {f"check_{key}": value for key, value in out.items()}


# --------------------------------------------------------------------------- cost growth with n
def bench_oracles(bench: pd.DataFrame) -> list[str]:
    """The oracles of ``benchmarks/bench_scale.py``'s CSV: ``"OLH"`` first, then ``"FLH:<h>"`` by pool size."""
    return sorted(bench["oracle"].unique(), key=lambda s: (s != "OLH", int(s.partition(":")[2] or 0)))


def live_costs(oracles: Sequence[str], data: Dataset, folder: Path, *, k: int, query_limit: int,
               seed: int) -> pd.DataFrame:
    """The benchmark's phases measured in this build: privatize, store and aggregate ``data``, per oracle.

    Each protocol (PEM at ε = 2, OLH or FLH of the pool size ``"FLH:<h>"`` names) first privatizes a few users
    (numba compiles), then is timed; one process, so no peak memory (``rss_aggregate_mb`` is NaN).  The stores
    are written under ``folder``.

    Returns
    -------
    pandas.DataFrame
        ``n, oracle, t_privatize_s, t_store_s, t_aggregate_s, rss_aggregate_mb``, one row per oracle.
    """
    rows = []
    for spec in oracles:
        h = int(spec.partition(":")[2] or 0)
        P = PEM(2.0, k, data.m, query_limit=query_limit, oracle="FLH" if h else "OLH", pool_size=h or None)
        plan = P.plan(data.n, rng=seed)
        P.privatize(data.values[:10], plan=plan, users=0, rng=seed)  # compile first
        t0 = time.perf_counter()
        reports = P.privatize(data, plan=plan, rng=seed + 1)
        t1 = time.perf_counter()
        reports.save(folder / f"cost-{h}")
        t2 = time.perf_counter()
        P.aggregate(ProtocolReports.open(folder / f"cost-{h}"), rng=seed)
        rows.append({"n": data.n, "oracle": spec, "t_privatize_s": t1 - t0, "t_store_s": t2 - t1,
                     "t_aggregate_s": time.perf_counter() - t2, "rss_aggregate_mb": np.nan})
    return pd.DataFrame(rows)


def bench_value(bench: pd.DataFrame, n: int, oracle: str, column: str) -> float:
    """``column`` of the benchmark's last row for ``n`` users and ``oracle`` (NaN when it has none)."""
    row = bench[(bench["n"] == n) & (bench["oracle"] == oracle)]
    return float(row[column].iloc[-1]) if len(row) else float("nan")


def bench_table(bench: pd.DataFrame) -> pd.DataFrame:
    """The benchmark as the chapter shows it: aggregation seconds and peak GB per ``n`` (rows) and oracle, OLH first."""
    view = bench.assign(oracle=bench["oracle"].map(oracle_label), **{
        "aggregate s": bench["t_aggregate_s"], "peak GB": bench["rss_aggregate_mb"] / 1024})
    view = view.pivot_table(index="n", columns="oracle", values=["aggregate s", "peak GB"], sort=False)
    view.columns = [f"{oracle}: {what}" for what, oracle in view.columns]  # one header row
    return view[sorted(view.columns, key=lambda c: (c.split(":")[0] != "OLH", c))].round(2)


def _flh_at_top(bench: pd.DataFrame) -> dict[str, int]:
    """FLH oracle -> its pool size, for the FLH oracles measured at the benchmark's largest ``n``."""
    n_top = int(bench["n"].max())
    return {s: int(s.partition(":")[2]) for s in bench_oracles(bench)
            if s != "OLH" and not np.isnan(bench_value(bench, n_top, s, "t_aggregate_s"))}


def bench_findings(bench: pd.DataFrame) -> dict[str, Any]:
    """What the cost section quotes from the benchmark's CSV: the largest ``n``, the growth and the machine's load.

    Returns
    -------
    dict
        At the largest ``n`` (``n_top``): OLH's aggregation time, peak memory, store size, checks' time and F1;
        FLH's aggregation times and F1 per pool size (``flh_top_times``, ``flh_top_f1``: text), its longest
        checks and largest peak memory.  The log-log slope of the aggregation time between the two largest
        ``n`` (OLH's, FLH's largest) with OLH's load averages there, the factor between the smallest and largest
        ``n`` and the largest growth of the peak memory over it, the largest load average and the commits.
    """
    def at(n, spec, column):
        return bench_value(bench, n, spec, column)

    ns = sorted(bench["n"].unique())
    n_top, flh = int(ns[-1]), _flh_at_top(bench)
    slope = {s: np.log(at(ns[-1], s, "t_aggregate_s") / at(ns[-2], s, "t_aggregate_s")) / np.log(ns[-1] / ns[-2])
             for s in ["OLH", *flh]}
    return {"n_top": n_top, "olh_agg_top_s": at(n_top, "OLH", "t_aggregate_s"),
            "olh_agg_top_min": at(n_top, "OLH", "t_aggregate_s") / 60,
            "olh_rss_top_gb": at(n_top, "OLH", "rss_aggregate_mb") / 1024,
            "olh_store_top_gb": at(n_top, "OLH", "store_mb") / 1024,
            "olh_open_top_s": at(n_top, "OLH", "t_open_s"), "olh_f1_top": at(n_top, "OLH", "f1"),
            "flh_open_top_max_s": max(at(n_top, s, "t_open_s") for s in flh),
            "flh_rss_top_gb_max": max(at(n_top, s, "rss_aggregate_mb") for s in flh) / 1024,
            "bench_load_max": float(bench[["load_before", "load_after"]].max().max()),
            "bench_commits": ", ".join(sorted(bench["commit"].astype(str).unique())),
            "flh_top_times": ", ".join(f"{at(n_top, s, 't_aggregate_s'):.0f} s with h = {h}" for s, h in flh.items()),
            "flh_top_f1": ", ".join(f"{at(n_top, s, 'f1'):.2f} with h = {h}" for s, h in flh.items()),
            "olh_slope": slope["OLH"], "flh_slope_max": max(slope[s] for s in flh), "n_second": int(ns[-2]),
            "olh_load_second": max(at(ns[-2], "OLH", "load_before"), at(ns[-2], "OLH", "load_after")),
            "olh_load_top": max(at(n_top, "OLH", "load_before"), at(n_top, "OLH", "load_after")),
            "n_factor": ns[-1] / ns[0], "rss_ratio_max": max(at(ns[-1], s, "rss_aggregate_mb")
                                                             / at(ns[0], s, "rss_aggregate_mb")
                                                             for s in ["OLH", *flh])}


# --------------------------------------------------------------------------- the accuracy price of FLH
def f1_against_olh(price: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean F1 per ε (rows) and series (columns), and every FLH series' F1 minus OLH's.

    ``price`` is :func:`~ldp.experiments.summarize` of the accuracy grid by ``protocol, epsilon``.
    """
    wide = price.pivot(index="epsilon", columns="protocol", values="f1_mean")
    return wide, wide.drop(columns="OLH").sub(wide["OLH"], axis=0)


def pool_share(data: Dataset, eps: float, h: int, *, k: int, query_limit: int) -> float:
    """eq. (eq-flh-pool-variance) over OLH's variance for PEM's last group (whole values) on ``data``.

    The group's true counts are ``data``'s scaled to the group's users under PEM's plan (``rng=0``).
    """
    P = PEM(eps, k, data.m, query_limit=query_limit)
    N = P.plan(data.n, rng=0).sizes()[-1]
    o = FLH(eps, m=data.m, pool_size=h)
    return pool_variance(data.counts * N / data.n, h, o.d_prime) / o.variance(N)


def price_table(wide: pd.DataFrame, gaps: pd.DataFrame, data: Dataset, *, k: int, query_limit: int) -> pd.DataFrame:
    """The accuracy grid as the chapter shows it: mean F1 per ε, FLH's gap to OLH and the pool's share of noise."""
    shares = {f"{c}: pool / OLH variance": [pool_share(data, e, int(c.split("= ")[-1]), k=k, query_limit=query_limit)
                                            for e in wide.index] for c in gaps}
    return wide.assign(**{f"{c} - OLH": gaps[c] for c in gaps}, **shares).round(3)


def pool_sweep_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """The pool-size sweep's runs (one ε): mean and SD of F1, mean NCR and seconds per run, per series."""
    by_pool = summarize(sweep, by=["protocol"], metrics=["f1", "ncr"]).set_index("protocol")
    by_pool["seconds per run"] = sweep.groupby("protocol")["wall_time"].mean()
    return by_pool[["f1_mean", "f1_std", "ncr_mean", "seconds per run"]].round(3)


def price_findings(price: pd.DataFrame, gaps: pd.DataFrame, *, engine: str, n_price: int, repetitions: int,
                   eps_sweep: float) -> dict[str, Any]:
    """What the price section quotes: FLH's largest F1 loss against OLH (where), how often it is within 0.05.

    Returns
    -------
    dict
        ``price_worst_loss``, ``price_worst_eps``, ``price_worst_pool``, ``price_points``, ``price_within`` (points
        within :data:`MAX_F1_LOSS`), ``price_max_sd`` (FLH's largest run-to-run SD of F1), ``engine_words`` (the
        engine in words, :data:`ENGINE_WORDS`) and the settings.
    """
    worst = gaps.min()  # the largest loss of F1 against OLH over the eps grid, per pool size
    return {"n_price": n_price, "repetitions": repetitions, "eps_sweep": eps_sweep,
            "engine_words": ENGINE_WORDS[engine],
            "price_worst_loss": float(-worst.min()), "price_worst_eps": float(gaps[worst.idxmin()].idxmin()),
            "price_worst_pool": worst.idxmin(), "price_points": int(gaps.size),
            "price_within": int((gaps.to_numpy() >= -MAX_F1_LOSS).sum()),
            "price_max_sd": float(price.loc[price["protocol"] != "OLH", "f1_std"].max())}


def recommendation(bench: pd.DataFrame, gaps: pd.DataFrame, *, n_price: int) -> dict[str, Any]:
    """The pool size to use, by a stated rule, with every candidate's numbers.

    The smallest pool size whose aggregation of the benchmark's largest ``n`` took under :data:`MAX_SECONDS`,
    whose F1 there is within :data:`MAX_F1_LOSS` of OLH's, and whose mean F1 at ``n_price`` users stays within
    :data:`MAX_F1_LOSS` of OLH's at every ε of the accuracy grid (``gaps``: :func:`f1_against_olh`).

    Returns
    -------
    dict
        ``recommendation`` (Markdown: the rule, the answer and one line per pool size measured at the largest
        ``n``) and ``h_recommended`` (0 when no pool size meets the rule).
    """
    from IPython.display import Markdown  # the book's notebook layer

    def at(spec, column):
        return bench_value(bench, n_top, spec, column)

    def grid_ok(h):  # within the loss at every eps of the grid (None: not on the grid)
        col = f"FLH, h = {h}"
        return bool((gaps[col] >= -MAX_F1_LOSS).all()) if col in gaps else None

    n_top, pool_of = int(bench["n"].max()), _flh_at_top(bench)
    fast = {h: at(s, "t_aggregate_s") < MAX_SECONDS and at(s, "f1") >= at("OLH", "f1") - MAX_F1_LOSS
            for s, h in pool_of.items()}
    ok = sorted(h for h in fast if fast[h] and grid_ok(h))
    lines = [f"h = {h}: {at(f'FLH:{h}', 't_aggregate_s'):.0f} s and F1 = {at(f'FLH:{h}', 'f1'):.2f} "
             f"at {n_top:,d} users; at {n_price:,d} users "
             + ("not on the grid" if grid_ok(h) is None else
                f"largest F1 loss against OLH {-gaps[f'FLH, h = {h}'].min():.3f}") for h in sorted(pool_of.values())]
    head = ("**Recommendation.** The rule: the smallest pool size whose aggregation of "
            f"{n_top:,d} users took under 60 s in the benchmark, whose F1 there is within 0.05 of OLH's "
            f"(OLH: {at('OLH', 't_aggregate_s') / 60:.0f} min, F1 = {at('OLH', 'f1'):.2f}), and whose "
            f"mean F1 at {n_price:,d} users stays within 0.05 of OLH's at every epsilon of the grid above. ")
    rec = head + (f"It gives **h = {ok[0]}**" if ok else "No pool size meets all three")
    rec += (f" (the package's default is {DEFAULT_POOL_SIZE}). The candidates:\n\n"
            + "\n".join(f"- {line}" for line in lines))
    return {"recommendation": Markdown(rec), "h_recommended": ok[0] if ok else 0}
